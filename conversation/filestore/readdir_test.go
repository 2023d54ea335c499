//go:build unix

package filestore

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestReadDirNames(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 3000 { // more than one getdents call's worth
		name := fmt.Sprintf("event-%05d-%08x-0000-4000-8000-%012d.json", i, i, i)
		if err := os.WriteFile(filepath.Join(dir, name), nil, 0o644); err != nil {
			t.Fatal(err)
		}
		want = append(want, name)
	}
	want = append(want, ".hidden", "x")
	os.WriteFile(filepath.Join(dir, ".hidden"), nil, 0o644)
	os.Mkdir(filepath.Join(dir, "x"), 0o755)
	got, err := readDirNames(dir)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d names, want %d", len(got), len(want))
	}
}
