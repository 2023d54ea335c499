package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestTornFinishObservation: a process killed after a finish action ran,
// while it wrote the action's observation, leaves a torn last event file,
// with the status on disk still running or already finished (the base
// state is written apart from the event files). The next user message is
// answered: the finish action is not run again in its place (issue 35 item
// 6e).
func TestTornFinishObservation(t *testing.T) {
	for _, status := range []string{"running", "finished"} {
		t.Run(status, func(t *testing.T) { testTornFinish(t, status) })
	}
}

func testTornFinish(t *testing.T, status string) {
	dir, work := t.TempDir(), t.TempDir()
	a, _ := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{ID: "f1", Name: agent.FinishToolName, Arguments: `{"message":"all done"}`}}})
	opts := &filestore.Options{WriteThrough: true}
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, opts)})
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	c.SendMessage(ctx, event.UserMessage("finish"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	c.Close()

	// Cut the log back to the moment of the kill: the finish action
	// stored, its observation half written, the status still running.
	cdir := filestore.Dir(dir, id)
	names, _ := filepath.Glob(filepath.Join(cdir, "events", "event-*.json"))
	obs := -1
	for i, name := range names {
		data, _ := os.ReadFile(name)
		if strings.Contains(string(data), `"kind":"ObservationEvent"`) {
			obs = i
			if err := os.WriteFile(name, data[:len(data)/2], 0o644); err != nil {
				t.Fatal(err)
			}
		} else if obs >= 0 {
			os.Remove(name)
		}
	}
	if obs < 0 {
		t.Fatalf("no observation in %v", names)
	}
	os.Remove(filepath.Join(cdir, filestore.IndexFile))
	var base map[string]any
	data, _ := os.ReadFile(filepath.Join(cdir, filestore.BaseStateFile))
	json.Unmarshal(data, &base)
	base["execution_status"] = status
	data, _ = json.Marshal(base)
	os.WriteFile(filepath.Join(cdir, filestore.BaseStateFile), data, 0o644)

	b, p := newAgent(t, llmtest.Reply{Text: "the second answer"})
	c, err = conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, opts), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := c.SendMessage(ctx, event.UserMessage("one more thing")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatalf("run after the torn finish: %v", err)
	}
	if st := c.Status(); st != conversation.StatusFinished {
		t.Errorf("status %s", st)
	}
	reqs := p.Requests()
	if len(reqs) != 1 {
		t.Fatalf("%d model calls after the torn finish, want 1", len(reqs))
	}
	validHistory(t, "after the torn finish", reqs[0].Messages)
	if last := reqs[0].Messages[len(reqs[0].Messages)-1]; last.Role != event.RoleUser || !strings.Contains(event.TextOf(last.Content), "one more thing") {
		t.Errorf("the model was not asked the new message last: %+v", last)
	}
	var kinds []string
	for _, e := range logEvents(t, c) {
		k, _ := event.KindOf(e)
		kinds = append(kinds, k)
	}
	if kinds[len(kinds)-1] != "MessageEvent" && !strings.Contains(strings.Join(kinds, " "), "MessageEvent ConversationStateUpdateEvent") {
		t.Errorf("log %v", kinds)
	}
}
