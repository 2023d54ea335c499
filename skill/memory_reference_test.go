package skill

import (
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/testenv"
)

// LoadMemory gives the text 1.58.2's load_memory gives for the same
// files, at budgets from roomy to below the headers' size, with one tier,
// both, blank files and non-ASCII text.
func TestLoadMemoryMatchesReference(t *testing.T) {
	py := testenv.Reference158Python(t)
	r := rand.New(rand.NewPCG(7, 30))
	lines := func(prefix string, n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%s %d %s\n", prefix, i, strings.Repeat("é", r.IntN(70)))
		}
		return b.String()
	}
	cases := []struct{ name, user, project string }{
		{"both", lines("user fact", 300), lines("project fact", 120)},
		{"user only", lines("user fact", 50), ""},
		{"project only", "", "  \n" + lines("project fact", 80) + "\n\n"},
		{"short user", "one line\n", lines("project fact", 200)},
		{"blank", "\n \n", "\t\n"},
	}
	budgets := []int{6000, 1000, 300, 120, 40}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			home, work := t.TempDir(), t.TempDir()
			t.Setenv("HOME", home)
			t.Setenv("OH_PERSISTENCE_DIR", "")
			if c.user != "" {
				writeFile(t, filepath.Join(home, ".openhands", "memory", "MEMORY.md"), c.user)
			}
			if c.project != "" {
				writeFile(t, filepath.Join(work, MemoryIndex), c.project)
			}
			// One line of JSON per budget: the reference's text, or null.
			script := `import json, sys
from openhands.sdk.context.memory import load_memory
for b in sys.argv[2:]:
    print(json.dumps(load_memory(sys.argv[1], int(b))))`
			args := []string{"-c", script, work}
			for _, b := range budgets {
				args = append(args, fmt.Sprint(b))
			}
			cmd := exec.CommandContext(t.Context(), py, args...)
			cmd.Env = append(cmd.Environ(), "HOME="+home)
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("reference: %v", err)
			}
			got := strings.Split(strings.TrimSpace(string(out)), "\n")
			if len(got) != len(budgets) {
				t.Fatalf("reference printed %d lines", len(got))
			}
			for i, b := range budgets {
				ours, warns := LoadMemory(work, filepath.Join(home, ".openhands"), b)
				if len(warns) != 0 {
					t.Fatal(warns)
				}
				want := "null"
				if ours != "" {
					want = jsonString(t, ours)
				}
				if got[i] != want {
					t.Errorf("budget %d: reference %.300s\nours      %.300s", b, got[i], want)
				}
			}
		})
	}
}

// jsonString encodes s as Python's json.dumps does (ASCII only).
func jsonString(t *testing.T, s string) string {
	t.Helper()
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"' || r == '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		case r < 0x20 || r > 0x7e:
			if r > 0xffff {
				t.Fatalf("no surrogate pairs here: %q", r)
			}
			fmt.Fprintf(&b, `\u%04x`, r)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}
