package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/task"
)

// requestTools returns the names of the tools a Chat Completions request
// offers.
func requestTools(t *testing.T, r llmtest.Request) []string {
	t.Helper()
	var body struct {
		Tools []struct {
			Function struct {
				Name string `json:"name"`
			} `json:"function"`
		} `json:"tools"`
	}
	if err := r.Decode(&body); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range body.Tools {
		names = append(names, tl.Function.Name)
	}
	slices.Sort(names)
	return names
}

// The default agent offers the task tool: the model hands the work to a
// sub-agent, which writes the file, and its answer comes back.
func TestE2EDefaultAgentDelegates(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	file := filepath.Join(e.work, "from-sub-agent.txt")
	e.srv.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_task", "task", map[string]any{
			"description": "write the file", "prompt": "Create " + file + " containing 'hi'."})}},
		// The sub-agent.
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_sub", "file_editor", map[string]any{
			"command": "create", "path": file, "file_text": "hi\n"})}},
		llmtest.Reply{Text: "Created the file."},
		// The parent again.
		finishReply("The sub-agent wrote the file."),
	)
	e.mustRun(0, e.args("Delegate writing the file")...)
	if b, err := os.ReadFile(file); err != nil || string(b) != "hi\n" {
		t.Fatalf("file: %q %v", b, err)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 {
		t.Fatalf("%d requests, want 4", len(reqs))
	}
	if got := requestTools(t, reqs[0]); !slices.Contains(got, "task") {
		t.Errorf("the default agent's tools %v lack task", got)
	}
	if got, want := requestTools(t, reqs[1]), []string{"file_editor", "finish", "task_tracker", "terminal", "think"}; !slices.Equal(got, want) {
		t.Errorf("the sub-agent's tools %v, want %v", got, want)
	}
	_, texts := toolResults(t, reqs[3])
	if len(texts) != 1 || !strings.Contains(texts[0], "Status: completed") || !strings.Contains(texts[0], "Created the file.") {
		t.Errorf("the parent saw %q", texts)
	}
	evs, _ := e.events()
	obs := ofKind[*event.ObservationEvent](evs)
	if len(obs) < 1 {
		t.Fatal("no observation")
	}
	if o, ok := obs[0].Observation.(*task.Observation); !ok || o.TaskID != "task_00000001" {
		t.Errorf("observation %T %+v", obs[0].Observation, obs[0].Observation)
	}
	if dirs, _ := filepath.Glob(filepath.Join(e.dir(), "subagents", "*", "base_state.json")); len(dirs) != 1 {
		t.Errorf("sub-conversation not stored beside the parent: %v", dirs)
	}
}

// --preset gpt5 gives the model apply_patch instead of file_editor.
func TestE2EPresetGPT5(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	e.srv.Add(
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_1", "apply_patch", map[string]any{
			"patch": "*** Begin Patch\n*** Add File: notes.txt\n+patched\n*** End Patch"})}},
		finishReply("Added notes.txt."),
	)
	e.mustRun(0, e.args("--preset", "gpt5", "Add notes.txt")...)
	if b, err := os.ReadFile(filepath.Join(e.work, "notes.txt")); err != nil || string(b) != "patched" {
		t.Errorf("notes.txt: %q %v", b, err)
	}
	if got, want := requestTools(t, e.srv.Requests()[0]), []string{"apply_patch", "finish", "task", "task_tracker", "terminal", "think"}; !slices.Equal(got, want) {
		t.Errorf("tools %v, want %v", got, want)
	}
}

func TestE2EUnknownPreset(t *testing.T) {
	t.Parallel()
	e := newE2E(t)
	r := e.mustRun(2, e.args("--preset", "nope", "hi")...)
	if !strings.Contains(r.stderr, `unknown preset "nope" (known: default, gpt5, gemini, planning)`) {
		t.Errorf("stderr %q", r.stderr)
	}
}
