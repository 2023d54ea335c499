package fileeditor

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// FuzzDecodeEncode checks that every text file survives decoding and
// encoding unchanged, byte for byte, whatever its encoding and endings.
func FuzzDecodeEncode(f *testing.F) {
	for _, s := range []string{"", "a\nb", "a\r\nb\r\n", "\xEF\xBB\xBFx\r\n", "caf\xE9\n", "\r\r\n\n", "\xEF\xBB\xBF\xE9", "a\rb\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if isBinary(b) {
			return
		}
		tf := decode(b)
		out, err := tf.encode(tf.text)
		if err != nil || !bytes.Equal(out, b) {
			t.Fatalf("round trip of %q: %q, %v", b, out, err)
		}
	})
}

// FuzzEdit runs str_replace, insert and undo on arbitrary files and
// arguments: no panic, a failed edit changes nothing, a CRLF file stays
// CRLF, a BOM stays, insert keeps a missing final newline missing, and
// undo restores the exact bytes.
func FuzzEdit(f *testing.F) {
	f.Add([]byte("a\r\nb\r\n"), "a\nb", "x\ny", 1, "z\n")
	f.Add([]byte("\xEF\xBB\xBFone\ntwo"), "two", "2\n", 2, "three")
	f.Add([]byte("caf\xE9\n"), "caf", "th\xC3\xA9", 0, "\u20ac")
	f.Add([]byte(""), "", "x", 0, "")
	dir := f.TempDir()
	ed := NewEditor(&Options{WorkingDir: dir})
	defer ed.Close()
	p := filepath.Join(dir, "f.txt")
	f.Fuzz(func(t *testing.T, content []byte, oldStr, newStr string, line int, ins string) {
		if err := os.WriteFile(p, content, 0o644); err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		check := func(before []byte, obs *Observation, keepsFinal bool) {
			after, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if obs.IsError {
				if !bytes.Equal(after, before) {
					t.Fatalf("failed edit changed the file: %q -> %q (%v)", before, after, obs.Content)
				}
				return
			}
			old, now := decode(before), decode(after)
			if old.crlf && strings.Count(string(after), "\n") != strings.Count(string(after), "\r\n") {
				t.Fatalf("CRLF lost: %q -> %q", before, after)
			}
			if old.bom != now.bom && !old.latin1 {
				t.Fatalf("BOM changed: %q -> %q", before, after)
			}
			if keepsFinal && len(before) > 0 && !bytes.HasSuffix(before, []byte("\n")) && bytes.HasSuffix(after, []byte("\n")) {
				t.Fatalf("final newline added: %q -> %q", before, after)
			}
			u, err := ed.Execute(ctx, &Action{Command: CommandUndoEdit, Path: p})
			if err != nil || u.IsError {
				t.Fatalf("undo: %v %v", err, u.Content)
			}
			if restored, _ := os.ReadFile(p); !bytes.Equal(restored, before) {
				t.Fatalf("undo restored %q, want %q", restored, before)
			}
		}
		obs, err := ed.Execute(ctx, &Action{Command: CommandStrReplace, Path: p, OldStr: &oldStr, NewStr: &newStr})
		if err != nil {
			t.Fatal(err)
		}
		check(content, obs, false) // new_str may end the file with a newline
		obs, err = ed.Execute(ctx, &Action{Command: CommandInsert, Path: p, InsertLine: &line, NewStr: &ins})
		if err != nil {
			t.Fatal(err)
		}
		// An empty last inserted line at the end of a file without a final
		// newline can only be written as a final newline.
		insLines := strings.Split(strings.TrimSuffix(ins, "\n"), "\n")
		check(content, obs, insLines[len(insLines)-1] != "")
		if _, err := ed.Execute(ctx, &Action{Command: CommandView, Path: p, ViewRange: []int{line, line + 2}}); err != nil {
			t.Fatal(err)
		}
	})
}
