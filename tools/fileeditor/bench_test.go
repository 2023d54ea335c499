package fileeditor

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchFile writes a source-like file of about size bytes with one line
// holding "needle" in the middle.
func benchFile(b *testing.B, size int) (*Editor, string) {
	b.Helper()
	dir := b.TempDir()
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		if sb.Len() >= size/2 && !strings.Contains(sb.String()[size/2-100:], "needle") {
			sb.WriteString("\tx := needle // the line to edit\n")
		}
		fmt.Fprintf(&sb, "\tfmt.Println(\"line %d of a file that is being edited\")\n", i)
	}
	p := filepath.Join(dir, "big.go")
	if err := os.WriteFile(p, []byte(sb.String()), 0o644); err != nil {
		b.Fatal(err)
	}
	ed := NewEditor(&Options{WorkingDir: dir})
	b.Cleanup(func() { ed.Close() })
	return ed, p
}

func benchStrReplace(b *testing.B, size int) {
	ed, p := benchFile(b, size)
	words := [2]string{"needle", "NEEDLE"}
	ctx := context.Background()
	b.SetBytes(int64(size))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		obs, err := ed.Execute(ctx, &Action{Command: CommandStrReplace, Path: p, OldStr: &words[i%2], NewStr: &words[(i+1)%2]})
		if err != nil || obs.IsError {
			b.Fatalf("%v %v", err, obs.Content)
		}
	}
}

// BenchmarkStrReplace measures one str_replace (read, match, atomic write
// with fsync, history entry) on files of 10 KB and 1 MB.
func BenchmarkStrReplace(b *testing.B) {
	for _, size := range []int{10 << 10, 1 << 20} {
		b.Run(fmt.Sprintf("%dKB", size>>10), func(b *testing.B) { benchStrReplace(b, size) })
	}
}

// BenchmarkView measures viewing a 1 MB file whole (clipped output) and a
// 50-line range of it.
func BenchmarkView(b *testing.B) {
	ed, p := benchFile(b, 1<<20)
	ctx := context.Background()
	for name, vr := range map[string][]int{"whole": nil, "range": {9000, 9050}} {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(1 << 20)
			for b.Loop() {
				obs, err := ed.Execute(ctx, &Action{Command: CommandView, Path: p, ViewRange: vr})
				if err != nil || obs.IsError {
					b.Fatalf("%v %v", err, obs.Content)
				}
			}
		})
	}
}
