package tool_test

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
)

// editAction mirrors the shape of file_editor's arguments.
type editAction struct {
	Command    string  `json:"command" desc:"The command." enum:"view,create,str_replace,insert,undo_edit"`
	Path       string  `json:"path" desc:"Absolute path."`
	FileText   *string `json:"file_text,omitempty" desc:"Content for create."`
	InsertLine *int    `json:"insert_line,omitempty" desc:"Insert after this line."`
	ViewRange  []int   `json:"view_range,omitempty" desc:"[start, end]."`
	Timeout    float64 `json:"timeout" optional:"true"`
	Recursive  bool    `json:"recursive" default:"true"`
}

type taskItem struct {
	Title  string `json:"title" desc:"A brief title."`
	Notes  string `json:"notes" default:"" desc:"Details."`
	Status string `json:"status" default:"todo" enum:"todo,in_progress,done"`
}

// planAction mirrors task_tracker's: nothing required, a list of structs.
type planAction struct {
	Command  string     `json:"command" default:"view" enum:"view,plan"`
	TaskList []taskItem `json:"task_list" optional:"true" desc:"The full task list."`
}

var _ = misc{hidden: ""}

type embedded struct {
	Inner string `json:"inner"`
}

type misc struct {
	embedded
	Tags    []string          `json:"tags,omitempty" enum:"a,b"`
	Env     map[string]string `json:"env,omitzero"`
	Any     any               `json:"any,omitempty"`
	Small   uint8             `json:"small,omitempty"`
	Skipped string            `json:"-"`
	hidden  string            // unexported: not an argument
	Self    *misc             `json:"self,omitempty"`
}

type editObs struct{ event.ObservationBase }

func init() {
	event.RegisterKind[editAction]("TestEditAction")
	event.RegisterKind[planAction]("TestPlanAction")
	event.RegisterKind[editObs]("TestEditObservation")
}

func TestSchemaFor(t *testing.T) {
	for name, s := range map[string]map[string]any{
		"edit": tool.SchemaFor[editAction](),
		"plan": tool.SchemaFor[planAction](),
		"misc": tool.SchemaFor[misc](),
	} {
		data, err := event.MarshalJSON(s)
		if err != nil {
			t.Fatal(err)
		}
		tooltest.GoldenJSON(t, "schema_"+name+".json", data)
	}
	if _, ok := tool.SchemaFor[planAction]()["required"]; ok {
		t.Error(`plan schema has a "required" key though nothing is required`)
	}
	got := tool.RequiredOf(tool.SchemaFor[editAction]())
	if strings.Join(got, ",") != "command,path" {
		t.Errorf("required = %v, want [command path]", got)
	}
}

func TestSchemaForIsACopy(t *testing.T) {
	s := tool.SchemaFor[editAction]()
	tool.PropertiesOf(s)[0].Schema["description"] = "changed"
	if d := tool.PropertiesOf(tool.SchemaFor[editAction]())[0].Schema["description"]; d != "The command." {
		t.Errorf("cached schema changed through a returned copy: %v", d)
	}
}

func TestSchemaForPanicsOnBadTypes(t *testing.T) {
	type badDefault struct {
		N int `json:"n" default:"many"`
	}
	type badEnum struct {
		N int `json:"n" enum:"1,2"`
	}
	type badType struct {
		C chan int `json:"c"`
	}
	for name, f := range map[string]func(){
		"default":   func() { tool.SchemaFor[badDefault]() },
		"enum":      func() { tool.SchemaFor[badEnum]() },
		"chan":      func() { tool.SchemaFor[badType]() },
		"nonstruct": func() { tool.SchemaFor[int]() },
	} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("%s: SchemaFor did not panic", name)
				}
			}()
			f()
		}()
	}
}

