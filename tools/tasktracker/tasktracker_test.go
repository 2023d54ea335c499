package tasktracker_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tool/tooltest"
	"github.com/gohands/gohands/tools/tasktracker"
)

type trackerTool = tool.Typed[tasktracker.Action, *tasktracker.Observation]

// call parses args as the model's arguments and runs the tool.
func call(t *testing.T, tl *trackerTool, args string) *tasktracker.Observation {
	t.Helper()
	a, err := tl.Parse(json.RawMessage(args))
	if err != nil {
		t.Fatalf("Parse(%s): %v", args, err)
	}
	obs, err := tl.Run(context.Background(), a)
	if err != nil {
		t.Fatalf("Run(%s): %v", args, err)
	}
	return obs
}

func text(o *tasktracker.Observation) string { return event.TextOf(o.Content) }

// plan3 is the plan the reference fixture testdata/reference_TASKS.json was
// written from.
const plan3 = `{"command":"plan","task_list":[{"title":"Write tests"},{"title":"Ship <it> & \"go\"","notes":"naïve — 🚀","status":"in_progress"},{"title":"done one","status":"done"}]}`

var tasks3 = []tasktracker.TaskItem{
	{Title: "Write tests", Status: "todo"},
	{Title: `Ship <it> & "go"`, Notes: "naïve — 🚀", Status: "in_progress"},
	{Title: "done one", Status: "done"},
}

func TestPlanAndView(t *testing.T) {
	tl := tasktracker.New(nil)
	obs := call(t, tl, `{}`)
	if obs.IsError || obs.Command != "view" || len(obs.TaskList) != 0 || !strings.Contains(text(obs), "The task list is empty") {
		t.Fatalf("initial view: %+v %q", obs, text(obs))
	}
	obs = call(t, tl, plan3)
	if obs.IsError || obs.Command != "plan" {
		t.Fatalf("plan: %q", text(obs))
	}
	if want := "Task list updated: 3 tasks: 1 done, 1 in progress, 1 to do."; text(obs) != want {
		t.Errorf("plan text = %q, want %q", text(obs), want)
	}
	if diff := cmp.Diff(tasks3, []tasktracker.TaskItem(obs.TaskList)); diff != "" {
		t.Errorf("plan task_list (-want +got):\n%s", diff)
	}
	obs = call(t, tl, `{"command":"view"}`)
	want := "Task list (3 tasks: 1 done, 1 in progress, 1 to do):\n" +
		"1. [ ] Write tests\n" +
		"2. [~] Ship <it> & \"go\"\n" +
		"       naïve — 🚀\n" +
		"3. [x] done one"
	if obs.IsError || text(obs) != want {
		t.Errorf("view text:\n%s\nwant:\n%s", text(obs), want)
	}
	if diff := cmp.Diff(tasks3, []tasktracker.TaskItem(obs.TaskList)); diff != "" {
		t.Errorf("view task_list (-want +got):\n%s", diff)
	}
	// An empty plan clears the list.
	obs = call(t, tl, `{"command":"plan","task_list":[]}`)
	if obs.IsError || len(obs.TaskList) != 0 {
		t.Errorf("empty plan: %q", text(obs))
	}
	if obs = call(t, tl, `{"command":"view"}`); len(obs.TaskList) != 0 {
		t.Errorf("view after empty plan: %v", obs.TaskList)
	}
}

func TestRenderMultilineNotes(t *testing.T) {
	tasks := make([]tasktracker.TaskItem, 10)
	for i := range tasks {
		tasks[i] = tasktracker.TaskItem{Title: fmt.Sprint("t", i+1), Status: "todo"}
	}
	tasks[9].Notes = "line one\nline two"
	got := tasktracker.Render(tasks)
	if want := "10. [ ] t10\n        line one\n        line two"; !strings.HasSuffix(got, want) {
		t.Errorf("Render ends with:\n%s\nwant:\n%s", got[strings.LastIndex(got, "10."):], want)
	}
}

// TestPersistence checks that the list is saved in the reference's exact
// format and that a new tool on the same directory sees it.
func TestPersistence(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "conv") // created on the first plan
	first := tasktracker.New(&tasktracker.Options{Dir: dir})
	if obs := call(t, first, plan3); obs.IsError {
		t.Fatal(text(obs))
	}
	got, err := os.ReadFile(filepath.Join(dir, tasktracker.FileName))
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile(filepath.Join("testdata", "reference_TASKS.json"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("TASKS.json differs from the reference's:\n got %s\nwant %s", got, want)
	}
	second := tasktracker.New(&tasktracker.Options{Dir: dir})
	obs := call(t, second, `{"command":"view"}`)
	if diff := cmp.Diff(tasks3, []tasktracker.TaskItem(obs.TaskList)); diff != "" {
		t.Errorf("new tool's view (-want +got):\n%s", diff)
	}
	// A plan by the second tool is what the first one sees next.
	call(t, second, `{"command":"plan","task_list":[{"title":"only","status":"done"}]}`)
	obs = call(t, first, `{}`)
	if len(obs.TaskList) != 1 || obs.TaskList[0].Title != "only" {
		t.Errorf("first tool sees %v", obs.TaskList)
	}
	// No temporary files are left behind.
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("dir holds %v, want only %s", entries, tasktracker.FileName)
	}
	// Without a directory nothing is shared.
	if obs := call(t, tasktracker.New(nil), `{}`); len(obs.TaskList) != 0 {
		t.Errorf("in-memory tool sees %v", obs.TaskList)
	}
}

