package skill

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestKeepTail(t *testing.T) {
	long := strings.Repeat("a", 40)
	for _, c := range []struct {
		body string
		n    int
		want string
	}{
		{"a\nb\nc", 5, "a\nb\nc"},
		{long + "\nbb\ncc", len(memoryCut) + 6, memoryCut + "\nbb\ncc"},
		{long + "\nbb\ncc", len(memoryCut) + 5, memoryCut + "\ncc"},
		{long + "\nbb\ncc", 3, memoryCut},
		{"é" + long + "\nüü", len(memoryCut) + 3, memoryCut + "\nüü"},
	} {
		if got := keepTail(c.body, c.n); got != c.want {
			t.Errorf("keepTail(%q, %d) = %q, want %q", c.body, c.n, got, c.want)
		}
	}
}

// Two long tiers split the budget evenly.
func TestLoadMemoryEvenSplit(t *testing.T) {
	work, user := t.TempDir(), t.TempDir()
	t.Setenv("OH_PERSISTENCE_DIR", "")
	long := strings.Repeat("0123456789\n", 100)
	writeFile(t, user+"/memory/MEMORY.md", long+"U")
	writeFile(t, work+"/"+MemoryIndex, long+"P")
	got, warns := LoadMemory(work, user, 400)
	if len(warns) != 0 {
		t.Fatal(warns)
	}
	parts := strings.Split(got, "\n\n")
	if len(parts) != 2 || len(got) > 400 || len(got) < 370 {
		t.Fatalf("%d characters: %q", len(got), got)
	}
	if d := len(parts[0]) - len("# User memory (~/.openhands/memory/MEMORY.md)") - (len(parts[1]) - len("# Project memory (.openhands/memory/MEMORY.md)")); d < -11 || d > 11 {
		t.Fatalf("uneven split: %q", parts)
	}
	if !strings.HasSuffix(parts[0], "\nU") || !strings.HasSuffix(parts[1], "\nP") {
		t.Fatalf("tails lost: %q", parts)
	}
}

func writeFile(t *testing.T, path, body string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
}
