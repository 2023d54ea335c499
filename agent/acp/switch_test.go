package acp_test

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
)

// modelCall is a model selection the fake received: its method and model.
type modelCall struct{ method, model string }

func modelCalls(t *testing.T, file string) (calls []modelCall, sessions int) {
	t.Helper()
	for _, m := range received(t, file) {
		switch m.Method {
		case "session/new", "session/load":
			sessions++
		case "session/set_model", "session/set_config_option":
			var p struct {
				ModelID  string `json:"modelId"`
				ConfigID string `json:"configId"`
				Value    string `json:"value"`
			}
			if err := json.Unmarshal(m.Params, &p); err != nil {
				t.Fatal(err)
			}
			if m.Method == "session/set_config_option" && p.ConfigID != "model" {
				t.Errorf("set_config_option of %q", p.ConfigID)
			}
			calls = append(calls, modelCall{m.Method, p.ModelID + p.Value})
		}
	}
	return calls, sessions
}

func storedModel(c *conversation.LocalConversation) string {
	a, ok := c.State().Fields().Agent.(*acp.Agent)
	if !ok || a.Model == nil {
		return ""
	}
	return *a.Model
}

// A model switch through the fake server, by each mechanism a session
// advertises: before the first turn it is only recorded and selected
// when the session starts; between turns it goes to the live session;
// a model the server rejects, an empty one and a server that does not
// answer leave the stored model as it was; a resumed conversation
// selects the switched model in the loaded session.
func TestSwitchModel(t *testing.T) {
	for _, c := range []struct {
		mode, method, name string
		switchable         bool
	}{
		{mode: "models", method: "session/set_model"},
		{mode: "options", method: "session/set_config_option", name: "codex-acp", switchable: true},
	} {
		t.Run(c.mode, func(t *testing.T) {
			if c.name != "" {
				t.Setenv("GOHANDS_FAKE_NAME", c.name)
			}
			msgs := filepath.Join(t.TempDir(), "received.jsonl")
			t.Setenv("GOHANDS_FAKE_LOG", msgs)
			a := acp.New(fakeCommand(t, c.mode)...)
			dir, pdir := t.TempDir(), t.TempDir()
			conv, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{Backend: filestore.NewBackend(pdir, nil)})
			if err != nil {
				t.Fatal(err)
			}
			defer conv.Close()

			if err := conv.SwitchAgentModel(ctx, "m-fast"); err != nil {
				t.Fatalf("switch before the first turn: %v", err)
			}
			if got := storedModel(conv); got != "m-fast" {
				t.Fatalf("stored acp_model %q after the switch, want m-fast", got)
			}
			send(t, conv, "one")
			if err := conv.Run(ctx); err != nil {
				t.Fatal(err)
			}
			calls, _ := modelCalls(t, msgs)
			if want := []modelCall{{c.method, "m-fast"}}; !slices.Equal(calls, want) {
				t.Fatalf("model calls after the first turn %v, want %v", calls, want)
			}
			st := conv.State().Fields().AgentState
			if st["acp_current_model_id"] != "m-fast" || st["acp_supports_runtime_model_switch"] != c.switchable || st["acp_model_via_config_option"] != (c.mode == "options") {
				t.Errorf("agent_state %v", st)
			}
			if b, _ := json.Marshal(st["acp_available_models"]); !strings.Contains(string(b), `"model_id":"m-fast"`) || !strings.Contains(string(b), `"model_id":"m-big"`) {
				t.Errorf("acp_available_models %s, want m-fast and m-big", b)
			}

			if err := conv.SwitchAgentModel(ctx, "m-big"); err != nil {
				t.Fatalf("live switch: %v", err)
			}
			var me *acp.ModelError
			if err := conv.SwitchAgentModel(ctx, "nope"); !errors.As(err, &me) {
				t.Errorf("switch to a model the server rejects: %v, want a ModelError", err)
			}
			if err := conv.SwitchAgentModel(ctx, "  "); !errors.As(err, &me) {
				t.Errorf("switch to a blank model: %v, want a ModelError", err)
			}
			// The fake never answers m-slow; the deadline stands for
			// acp_prompt_timeout.
			sctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			err = conv.SwitchAgentModel(sctx, "m-slow")
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Errorf("switch the server does not answer: %v, want a deadline error", err)
			}
			if got := storedModel(conv); got != "m-big" {
				t.Fatalf("stored acp_model %q, want m-big (failed switches change nothing)", got)
			}
			if got := conv.State().Fields().AgentState["acp_current_model_id"]; got != "m-big" {
				t.Errorf("acp_current_model_id %v, want m-big", got)
			}
			send(t, conv, "two")
			if err := conv.Run(ctx); err != nil {
				t.Fatal(err)
			}
			if msg := finalMessage(t, conv); !strings.Contains(msg, "echo: two") {
				t.Errorf("second turn's answer %q", msg)
			}
			calls, sessions := modelCalls(t, msgs)
			want := []modelCall{{c.method, "m-fast"}, {c.method, "m-big"}, {c.method, "nope"}, {c.method, "m-slow"}}
			if !slices.Equal(calls, want) || sessions != 1 {
				t.Fatalf("model calls %v in %d sessions, want %v in one", calls, sessions, want)
			}
			id := conv.ID()
			conv.Close()

			// The resumed conversation runs the stored agent: the loaded
			// session gets m-big.
			resumed, err := conversation.New(ctx, nil, dir, &conversation.LocalOptions{Backend: filestore.NewBackend(pdir, nil), ID: id})
			if err != nil {
				t.Fatal(err)
			}
			defer resumed.Close()
			send(t, resumed, "three")
			if err := resumed.Run(ctx); err != nil {
				t.Fatal(err)
			}
			calls, sessions = modelCalls(t, msgs)
			if last := calls[len(calls)-1]; last != (modelCall{c.method, "m-big"}) || sessions != 2 {
				t.Errorf("after the resume: model calls %v in %d sessions, want m-big last, in a second session", calls, sessions)
			}
		})
	}
}

// A switch asked for during a turn waits for the turn's end, as the
// reference's waits for the step: the server is asked for the model
// after the last of the turn's requests is answered.
func TestSwitchModelWaitsForTurn(t *testing.T) {
	msgs := filepath.Join(t.TempDir(), "received.jsonl")
	t.Setenv("GOHANDS_FAKE_LOG", msgs)
	conv := open(t, acp.New(fakeCommand(t, "models")...), nil)
	switched := make(chan error, 1)
	var once sync.Once
	defer conv.Subscribe(func(e event.Event) {
		if _, ok := e.(*event.ACPToolCallEvent); ok {
			once.Do(func() { go func() { switched <- conv.SwitchAgentModel(ctx, "m-big") }() })
		}
	})()
	send(t, conv, "hi")
	if err := conv.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-switched; err != nil {
		t.Fatalf("switch during the turn: %v", err)
	}
	setModel, lastAnswer := -1, -1
	for i, m := range received(t, msgs) {
		switch {
		case m.Method == "session/set_model":
			setModel = i
		case m.Answers != "":
			lastAnswer = i
		}
	}
	if setModel < 0 || lastAnswer < 0 || setModel < lastAnswer {
		t.Errorf("set_model is message %d, the turn's last answer %d: want the switch after the turn", setModel, lastAnswer)
	}
	if got := storedModel(conv); got != "m-big" {
		t.Errorf("stored acp_model %q, want m-big", got)
	}
}
