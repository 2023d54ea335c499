package pyclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestAgentHook158 runs a conversation with a PreToolUse agent hook (a
// sub-agent decides) on a reference 1.58.2 server and on gohands serve,
// with the scripted model as the agent and as the hook's sub-agent, which
// denies `touch denied.txt` and allows `touch allowed.txt`, and compares
// what each stores of the hook's decision: the kinds of the events after
// the agent's command, the HookExecutionEvent (its fields and values but
// id, timestamp, and the action's id) and, for the deny, the
// UserRejectObservation (its fields, reason, source).
func TestAgentHook158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	const reason = "JUDGE-9: denied.txt is off limits"
	m := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok { // a title
			return llmtest.Reply{Text: "Hooks"}, nil
		}
		var first string
		msgs, _ := r.Body["messages"].([]any)
		for _, msg := range msgs {
			if msg, _ := msg.(map[string]any); msg["role"] == "user" {
				b, _ := json.Marshal(msg["content"])
				first = string(b)
				break
			}
		}
		finish := func(msg string) llmtest.Reply {
			args, _ := json.Marshal(map[string]string{"message": msg})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: string(args)}}}
		}
		switch {
		case strings.Contains(first, "PreToolUse") && strings.Contains(first, "tool_name"):
			if strings.Contains(first, "denied.txt") {
				return finish(`{"decision":"deny","reason":"` + reason + `"}`), nil
			}
			return finish(`{"decision":"allow","reason":"harmless"}`), nil
		case toolResults(r) == 0:
			file := touchFile.FindString(first)
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"` + file + `"}`}}}, nil
		}
		return finish("done"), nil
	}, nil)

	ref := startReferenceServer(t, py)
	gh := startGohandsServer(t)
	hooks := map[string]any{"PreToolUse": []any{map[string]any{"matcher": "terminal", "hooks": []any{
		map[string]any{"type": "agent", "name": "judge", "system_prompt": "You judge terminal commands.", "timeout": 60}}}}}

	// run has srv run "touch file" and returns what it stored after the
	// agent's command, as comparable text.
	run := func(srv *server, file string) string {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
		defer cancel()
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		body := startBody(m.URL, t.TempDir())
		body["hook_config"] = hooks
		id, err := c.create(ctx, body)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return ""
		}
		sub, err := c.subscribe(ctx, id)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return ""
		}
		defer sub.close()
		if err := c.send(ctx, id, "touch "+file); err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return ""
		}
		_, runErr := sub.untilFinished(ctx)
		evs, err := allEvents(ctx, c, id)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return ""
		}
		if runErr != nil {
			b, _ := json.Marshal(evs)
			t.Errorf("%s: %v; events:\n%s", srv.name, runErr, b)
			return ""
		}
		var out []string
		after := false
		for _, e := range evs {
			kind, _ := e["kind"].(string)
			if kind == "MessageEvent" && e["source"] == "user" {
				after = true
				continue
			}
			if !after || kind == "ConversationStateUpdateEvent" {
				continue
			}
			switch kind {
			case "HookExecutionEvent", "UserRejectObservation":
				// hook_input: 1.58.2 stores the tool's name and its action
				// (defaults and kind included), gohands the whole input the
				// hook got (session, working directory, the call's
				// arguments); what both hold is compared.
				if in, ok := e["hook_input"].(map[string]any); ok {
					ti, _ := in["tool_input"].(map[string]any)
					e["hook_input"] = map[string]any{"tool_name": in["tool_name"], "tool_input.command": ti["command"]}
				}
				for _, k := range []string{"id", "timestamp", "action_id", "tool_call_id", "parent_id"} {
					if _, ok := e[k]; ok {
						e[k] = "(" + k + ")"
					}
				}
				b, _ := json.Marshal(e) // sorted keys
				out = append(out, string(b))
			default:
				src, _ := e["source"].(string)
				out = append(out, kind+" ("+src+")")
			}
		}
		// 1.58.2 stores a PreToolUse hook's run before the action it
		// judges (its hooks run in the event callback, ahead of the
		// store); gohands stores it after the action, when the action is
		// about to run. The comparison takes the hook's run right after
		// its action.
		for i := 0; i+1 < len(out); i++ {
			if strings.Contains(out[i], `"kind":"HookExecutionEvent"`) && out[i+1] == "ActionEvent (agent)" {
				out[i], out[i+1] = out[i+1], out[i]
				i++
			}
		}
		return strings.Join(out, "\n")
	}
	for _, file := range []string{"denied.txt", "allowed.txt"} {
		t.Run(file, func(t *testing.T) {
			var refOut, goOut string
			var wg sync.WaitGroup
			wg.Add(2)
			go func() { defer wg.Done(); refOut = run(ref, file) }()
			go func() { defer wg.Done(); goOut = run(gh, file) }()
			wg.Wait()
			if t.Failed() {
				return
			}
			if refOut != goOut {
				t.Errorf("what is stored after the command differs:\nreference:\n%s\ngohands:\n%s", refOut, goOut)
			}
			// A check of the test: the reference's deny is there.
			if file == "denied.txt" && !strings.Contains(refOut, reason) {
				t.Errorf("the reference stored no deny with the judge's reason:\n%s", refOut)
			}
			fmt.Fprint(testWriter{t}, refOut)
		})
	}
}

var touchFile = regexp.MustCompile(`touch [a-z]+\.txt`)

// testWriter logs what is written to it (with -v).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
