package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// GreetAction is what the model sends: its fields are the tool's
// arguments, described by struct tags.
type GreetAction struct {
	Name  string `json:"name" desc:"Who to greet."`
	Style string `json:"style" default:"plain" enum:"plain,loud" desc:"How to greet."`
}

// GreetObservation is what the tool returns; the model sees its content.
type GreetObservation struct {
	event.ObservationBase
}

func init() {
	// Actions and observations are stored in the event log by kind.
	event.RegisterKind[GreetAction]("GreetAction")
	event.RegisterKind[GreetObservation]("GreetObservation")
}

// greet is the executor: typed in, typed out.
func greet(_ context.Context, a *GreetAction) (*GreetObservation, error) {
	text := "Hello, " + a.Name + "."
	if a.Style == "loud" {
		text = strings.ToUpper(text)
	}
	return &GreetObservation{event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}}}, nil
}

// A custom tool is two structs and one function.
func Example() {
	greeter := tool.New("greet", "Greet someone by name.", greet,
		&tool.Options{Annotations: &event.ToolAnnotations{ReadOnlyHint: true}})

	// What the model is shown.
	params, _ := json.Marshal(tool.Parameters(greeter))
	fmt.Println(string(params))

	// A call as the model makes it, repaired, validated and run.
	call, err := tool.PrepareCall([]tool.Tool{greeter}, "greet", `{"summary":"greet Ada","name":"Ada","style":"loud"}`, false)
	if err != nil {
		fmt.Println(err)
		return
	}
	obs, _ := call.Tool.Execute(context.Background(), call.Action)
	fmt.Println(call.Summary, "->", event.TextOf(event.ObservationContent(obs)))

	// A bad call gets an error the model can act on.
	_, err = tool.PrepareCall([]tool.Tool{greeter}, "greet", `{"style":"quiet"}`, false)
	fmt.Println(err)
	// Output:
	// {"properties":{"summary":{"description":"What this action does, in about ten words, e.g. 'Run the unit tests of the parser package'.","type":"string"},"name":{"description":"Who to greet.","type":"string"},"style":{"description":"How to greet.","enum":["plain","loud"],"type":"string"}},"required":["name"],"type":"object"}
	// greet Ada -> HELLO, ADA.
	// Error validating tool 'greet': missing required field "name"
	// field "style": "quiet" is not one of [plain loud]. Parameters provided: ['style']
}

// Typed tools can be run without the agent's repair steps: Parse gives the
// typed action and Run the typed observation.
func ExampleTyped_Parse() {
	greeter := tool.New("greet", "Greet someone by name.", greet, nil)
	a, err := greeter.Parse(json.RawMessage(`{"name":"Grace"}`))
	if err != nil {
		fmt.Println(err)
		return
	}
	obs, _ := greeter.Run(context.Background(), a)
	fmt.Printf("%s %q\n", a.Style, event.TextOf(obs.Content))
	// Output: plain "Hello, Grace."
}

// The registry turns plain-JSON specs into tools, so a tool list can cross
// a process boundary.
func ExampleResolve() {
	tool.Register("greeting", func(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
		var p struct {
			Name string `json:"name"`
		}
		if err := json.Unmarshal(params, &p); err != nil {
			return nil, err
		}
		if p.Name == "" {
			p.Name = "greet"
		}
		return []tool.Tool{tool.New(p.Name, "Greet someone by name.", greet, nil)}, nil
	})
	var spec tool.Spec
	_ = json.Unmarshal([]byte(`{"name":"greeting","params":{"name":"hello"}}`), &spec)
	tools, err := tool.Resolve(tool.Context{WorkingDir: "/workspace"}, spec)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(tools[0].Name(), tools[0].Definition().Kind)
	_, err = tool.Resolve(tool.Context{}, tool.Spec{Name: "nope"})
	fmt.Println(err)
	// Output:
	// hello HelloTool
	// ToolDefinition 'nope' is not registered
}