func TestDecodeSchemaKeepsOrder(t *testing.T) {
	in := `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"object","properties":{"y":{"type":"integer"},"b":{"type":"boolean"}}}},"required":["zeta"]}`
	s, err := tool.DecodeSchema([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	out, err := event.MarshalJSON(s)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"properties":{"zeta":{"type":"string"},"alpha":{"properties":{"y":{"type":"integer"},"b":{"type":"boolean"}},"type":"object"}},"required":["zeta"],"type":"object"}`
	if string(out) != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	if err := tool.Validate(s, []byte(`{"zeta":"z","alpha":{"y":1.5}}`)); err == nil || !strings.Contains(err.Error(), `field "alpha.y": expected integer, got number 1.5`) {
		t.Errorf("nested validation error = %v", err)
	}
	if _, err := tool.DecodeSchema([]byte(`[1]`)); err == nil {
		t.Error("DecodeSchema accepted an array")
	}
}

func TestValidate(t *testing.T) {
	edit := tool.SchemaFor[editAction]()
	plan := tool.SchemaFor[planAction]()
	tests := []struct {
		schema map[string]any
		args   string
		want   []string // substrings of the error; none means valid
	}{
		{edit, `{"command":"view","path":"/x"}`, nil},
		{edit, `{"command":"view","path":"/x","file_text":null}`, nil},
		{edit, `{"command":"view","path":"/x","insert_line":3.0}`, nil},
		{edit, `{"command":"view"}`, []string{`missing required field "path"`}},
		{edit, `{"command":"view","path":null}`, []string{`missing required field "path"`}},
		{edit, `{"command":"foo","path":"/x"}`, []string{`field "command": "foo" is not one of [view create str_replace insert undo_edit]`}},
		{edit, `{"command":"view","path":"/x","timeout":"soon"}`, []string{`field "timeout": expected number, got string "soon"`}},
		{edit, `{"command":"view","path":"/x","insert_line":1.5}`, []string{`field "insert_line": expected integer, got number 1.5`}},
		{edit, `{"command":"view","path":"/x","view_range":[1,"2"]}`, []string{`field "view_range[1]": expected integer, got string "2"`}},
		{edit, `{"command":"view","path":"/x","x":1}`, []string{`unknown field "x" (known fields: command, path, file_text, insert_line, view_range, timeout, recursive)`}},
		{edit, `{"path":7,"y":true}`, []string{`missing required field "command"`, `field "path": expected string, got number 7`, `unknown field "y"`}},
		{edit, `[]`, []string{`arguments must be a JSON object, got array`}},
		{edit, `"x"`, []string{`arguments must be a JSON object, got string "x"`}},
		{edit, `{"command":`, []string{`arguments are not valid JSON`}},
		{edit, `{} {}`, []string{`trailing data`}},
		{plan, ``, nil},
		{plan, `{}`, nil},
		{plan, `{"command":"plan","task_list":[{"title":"a"},{"title":"b","status":"doing"}]}`, []string{`field "task_list[1].status": "doing" is not one of [todo in_progress done]`}},
		{plan, `{"task_list":[{"notes":"n"}]}`, []string{`missing required field "task_list[0].title"`}},
		{plan, `{"task_list":[{"title":"t","prio":1}]}`, []string{`unknown field "task_list[0].prio"`}},
		{plan, `{"task_list":"[]"}`, []string{`field "task_list": expected array, got string "[]"`}},
	}
	for _, tt := range tests {
		err := tool.Validate(tt.schema, []byte(tt.args))
		if len(tt.want) == 0 {
			if err != nil {
				t.Errorf("Validate(%s) = %v, want nil", tt.args, err)
			}
			continue
		}
		if err == nil {
			t.Errorf("Validate(%s) = nil, want %q", tt.args, tt.want)
			continue
		}
		for _, w := range tt.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate(%s) = %q, want it to contain %q", tt.args, err, w)
			}
		}
		var fe *tool.FieldError
		if !errors.As(err, &fe) {
			t.Errorf("Validate(%s) error %T is not a *FieldError", tt.args, err)
		}
	}
}

type noArgs struct{}

func init() { event.RegisterKind[noArgs]("TestNoArgsAction") }

func TestNoArguments(t *testing.T) {
	tl := tool.New("no_args", "d", func(context.Context, *noArgs) (*editObs, error) { return &editObs{}, nil }, nil)
	if b, _ := event.MarshalJSON(tl.InputSchema()); string(b) != `{"properties":{},"type":"object"}` {
		t.Errorf("schema = %s", b)
	}
	for _, args := range []string{``, `{}`, `{"x":null}`} {
		if _, err := tl.ParseAction(json.RawMessage(args)); err != nil {
			t.Errorf("ParseAction(%s): %v", args, err)
		}
	}
	if _, err := tl.ParseAction(json.RawMessage(`{"x":1}`)); err == nil || err.Error() != `unknown field "x" (no fields are accepted)` {
		t.Errorf("unknown field error = %v", err)
	}
}

func TestValidateOpenObjects(t *testing.T) {
	s, err := tool.DecodeSchema([]byte(`{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := tool.Validate(s, []byte(`{"a":"x","b":1}`)); err != nil {
		t.Errorf("open object rejected an extra field: %v", err)
	}
	s, _ = tool.DecodeSchema([]byte(`{"type":"object","properties":{"no":false,"yes":true}}`))
	if err := tool.Validate(s, []byte(`{"yes":[1]}`)); err != nil {
		t.Errorf("true schema rejected a value: %v", err)
	}
	if err := tool.Validate(s, []byte(`{"no":1}`)); err == nil || !strings.Contains(err.Error(), `field "no": this value is not allowed`) {
		t.Errorf("false schema: %v", err)
	}
	s, _ = tool.DecodeSchema([]byte(`{"type":"object","additionalProperties":{"type":"integer"}}`))
	if err := tool.Validate(s, []byte(`{"b":"x"}`)); err == nil || !strings.Contains(err.Error(), `field "b": expected integer`) {
		t.Errorf("additionalProperties schema not applied: %v", err)
	}
	s, _ = tool.DecodeSchema([]byte(`{"type":"object","properties":{"v":{"anyOf":[{"type":"string"},{"type":"null"}]},"n":{"type":["integer","null"]}}}`))
	if err := tool.Validate(s, []byte(`{"v":"x","n":2}`)); err != nil {
		t.Errorf("anyOf / type list: %v", err)
	}
	if err := tool.Validate(s, []byte(`{"v":1}`)); err == nil {
		t.Error("anyOf accepted a number")
	}
}

func TestParseActionDefaultsAndTypes(t *testing.T) {
	tl := tool.New("plan_test", "d", func(_ context.Context, a *planAction) (*editObs, error) { return &editObs{}, nil }, nil)
	a, err := tl.Parse(json.RawMessage(`{"task_list":[{"title":"t"},{"title":"u","status":"done","notes":null}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if a.Command != "view" || a.TaskList[0].Status != "todo" || a.TaskList[1].Status != "done" {
		t.Errorf("defaults not applied: %+v", a)
	}
	data, err := event.MarshalKinded(a)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"command":"view","task_list":[{"title":"t","notes":"","status":"todo"},{"title":"u","notes":"","status":"done"}],"kind":"TestPlanAction"}`
	if string(data) != want {
		t.Errorf("action JSON\n got %s\nwant %s", data, want)
	}

	et := tool.New("edit_test", "d", func(_ context.Context, a *editAction) (*editObs, error) { return &editObs{}, nil }, nil)
	e, err := et.Parse(json.RawMessage(`{"command":"insert","path":"/a","insert_line":3.0,"view_range":[1,-1]}`))
	if err != nil {
		t.Fatal(err)
	}
	if e.InsertLine == nil || *e.InsertLine != 3 || !e.Recursive || len(e.ViewRange) != 2 {
		t.Errorf("parsed %+v", e)
	}
	if _, err := et.Parse(json.RawMessage(`{"command":"view","path":"/a","insert_line":1e40}`)); err == nil {
		t.Error("accepted an integer out of range")
	}
}

// mcpArgs is an argument struct as written for the MCP Go SDK or adk-go,
// described with jsonschema tags.
type mcpArgs struct {
	Query string   `json:"query" jsonschema:"the search query"`
	Limit int      `json:"limit,omitempty" jsonschema:"at most this many results"`
	Tags  []string `json:"tags,omitempty"`
	Both  string   `json:"both,omitempty" desc:"from desc" jsonschema:"from jsonschema"`
}

// descArgs is mcpArgs in this package's own tags.
type descArgs struct {
	Query string   `json:"query" desc:"the search query"`
	Limit int      `json:"limit,omitempty" desc:"at most this many results"`
	Tags  []string `json:"tags,omitempty"`
	Both  string   `json:"both,omitempty" desc:"from desc"`
}

// TestSchemaForJSONSchemaTags: a jsonschema tag describes an argument as
// desc does.
func TestSchemaForJSONSchemaTags(t *testing.T) {
	got, _ := event.MarshalJSON(tool.SchemaFor[mcpArgs]())
	want, _ := event.MarshalJSON(tool.SchemaFor[descArgs]())
	if string(got) != string(want) || !strings.Contains(string(got), `"description":"the search query"`) {
		t.Errorf("schema with jsonschema tags\n got %s\nwant %s", got, want)
	}
	// jsonschema-go, which the MCP Go SDK and adk-go use, reads the same
	// descriptions and required arguments from the struct.
	theirs, err := jsonschema.For[mcpArgs](nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range tool.PropertiesOf(tool.SchemaFor[mcpArgs]()) {
		if p.Name == "both" {
			continue // desc wins over jsonschema here, on purpose
		}
		d, _ := p.Schema["description"].(string)
		if td := theirs.Properties[p.Name].Description; d != td {
			t.Errorf("%s: description %q, jsonschema-go says %q", p.Name, d, td)
		}
	}
	if got, want := tool.RequiredOf(tool.SchemaFor[mcpArgs]()), theirs.Required; !slices.Equal(got, want) {
		t.Errorf("required = %v, jsonschema-go says %v", got, want)
	}
}

// hiddenArgs has a field on the wire that the model is not told of.
type hiddenArgs struct {
	Query string `json:"query"`
	Limit *int   `json:"limit" hidden:"true"`
}

func init() { event.RegisterKind[hiddenArgs]("TestHiddenAction") }

// TestSchemaForHidden: a hidden field is left out of the schema and refused
// from the model, but written with the action.
func TestSchemaForHidden(t *testing.T) {
	tl := tool.New("hidden_test", "d", func(context.Context, *hiddenArgs) (*editObs, error) { return &editObs{}, nil }, nil)
	if b, _ := event.MarshalJSON(tl.InputSchema()); string(b) != `{"properties":{"query":{"type":"string"}},"required":["query"],"type":"object"}` {
		t.Errorf("schema = %s", b)
	}
	if _, err := tl.ParseAction(json.RawMessage(`{"query":"q","limit":3}`)); err == nil || !strings.Contains(err.Error(), `unknown field "limit"`) {
		t.Errorf("hidden field from the model: %v", err)
	}
	b, err := event.MarshalKinded(&hiddenArgs{Query: "q", Limit: new(3)})
	if want := `{"query":"q","limit":3,"kind":"TestHiddenAction"}`; err != nil || string(b) != want {
		t.Errorf("action JSON %s, %v; want %s", b, err, want)
	}
}
