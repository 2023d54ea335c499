package fileeditor_test

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/fileeditor"
)

func TestSchemaGoldens(t *testing.T) {
	tl := fileeditor.New(&fileeditor.Options{WorkingDir: "/workspace"})
	defer tl.Close()
	tooltest.Goldens(t, tl)
}

func TestDefinition(t *testing.T) {
	tl := fileeditor.New(&fileeditor.Options{WorkingDir: "/workspace/project"})
	defer tl.Close()
	def := tl.Definition()
	if def.Kind != "FileEditorTool" || def.ActionType != "FileEditorAction" || def.ObservationType != "FileEditorObservation" || def.Title != "file_editor" {
		t.Errorf("definition: %+v", def)
	}
	want := event.ToolAnnotations{Title: "file_editor", DestructiveHint: true}
	if a := tl.Annotations(); a == nil || *a != want {
		t.Errorf("annotations = %+v, want %+v", a, want)
	}
	if !strings.Contains(tl.Description(), "/workspace/project") {
		t.Error("description does not name the working directory")
	}
}

// TestRegistry drives the tool the way a conversation does: from a JSON
// spec through the registry, with the model's JSON arguments.
func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	tools, err := tool.Resolve(tool.Context{WorkingDir: dir}, tool.Spec{Name: "file_editor"})
	if err != nil {
		t.Fatal(err)
	}
	defer tool.CloseAll(tools)
	if len(tools) != 1 || tools[0].Name() != "file_editor" {
		t.Fatalf("resolved %v", tools)
	}
	tl := tools[0]
	p := filepath.Join(dir, "hello.py")
	call := func(args string) event.Observation {
		t.Helper()
		a, err := tl.ParseAction(json.RawMessage(args))
		if err != nil {
			t.Fatalf("ParseAction(%s): %v", args, err)
		}
		obs, err := tl.Execute(context.Background(), a)
		if err != nil {
			t.Fatal(err)
		}
		return obs
	}
	enc := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	call(`{"command":"create","path":` + enc(p) + `,"file_text":"print('hi')\n"}`)
	obs := call(`{"command":"str_replace","path":` + enc(p) + `,"old_str":"hi","new_str":"hello"}`)
	if obs.Obs().IsError {
		t.Fatal(event.TextOf(obs.Obs().Content))
	}
	if b, _ := os.ReadFile(p); string(b) != "print('hello')\n" {
		t.Errorf("file = %q", b)
	}
	// A relative path gets the working-directory hint from the tool context.
	obs = call(`{"command":"view","path":"hello.py"}`)
	if text := event.TextOf(obs.Obs().Content); !obs.Obs().IsError || !strings.Contains(text, "Maybe you meant "+p+"?") {
		t.Errorf("relative path: %q", text)
	}
	// Arguments the schema rejects name the field.
	if _, err := tl.ParseAction(json.RawMessage(`{"command":"delete","path":"/x"}`)); err == nil || !strings.Contains(err.Error(), "command") {
		t.Errorf("bad command accepted or unnamed: %v", err)
	}
	if _, err := tl.ParseAction(json.RawMessage(`{"command":"view"}`)); err == nil || !strings.Contains(err.Error(), "path") {
		t.Errorf("missing path accepted or unnamed: %v", err)
	}

	if _, err := tool.Resolve(tool.Context{}, tool.Spec{Name: "file_editor", Params: event.Map[string, any]{"bogus": 1}}); err == nil {
		t.Error("unknown params accepted")
	}
}

func TestJSONGoldens(t *testing.T) {
	tooltest.GoldenKinded(t, "action.json", &fileeditor.Action{
		Command: "str_replace", Path: "/work/a.py", OldStr: new("x = 1\n"), NewStr: new("x = 2\n"),
	})
	obs := &fileeditor.Observation{Command: "insert", Path: new("/work/a.py"), PrevExist: true, OldContent: new("a\n"), NewContent: new("b\na\n")}
	obs.Content = event.List[event.Content]{event.Text("The file /work/a.py has been edited.")}
	tooltest.GoldenKinded(t, "observation.json", obs)
}

// TestReferenceJSON checks that what the reference writes decodes into our
// types and encodes back byte for byte.
func TestReferenceJSON(t *testing.T) {
	actions, _ := filepath.Glob("testdata/reference_action*.json")
	files, err := filepath.Glob("testdata/reference_observation*.json")
	files = append(files, actions...)
	if err != nil || len(files) < 7 {
		t.Fatalf("reference fixtures: %v %v", files, err)
	}
	for _, file := range files {
		want, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		want = bytes.TrimSpace(want)
		v, err := event.DecodeKinded[any](want)
		if err != nil {
			t.Errorf("%s: %v", file, err)
			continue
		}
		switch v.(type) {
		case *fileeditor.Action, *fileeditor.Observation:
		default:
			t.Errorf("%s decoded as %T", file, v)
		}
		got, err := event.MarshalKinded(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", file, got, want)
		}
	}
	// prev_exist defaults to true when absent, as in the reference; unknown
	// keys are refused as the reference refuses them.
	o, err := event.DecodeKinded[*fileeditor.Observation]([]byte(`{"content":[],"is_error":false,"command":"view","kind":"FileEditorObservation"}`))
	if err != nil || !o.PrevExist {
		t.Errorf("absent prev_exist: %+v %v", o, err)
	}
	if _, err := event.DecodeKinded[*fileeditor.Observation]([]byte(`{"command":"view","bogus":1,"kind":"FileEditorObservation"}`)); err == nil {
		t.Error("unknown key accepted")
	}
}

// TestModelCall runs a call the way models send them, through the tool
// package's repair: the legacy name, no command, view_range as a string.
func TestModelCall(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f.txt")
	if err := os.WriteFile(p, []byte("a\nb\nc\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := fileeditor.New(&fileeditor.Options{WorkingDir: dir})
	defer tl.Close()
	args, _ := json.Marshal(map[string]any{"path": p, "view_range": "[2, 3]", "security_risk": "LOW"})
	call, err := tool.PrepareCall([]tool.Tool{tl}, "str_replace_editor", string(args), false)
	if err != nil {
		t.Fatal(err)
	}
	obs, err := call.Tool.Execute(context.Background(), call.Action)
	if err != nil {
		t.Fatal(err)
	}
	want := "Here's the result of running `cat -n` on " + p + ":\n     2\tb\n     3\tc\n"
	if got := event.TextOf(event.ObservationContent(obs)); got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}
