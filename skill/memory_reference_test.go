package skill

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/internal/refenv"
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
	// One reference process for every case: importing openhands takes
	// seconds of CPU (a process per case made this the suite's slowest
	// test at load). load_memory reads HOME at each call, so the script sets
	// each case's before its calls.
	type dirs struct {
		Home string `json:"home"`
		Work string `json:"work"`
	}
	var all []dirs
	for _, c := range cases {
		d := dirs{Home: t.TempDir(), Work: t.TempDir()}
		if c.user != "" {
			writeFile(t, filepath.Join(d.Home, ".openhands", "memory", "MEMORY.md"), c.user)
		}
		if c.project != "" {
			writeFile(t, filepath.Join(d.Work, MemoryIndex), c.project)
		}
		all = append(all, d)
	}
	arg, err := json.Marshal(all)
	if err != nil {
		t.Fatal(err)
	}
	// One line of JSON per case and budget: the reference's text, or null.
	script := `import json, os, sys
from openhands.sdk.context.memory import load_memory
os.environ.pop("OH_PERSISTENCE_DIR", None)
for d in json.loads(sys.argv[1]):
    os.environ["HOME"] = d["home"]
    for b in sys.argv[2:]:
        print(json.dumps(load_memory(d["work"], int(b))))`
	args := []string{"-c", script, string(arg)}
	for _, b := range budgets {
		args = append(args, fmt.Sprint(b))
	}
	cmd := exec.CommandContext(t.Context(), py, args...)
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd.Env = refenv.Env(home, "OH_PERSISTENCE_DIR=")
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("reference: %v", err)
	}
	outLines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if len(outLines) != len(cases)*len(budgets) {
		t.Fatalf("reference printed %d lines, want %d", len(outLines), len(cases)*len(budgets))
	}
	for ci, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			d := all[ci]
			got := outLines[ci*len(budgets) : (ci+1)*len(budgets)]
			for i, b := range budgets {
				ours, warns := LoadMemory(d.Work, filepath.Join(d.Home, ".openhands"), b)
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
