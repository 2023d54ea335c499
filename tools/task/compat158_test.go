package task_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"

	_ "github.com/gohands/gohands/llm/providers" // the stored agent calls its model over HTTP
)

// Marks in the scripted conversations of TestReference158TaskCalls.
const (
	refTask   = "REF-TASK-9"  // the reference's first user message: delegate
	subTask   = "SUB-COUNT-9" // the prompt of its task call
	subAnswer = "There are 3 files (sub-agent)."
)

// taskModel is the scripted model of TestReference158TaskCalls, answering
// by content so that either side may ask it anything: a sub-agent (its
// first user message holds subTask) finishes with subAnswer; a parent
// whose last message is the user's refTask delegates with a task call to
// the reference's "counter" sub-agent; anything else gets a finish. It
// counts all requests and the sub-agent's, and keeps the messages of the
// requests of the conversation that starts with refTask.
type taskModel struct {
	*llmtest.Server
	mu       sync.Mutex
	all, sub int
	ref      [][]any
}

func newTaskModel(t *testing.T) *taskModel {
	m := &taskModel{}
	m.Server = llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		msgs, _ := r.Body["messages"].([]any)
		var first, last []byte
		for _, x := range msgs {
			b, _ := json.Marshal(x)
			if x, _ := x.(map[string]any); first == nil && x["role"] == "user" {
				first = b
			}
			last = b
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		m.all++
		finish := func(msg string) llmtest.Reply {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"` + msg + `"}`}}}
		}
		switch {
		case bytes.Contains(first, []byte(subTask)):
			m.sub++
			return finish(subAnswer), nil
		case bytes.Contains(first, []byte(refTask)):
			m.ref = append(m.ref, msgs)
			if bytes.Equal(first, last) {
				return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_t1", "task", map[string]any{
					"description": "count files", "prompt": subTask + ": count the files", "subagent_type": "counter"})}}, nil
			}
		}
		return finish("done"), nil
	}, nil)
	return m
}

// counts returns the number of requests, of the sub-agent's among them,
// and the messages of the conversation starting with refTask.
func (m *taskModel) counts() (all, sub int, ref [][]any) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.all, m.sub, slices.Clone(m.ref)
}

// A conversation with sub-agent calls and a critic moves between gohands
// and the reference 1.58.2 on disk, both ways, with one reference process
// (testdata/task158.py) for both:
//
//   - ReferenceReadsGohands: the reference reads a conversation gohands
//     wrote in which the agent delegated a task to a sub-agent and then
//     resumed that task: every event re-dumps to the bytes on disk (so the
//     TaskAction leaves out the optional fields it does not set, as the
//     reference's event files do) and the task calls are read as the
//     reference's task tool types. The reference then resumes the
//     conversation and runs a turn to its finish.
//   - GohandsContinuesReference: gohands loads a whole conversation the
//     reference wrote (a task call run by the reference's sub-agent, a
//     critic with iterative refinement that sent the agent back once),
//     re-reads every event equal to its bytes on disk, and continues it
//     with the stored agent to its finish: the model gets the history the
//     reference last sent it, no action runs again (the sub-agent gets no
//     request), the critic judges the new finish, and the refinement the
//     reference spent is not asked for again.
func TestReference158TaskCalls(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)

	// gohands' conversation, on an in-process scripted model.
	r := newRouter(t, nil)
	base := t.TempDir()
	c, err := conversation.New(ctx, parentAgent(r), t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(base, nil)})
	if err != nil {
		t.Fatal(err)
	}
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"description": "count files", "prompt": "TASK-A: count the files"})}},
			llmtest.Reply{Text: "ok"},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t2", "task", map[string]any{"prompt": "Now list them", "resume": "task_00000001"})}},
			llmtest.Reply{Text: "fine"},
		),
		"TASK-A": scripted(t, llmtest.Reply{Text: "There are 3 files."}, llmtest.Reply{Text: "x, y and z."}),
	}
	runTurn(t, c, "count")
	runTurn(t, c, "list")
	id := c.ID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// The reference writes its conversation, then reads gohands'.
	m := newTaskModel(t)
	refBase, refWork, home := t.TempDir(), t.TempDir(), t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	pctx, cancel := context.WithTimeout(ctx, 10*time.Minute) // a hang guard
	defer cancel()
	cmd := exec.CommandContext(pctx, py, filepath.Join("testdata", "task158.py"), m.URL, refBase, refWork, filestore.Dir(base, id), id)
	cmd.Env = refenv.Env(home)
	out, perr := cmd.CombinedOutput()

	t.Run("ReferenceReadsGohands", func(t *testing.T) {
		read := "ok ['TaskAction', 'TaskObservation', 'TaskAction(resume=task_00000001)', 'TaskObservation']"
		if perr != nil || !bytes.Contains(out, []byte(read)) || !bytes.Contains(out, []byte("resumed finished ['finish']")) {
			t.Fatalf("the reference 1.58.2 does not read gohands' conversation with sub-agent calls: %v\n%s", perr, out)
		}
	})
	t.Run("GohandsContinuesReference", func(t *testing.T) {
		wrote := regexp.MustCompile(`(?m)^wrote ([0-9a-f-]{36}) (\w+)$`).FindSubmatch(out)
		if wrote == nil || string(wrote[2]) != "finished" {
			t.Fatalf("the reference 1.58.2 did not write its conversation to its finish: %v\n%s", perr, out)
		}
		refID := string(wrote[1])
		all, sub, ref := m.counts()
		if sub != 1 || len(ref) != 3 {
			t.Fatalf("the reference's run made %d sub-agent and %d parent requests, want 1 and 3", sub, len(ref))
		}
		c, err := conversation.New(ctx, nil, refWork, &conversation.LocalOptions{ID: refID, Backend: filestore.NewBackend(refBase, nil)})
		if err != nil {
			t.Fatalf("gohands cannot resume the reference's conversation: %v", err)
		}
		defer c.Close()
		s := c.State().Events()
		n := s.Len()
		var read []string
		for i := range n {
			raw, err := s.Raw(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			ev, err := s.Event(ctx, i)
			if err != nil {
				t.Fatalf("event %d: %v", i, err)
			}
			if b, err := event.Marshal(ev); err != nil || !bytes.Equal(b, raw) {
				t.Errorf("event %d re-encodes differently (%v):\n got %s\nwant %s", i, err, b, raw)
			}
			read = append(read, describe(ev))
		}
		want := []string{"SystemPromptEvent", "MessageEvent(user)", "ActionEvent(task)", "ObservationEvent(task)",
			"ActionEvent(finish critic=0)", "ObservationEvent(finish)", "MessageEvent(user)", "ActionEvent(finish critic=0)", "ObservationEvent(finish)"}
		if !slices.Equal(read, want) {
			t.Errorf("gohands reads the reference's conversation as\n%v, want\n%v", read, want)
		}

		if err := c.SendMessage(ctx, event.UserMessage("GOHANDS-NEXT: wrap up")); err != nil {
			t.Fatal(err)
		}
		rctx, cancel := context.WithTimeout(ctx, 2*time.Minute) // a hang guard
		defer cancel()
		if err := c.Run(rctx); err != nil {
			t.Fatal(err)
		}
		var added []string
		for i := n; i < s.Len(); i++ {
			ev, err := s.Event(ctx, i)
			if err != nil {
				t.Fatal(err)
			}
			added = append(added, describe(ev))
		}
		// One model call (the finish): no action of the reference's ran
		// again, and with the reference's refinement spent
		// (iterative_refinement_iteration 1 of 1) the critic's 0 sends
		// the agent back no more.
		want = []string{"MessageEvent(user)", "ActionEvent(finish critic=0)", "ObservationEvent(finish)"}
		all2, sub2, ref2 := m.counts()
		if !slices.Equal(added, want) || all2 != all+1 || sub2 != sub || c.Status() != conversation.StatusFinished {
			t.Fatalf("gohands' continuation: events %v (want %v), %d model requests (want 1), %d to the sub-agent (want 0), status %s",
				added, want, all2-all, sub2-sub, c.Status())
		}
		// The model sees the history the reference last sent it (the
		// same system prompt, the task call and its result, the finish
		// and the critic's follow-up), then what came since. The
		// reference also names the tool of a tool result ("name"), which
		// the chat API does not ask for; gohands leaves it out.
		prev, next := ref[len(ref)-1], ref2[len(ref2)-1]
		if len(next) < len(prev) || !reflect.DeepEqual(unnamed(next[:len(prev)]), unnamed(prev)) {
			p, _ := json.MarshalIndent(prev, "", " ")
			n, _ := json.MarshalIndent(next, "", " ")
			t.Errorf("gohands sends the model another history than the reference did:\n%s\nthe reference's:\n%s", n, p)
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		// The reference's length marker names the new length.
		dir := filestore.Dir(refBase, refID)
		if _, err := os.Stat(filepath.Join(dir, filestore.EventsDir, filestore.LengthMarkerPrefix+strconv.Itoa(n+len(added))+filestore.LengthMarkerSuffix)); err != nil {
			t.Errorf("no length marker of %d events: %v", n+len(added), err)
		}
	})
}

// unnamed returns chat messages without the "name" of tool results.
func unnamed(msgs []any) []any {
	out := make([]any, len(msgs))
	for i, x := range msgs {
		if m, ok := x.(map[string]any); ok && m["role"] == "tool" {
			m = maps.Clone(m)
			delete(m, "name")
			x = m
		}
		out[i] = x
	}
	return out
}

// describe names an event for the test's comparisons: its kind, the tool
// of an action (with the critic's score, if any) or observation, the
// source of a message.
func describe(e event.Event) string {
	k, _ := event.KindOf(e)
	switch e := e.(type) {
	case *event.ActionEvent:
		if e.CriticResult != nil {
			return fmt.Sprintf("%s(%s critic=%g)", k, e.ToolName, e.CriticResult.Score)
		}
		return k + "(" + e.ToolName + ")"
	case *event.ObservationEvent:
		return k + "(" + e.ToolName + ")"
	case *event.MessageEvent:
		return k + "(" + string(e.Source) + ")"
	}
	return k
}
