package fileeditor_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/fileeditor"
)

// TestPreviewAction: what an edit would change, read from the file as it
// is now, before the edit runs.
func TestPreviewAction(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("one\ntwo\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s := func(v string) *string { return &v }
	line := 1
	for _, tc := range []struct {
		name string
		a    fileeditor.Action
		want *tool.Edit
	}{
		{"new file, relative path", fileeditor.Action{Command: "create", Path: "b.txt", FileText: s("hi\n")},
			&tool.Edit{Path: filepath.Join(dir, "b.txt"), New: "hi\n", Created: true}},
		{"create over a file", fileeditor.Action{Command: "create", Path: filepath.Join(dir, "a.txt"), FileText: s("x\n")},
			&tool.Edit{Path: filepath.Join(dir, "a.txt"), Old: "one\ntwo\n", New: "x\n"}},
		{"str_replace", fileeditor.Action{Command: "str_replace", Path: "a.txt", OldStr: s("two"), NewStr: s("2")},
			&tool.Edit{Path: filepath.Join(dir, "a.txt"), Old: "one\ntwo\n", New: "one\n2\n"}},
		{"str_replace that will fail", fileeditor.Action{Command: "str_replace", Path: "a.txt", OldStr: s("three"), NewStr: s("3")},
			&tool.Edit{Path: filepath.Join(dir, "a.txt"), Old: "three", New: "3", Note: "old_str is not found once in the file as it is now"}},
		{"insert", fileeditor.Action{Command: "insert", Path: "a.txt", InsertLine: &line, NewStr: s("one and a half")},
			&tool.Edit{Path: filepath.Join(dir, "a.txt"), Old: "one\ntwo\n", New: "one\none and a half\ntwo\n"}},
		{"view", fileeditor.Action{Command: "view", Path: "a.txt"}, nil},
	} {
		got := tc.a.PreviewAction(dir)
		if (got == nil) != (tc.want == nil) || got != nil && *got != *tc.want {
			t.Errorf("%s: %+v, want %+v", tc.name, got, tc.want)
		}
	}
}
