package filewalk_test

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/tools/glob/filewalk"
)

func ExampleWalk() {
	root, _ := os.MkdirTemp("", "filewalk-example")
	defer os.RemoveAll(root)
	for _, f := range []string{"main.go", "docs/guide.md", ".env", "build/out.go", "debug.log"} {
		p := filepath.Join(root, f)
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("x\n"), 0o644)
	}
	os.Mkdir(filepath.Join(root, ".git"), 0o755)
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("build/\n*.log\n"), 0o644)

	// Every file rg would search: hidden and ignored ones are left out.
	filewalk.Walk(context.Background(), root, nil, func(_, rel string, _ fs.DirEntry) error {
		fmt.Println(rel)
		return nil
	})
	// An override glob, as rg -g: a matching name beats the ignore rules.
	over, _ := filewalk.ParseOverrides("*.log")
	filewalk.Walk(context.Background(), root, &filewalk.Options{Overrides: over}, func(_, rel string, _ fs.DirEntry) error {
		fmt.Println("override:", rel)
		return nil
	})
	// Output:
	// docs/guide.md
	// main.go
	// override: debug.log
}
