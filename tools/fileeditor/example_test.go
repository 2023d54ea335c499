package fileeditor_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tools/fileeditor"
)

// The editor used directly, as the tool runs it for the model.
func Example() {
	dir, _ := os.MkdirTemp("", "fileeditor-example")
	defer os.RemoveAll(dir)
	dir, _ = filepath.EvalSymlinks(dir)

	ed := fileeditor.NewEditor(&fileeditor.Options{WorkingDir: dir})
	defer ed.Close()
	run := func(a fileeditor.Action) {
		obs, err := ed.Execute(context.Background(), &a)
		if err != nil {
			panic(err)
		}
		fmt.Println(strings.ReplaceAll(event.TextOf(obs.Content), dir, "/work"))
	}
	p := filepath.Join(dir, "greet.py")
	text, oldStr, newStr := "def greet():\n    print('hi')\n", "'hi'", "'hello'"
	run(fileeditor.Action{Command: fileeditor.CommandCreate, Path: p, FileText: &text})
	run(fileeditor.Action{Command: fileeditor.CommandStrReplace, Path: p, OldStr: &oldStr, NewStr: &newStr})
	run(fileeditor.Action{Command: fileeditor.CommandStrReplace, Path: p, OldStr: &oldStr, NewStr: &newStr})
	// Output:
	// File created successfully at: /work/greet.py
	// The file /work/greet.py has been edited. Here's the result of running `cat -n` on a snippet of /work/greet.py:
	//      1	def greet():
	//      2	    print('hello')
	// Review the changes and make sure they are as expected. Edit the file again if necessary.
	// No replacement was performed, old_str `'hi'` did not appear verbatim in /work/greet.py.
}
