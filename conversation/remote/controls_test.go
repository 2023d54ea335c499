package remote_test

import (
	"errors"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/goal"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/conversation/title"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/secret"
)

// The controls through the server: a goal met on the second run, a fork
// from an event that runs on its own, navigate, switch_llm and a title.
func TestControlsOverServer(t *testing.T) {
	ts := startServer(t)
	var judged atomic.Int32
	model := llmtest.NewResponder(t, func(req llmtest.Request) (llmtest.Reply, error) {
		if _, agent := req.Body["tools"]; agent {
			return llmtest.Reply{Text: "worked on it"}, nil
		}
		if strings.Contains(string(req.RawBody), "short title") {
			return llmtest.Reply{Text: "🧪 Goal work"}, nil
		}
		if judged.Add(1) == 1 {
			return llmtest.Reply{Text: `{"score": 0.3, "complete": false, "missing": "proof"}`}, nil
		}
		return llmtest.Reply{Text: `{"score": 1.0, "complete": true}`}, nil
	}, nil)
	ctx := t.Context()
	c, err := remote.New(ctx, scriptedAgent(model.URL), ts.workspace(t.TempDir()), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var statuses []string
	out, err := goal.Run(ctx, c, "prove it", &goal.Options{MaxIterations: 3, OnStatus: func(s goal.Status) {
		statuses = append(statuses, s.Status)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if out.Status != goal.Complete || out.Iterations != 2 || !out.Verdict.Complete {
		t.Fatalf("goal outcome %+v", out)
	}
	if want := []string{"running", "running", "complete"}; !slices.Equal(statuses, want) {
		t.Fatalf("goal statuses %q, want %q", statuses, want)
	}
	// The statuses are in the log too.
	if last, ok := goal.Last(ctx, c); !ok || last.Status != goal.Complete {
		t.Fatalf("last goal status in the log %+v", last)
	}
	if n := judged.Load(); n != 2 {
		t.Fatalf("judged %d times", n)
	}
	if err := c.StopGoal(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := goal.Resume(ctx, c, nil); !errors.Is(err, goal.ErrNoResumable) {
		t.Fatalf("resuming a completed goal: %v", err)
	}
	cfg := llm.DefaultConfig("openai/gpt-4o-mini")
	cfg.BaseURL, cfg.APIKey, cfg.NumRetries = model.URL+"/v1", secret.New("other"), 0
	judge, err := llm.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := goal.Run(ctx, c, "x", &goal.Options{Judge: judge}); !errors.Is(err, conversation.ErrUnsupported) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("a goal with a judge model: %v", err)
	}

	got, err := title.Generate(ctx, c, 0)
	if err != nil || got != "🧪 Goal work" {
		t.Fatalf("title %q, %v", got, err)
	}
	if err := c.SwitchLLM(ctx, cfg); err != nil {
		t.Fatal(err)
	}

	// Fork from the first user message; navigate the source there too.
	var first string
	st := c.State().Events()
	for i := 0; i < st.Len() && first == ""; i++ {
		if e, err := st.Event(t.Context(), i); err == nil {
			if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceUser {
				first = m.ID
			}
		}
	}
	f, err := c.Fork(ctx, &conversation.ForkOptions{Title: "Alt", FromEventID: first})
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if f.ID() == c.ID() || f.State().Events().Len() >= c.State().Events().Len() {
		t.Fatalf("fork %s has %d events, source %d", f.ID(), f.State().Events().Len(), c.State().Events().Len())
	}
	if err := c.NavigateTo(ctx, first); err != nil {
		t.Fatal(err)
	}
	if err := c.NavigateTo(ctx, "no-such-event"); !errors.Is(err, conversation.ErrNotFound) {
		t.Fatalf("navigate to an unknown event: %v", err)
	}
}
