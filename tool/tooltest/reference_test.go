package tooltest_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	_ "github.com/gohands/gohands/agent/finish"
	_ "github.com/gohands/gohands/agent/think"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	_ "github.com/gohands/gohands/tools/fileeditor"
	_ "github.com/gohands/gohands/tools/glob"
	_ "github.com/gohands/gohands/tools/grep"
	_ "github.com/gohands/gohands/tools/tasktracker"
	_ "github.com/gohands/gohands/tools/terminal"
)

// TestBuiltinSchemasMatchReference resolves every built-in tool through the
// registry, as a conversation does from JSON specs, and checks that its
// argument schema is the reference's (testdata/reference_schemas.json,
// written by the Python SDK): same argument names in the same order, types,
// enums, items and required lists. Descriptions are our own and not
// compared.
func TestBuiltinSchemasMatchReference(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "reference_schemas.json"))
	if err != nil {
		t.Fatal(err)
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(data, &raw); err != nil {
		t.Fatal(err)
	}
	ctx := tool.Context{WorkingDir: t.TempDir(), ConversationDir: t.TempDir()}
	for name, refJSON := range raw {
		t.Run(name, func(t *testing.T) {
			tools, err := tool.Resolve(ctx, tool.Spec{Name: name})
			if err != nil {
				t.Fatal(err)
			}
			defer tool.CloseAll(tools)
			if len(tools) != 1 || tools[0].Name() != name {
				t.Fatalf("spec %q resolved to %d tools", name, len(tools))
			}
			ref, err := tool.DecodeSchema(refJSON)
			if err != nil {
				t.Fatal(err)
			}
			got, want := shape(tools[0].InputSchema()), shape(ref)
			if !reflect.DeepEqual(got, want) {
				g, _ := event.MarshalJSON(got)
				w, _ := event.MarshalJSON(want)
				t.Errorf("schema differs from the reference's\n got %s\nwant %s", g, w)
			}
		})
	}
}

// shape strips descriptions and turns ordered properties into a list of
// names and shapes, so DeepEqual compares order too.
func shape(s map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range s {
		switch k {
		case "description":
		case "properties":
			var props []any
			for _, p := range tool.PropertiesOf(s) {
				props = append(props, []any{p.Name, shape(p.Schema)})
			}
			out[k] = props
		case "items":
			m, _ := v.(map[string]any)
			out[k] = shape(m)
		case "required", "enum":
			// Both are lists of strings here, stored as []string or []any.
			out[k] = tool.RequiredOf(map[string]any{"required": v})
		default:
			out[k] = v
		}
	}
	return out
}
