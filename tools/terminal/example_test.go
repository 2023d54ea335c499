package terminal_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// State such as exported variables carries over between calls.
func ExampleTerminal() {
	term := terminal.New(&terminal.Options{WorkingDir: os.TempDir()})
	defer term.Close()
	ctx := context.Background()
	if _, err := term.Run(ctx, &terminal.Action{Command: "export NAME=gohands"}); err != nil {
		log.Fatal(err)
	}
	o, err := term.Run(ctx, &terminal.Action{Command: `echo "hello from $NAME"; (exit 3)`})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.Text())
	fmt.Println("exit code:", *o.ExitCode)
	// Output:
	// hello from gohands
	// exit code: 3
}

// The tool is made from a plain-JSON spec through the tool registry, as a
// conversation does.
func Example_registry() {
	tools, err := tool.Resolve(tool.Context{WorkingDir: os.TempDir()}, tool.Spec{Name: "terminal"})
	if err != nil {
		log.Fatal(err)
	}
	term := tools[0]
	defer term.(io.Closer).Close()
	a, err := term.ParseAction(json.RawMessage(`{"command": "printf 'a\\nb\\n' | wc -l"}`))
	if err != nil {
		log.Fatal(err)
	}
	o, err := term.Execute(context.Background(), a)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(o.(*terminal.Observation).Text())
	// Output: 2
}