// TestReadsReferenceFile checks a TASKS.json written by the reference,
// including one with the defaults left out.
func TestReadsReferenceFile(t *testing.T) {
	dir := t.TempDir()
	data, err := os.ReadFile(filepath.Join("testdata", "reference_TASKS.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, tasktracker.FileName), data, 0o644); err != nil {
		t.Fatal(err)
	}
	obs := call(t, tasktracker.New(&tasktracker.Options{Dir: dir}), `{}`)
	if diff := cmp.Diff(tasks3, []tasktracker.TaskItem(obs.TaskList)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if err := os.WriteFile(filepath.Join(dir, tasktracker.FileName), []byte(`[{"title":"short","extra":1}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	obs = call(t, tasktracker.New(&tasktracker.Options{Dir: dir}), `{}`)
	if want := []tasktracker.TaskItem{{Title: "short", Status: "todo"}}; !cmp.Equal(want, []tasktracker.TaskItem(obs.TaskList)) {
		t.Errorf("got %v, want %v", obs.TaskList, want)
	}
}

func TestBadInput(t *testing.T) {
	dir := t.TempDir()
	tl := tasktracker.New(&tasktracker.Options{Dir: dir})
	call(t, tl, `{"command":"plan","task_list":[{"title":"keep me"}]}`)

	// The schema check names the field before the tool runs.
	for args, want := range map[string]string{
		`{"command":"plan","task_list":[{"title":"a"},{"title":"b","status":"finished"}]}`: `task_list[1].status`,
		`{"command":"plan","task_list":[{"notes":"no title"}]}`:                            `task_list[0]`,
		`{"command":"delete"}`:                                 `command`,
		`{"command":"plan","task_list":"not a list"}`:          `task_list`,
		`{"command":"plan","task_list":[{"title":"a","x":1}]}`: `task_list[0].x`,
	} {
		_, err := tl.ParseAction(json.RawMessage(args))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseAction(%s) error %v, want it to name %s", args, err, want)
		}
	}

	// Called directly, the executor checks too and changes nothing.
	for _, tc := range []struct {
		action tasktracker.Action
		want   string
	}{
		{tasktracker.Action{Command: "plan", TaskList: []tasktracker.TaskItem{{Title: "a"}, {Title: "b", Status: "finished"}}}, `task_list[1].status must be one of todo, in_progress, done; got "finished"`},
		{tasktracker.Action{Command: "plan", TaskList: []tasktracker.TaskItem{{Title: "  "}}}, "task_list[0].title must not be empty"},
		{tasktracker.Action{Command: "delete"}, `unknown command "delete"`},
	} {
		obs, err := tl.Run(context.Background(), &tc.action)
		if err != nil {
			t.Fatal(err)
		}
		if !obs.IsError || !strings.Contains(text(obs), tc.want) {
			t.Errorf("%+v: is_error=%v %q, want %q", tc.action, obs.IsError, text(obs), tc.want)
		}
	}
	if obs := call(t, tl, `{}`); len(obs.TaskList) != 1 || obs.TaskList[0].Title != "keep me" {
		t.Errorf("list changed by bad input: %v", obs.TaskList)
	}
}

func TestCorruptFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, tasktracker.FileName)
	for content, want := range map[string]string{
		`{not json`:                          "cannot read the task list in " + path,
		`[{"title":"a","status":"someday"}]`: `task 1: status must be one of todo, in_progress, done; got "someday"`,
		`{"title":"a"}`:                      "cannot unmarshal object",
	} {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		tl := tasktracker.New(&tasktracker.Options{Dir: dir})
		obs := call(t, tl, `{"command":"view"}`)
		if !obs.IsError || !strings.Contains(text(obs), want) {
			t.Errorf("%s: is_error=%v %q, want %q", content, obs.IsError, text(obs), want)
		}
		// A plan replaces the broken file.
		if obs := call(t, tl, `{"command":"plan","task_list":[{"title":"fresh"}]}`); obs.IsError {
			t.Errorf("plan over a broken file: %q", text(obs))
		}
		if obs := call(t, tl, `{}`); obs.IsError || len(obs.TaskList) != 1 {
			t.Errorf("view after plan: %q", text(obs))
		}
	}
}

func TestSaveFails(t *testing.T) {
	file := filepath.Join(t.TempDir(), "not-a-dir")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	tl := tasktracker.New(&tasktracker.Options{Dir: file})
	obs := call(t, tl, `{"command":"plan","task_list":[{"title":"a"}]}`)
	if !obs.IsError || !strings.Contains(text(obs), "could not be saved, so it was not changed") {
		t.Errorf("is_error=%v %q", obs.IsError, text(obs))
	}
	if obs := call(t, tl, `{}`); !obs.IsError || len(obs.TaskList) != 0 || !strings.Contains(text(obs), "cannot read the task list") {
		t.Errorf("view of a broken dir: is_error=%v %v %q", obs.IsError, obs.TaskList, text(obs))
	}
}

func TestRegistry(t *testing.T) {
	dir := t.TempDir()
	tools, err := tool.Resolve(tool.Context{WorkingDir: "/", ConversationDir: dir}, tool.Spec{Name: "task_tracker"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 1 || tools[0].Name() != "task_tracker" {
		t.Fatalf("resolved %v", tools)
	}
	def := tools[0].Definition()
	if def.Kind != "TaskTrackerTool" || def.ActionType != "TaskTrackerAction" || def.ObservationType != "TaskTrackerObservation" || def.Title != "task_tracker" {
		t.Errorf("definition = %+v", def)
	}
	want := event.ToolAnnotations{IdempotentHint: true}
	if a := tools[0].Annotations(); a == nil || *a != want {
		t.Errorf("annotations = %+v, want %+v", a, want)
	}
	if tool.ReadOnly(tools[0]) {
		t.Error("task_tracker claims to be read-only")
	}
	a, err := tools[0].ParseAction(json.RawMessage(`{"command":"plan","task_list":[{"title":"x"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tools[0].Execute(context.Background(), a); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, tasktracker.FileName)); err != nil {
		t.Errorf("plan through the registry did not save in the conversation dir: %v", err)
	}
	if _, err := tool.Resolve(tool.Context{}, tool.Spec{Name: "task_tracker", Params: event.Map[string, any]{"save_dir": "/x"}}); err == nil || !strings.Contains(err.Error(), `unknown param "save_dir"`) {
		t.Errorf("unknown param: %v", err)
	}
}

func TestSchemaGoldens(t *testing.T) {
	tooltest.Goldens(t, tasktracker.New(nil))
}

func TestJSON(t *testing.T) {
	tl := tasktracker.New(nil)
	parse := func(args string) event.Action {
		a, err := tl.ParseAction(json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		return a
	}
	plan := parse(`{"command":"plan","task_list":[{"title":"Write tests"},{"title":"Ship <it> & \"go\"","notes":"naïve — 🚀","status":"in_progress"}]}`)
	obs := &tasktracker.Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text("Task list has been updated with 1 item(s).")}},
		Command:         "plan",
		TaskList:        event.List[tasktracker.TaskItem]{{Title: "a", Status: "done"}},
	}
	tooltest.GoldenKinded(t, "action.json", plan)
	tooltest.GoldenKinded(t, "observation.json", obs)

	// Byte for byte what the reference writes for the same values (the
	// parsed actions carry the defaults, as the reference's do), and the
	// reference's JSON decodes and re-encodes unchanged.
	for file, v := range map[string]any{
		"reference_action.json":         plan,
		"reference_action_default.json": parse(`{}`),
		"reference_observation.json":    obs,
	} {
		want, err := os.ReadFile(filepath.Join("testdata", file))
		if err != nil {
			t.Fatal(err)
		}
		want = bytes.TrimSpace(want)
		got, err := event.MarshalKinded(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Errorf("%s:\n got %s\nwant %s", file, got, want)
		}
		back, err := event.DecodeKinded[any](want)
		if err != nil {
			t.Fatalf("decoding %s: %v", file, err)
		}
		if again, _ := event.MarshalKinded(back); !bytes.Equal(again, want) {
			t.Errorf("%s does not round-trip: %s", file, again)
		}
	}
}

func Example() {
	tl := tasktracker.New(nil) // in memory; pass a Dir to keep TASKS.json
	ctx := context.Background()
	tl.Run(ctx, &tasktracker.Action{Command: "plan", TaskList: []tasktracker.TaskItem{
		{Title: "Reproduce the bug", Status: "done"},
		{Title: "Fix the parser", Status: "in_progress", Notes: "off-by-one in the lexer"},
		{Title: "Add a regression test"},
	}})
	obs, _ := tl.Run(ctx, &tasktracker.Action{Command: "view"})
	fmt.Println(event.TextOf(obs.Content))
	// Output:
	// Task list (3 tasks: 1 done, 1 in progress, 1 to do):
	// 1. [x] Reproduce the bug
	// 2. [~] Fix the parser
	//        off-by-one in the lexer
	// 3. [ ] Add a regression test
}

// TestReferenceParameters checks that the parameters the model sees have
// the reference's shape: the same names, types, enums and required lists
// (testdata/reference_parameters.json is the reference's schema with the
// descriptions removed; ours are our own).
func TestReferenceParameters(t *testing.T) {
	tooltest.ReferenceParameters(t, tasktracker.New(nil))
}
