package pyclient_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// TestAgentHook158 runs a conversation with a PreToolUse agent hook (a
// sub-agent decides) on a reference 1.58.2 server and on gohands serve,
// with the scripted model as the agent and as the hook's sub-agent, which
// denies `touch denied.txt` and allows `touch allowed.txt`, and compares
// what each stores of the hook's decision: the kinds of the events after
// the agent's command in their order (the hook's run before the action it
// judges), the HookExecutionEvent (its fields and values but id,
// timestamp, and the action's id; hook_input whole) and, for the deny, the
// UserRejectObservation (its fields, reason, source).
func TestAgentHook158(t *testing.T) {
	t.Parallel()
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

	ref := sharedReference158(t)
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

// TestCommandHookStdin158 runs a conversation on a reference 1.58.2
// server and on gohands serve whose command hooks (PreToolUse,
// PostToolUse, UserPromptSubmit, Stop, SessionStart) append the JSON they
// get on stdin to a file of the workspace, one per event type, with the
// scripted model running `touch allowed.txt` then finishing; it compares
// the files, and the events each stores (kinds in order, each hook run's
// type and hook_input). A user's hook script must see on gohands what it
// sees on 1.58.2. session_id and working_dir, which differ by nature, must be the
// conversation's id and its workspace.
func TestCommandHookStdin158(t *testing.T) {
	t.Parallel()
	m := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok { // a title
			return llmtest.Reply{Text: "Hooks"}, nil
		}
		if toolResults(r) == 0 {
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"touch allowed.txt"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)
	ref := sharedReference158(t)
	gh := startGohandsServer(t)
	types := []string{"PreToolUse", "PostToolUse", "UserPromptSubmit", "Stop", "SessionStart"}
	hooks := map[string]any{}
	for _, typ := range types {
		hooks[typ] = []any{map[string]any{"matcher": "*", "hooks": []any{
			map[string]any{"type": "command", "command": "{ cat; echo; } >> " + typ + ".jsonl", "timeout": 60}}}}
	}

	// run has srv run the conversation and returns, by event type, what
	// the hooks got, session_id and working_dir checked and replaced.
	run := func(srv *server) map[string]string {
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute) // a hang guard
		defer cancel()
		c := &apiClient{base: srv.URL, http: &http.Client{Timeout: 5 * time.Minute}}
		work := t.TempDir()
		body := startBody(m.URL, work)
		body["hook_config"] = hooks
		id, err := c.create(ctx, body)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return nil
		}
		sub, err := c.subscribe(ctx, id)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return nil
		}
		defer sub.close()
		if err := c.send(ctx, id, "touch allowed.txt"); err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return nil
		}
		if _, err := sub.untilFinished(ctx); err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return nil
		}
		out := map[string]string{}
		for _, typ := range types {
			b, err := os.ReadFile(filepath.Join(work, typ+".jsonl"))
			if err != nil {
				t.Errorf("%s: %v", srv.name, err)
				continue
			}
			var lines []string
			for line := range strings.SplitSeq(strings.TrimSpace(string(b)), "\n") {
				var in map[string]any
				if err := json.Unmarshal([]byte(line), &in); err != nil {
					t.Errorf("%s: %s stdin: %v: %s", srv.name, typ, err, line)
					continue
				}
				if sid, _ := in["session_id"].(string); strings.ReplaceAll(sid, "-", "") != strings.ReplaceAll(id, "-", "") {
					t.Errorf("%s: %s session_id %q, conversation %q", srv.name, typ, sid, id)
				}
				if in["working_dir"] != work {
					t.Errorf("%s: %s working_dir %q, workspace %q", srv.name, typ, in["working_dir"], work)
				}
				in["session_id"], in["working_dir"] = "(session)", "(workspace)"
				knownResponse(in, work)
				b, _ := json.Marshal(in) // sorted keys
				lines = append(lines, string(b))
			}
			out[typ] = strings.Join(lines, "\n")
		}
		// What is stored after the user's message: the kinds in order,
		// and each hook run's type and hook_input.
		evs, err := allEvents(ctx, c, id)
		if err != nil {
			t.Errorf("%s: %v", srv.name, err)
			return out
		}
		var stored []string
		for _, e := range evs {
			kind, _ := e["kind"].(string)
			switch kind {
			case "ConversationStateUpdateEvent", "SystemPromptEvent":
				continue
			case "HookExecutionEvent":
				in, _ := e["hook_input"].(map[string]any)
				knownResponse(in, work)
				b, _ := json.Marshal(in)
				kind += fmt.Sprintf(" %v %s", e["hook_event_type"], b)
			}
			stored = append(stored, kind)
		}
		out["stored"] = strings.Join(stored, "\n")
		return out
	}
	var refOut, goOut map[string]string
	var wg sync.WaitGroup
	wg.Add(2)
	go func() { defer wg.Done(); refOut = run(ref) }()
	go func() { defer wg.Done(); goOut = run(gh) }()
	wg.Wait()
	if t.Failed() {
		return
	}
	if refOut["stored"] != goOut["stored"] {
		t.Errorf("stored events differ:\nreference:\n%s\ngohands:\n%s", refOut["stored"], goOut["stored"])
	}
	for _, typ := range types {
		if refOut[typ] != goOut[typ] {
			t.Errorf("%s hooks got on stdin:\nreference:\n%s\ngohands:\n%s", typ, refOut[typ], goOut[typ])
		}
	}
	// A check of the test: the reference's hooks saw the action.
	if !strings.Contains(refOut["PreToolUse"], `"kind":"TerminalAction"`) {
		t.Errorf("the reference's PreToolUse hook got no action:\n%s", refOut["PreToolUse"])
	}
	for _, typ := range append(types, "stored") {
		fmt.Fprint(testWriter{t}, typ+":\n"+refOut[typ])
	}
}

// knownResponse replaces in a hook input (stdin or hook_input) what a
// terminal observation holds that differs by nature (the workspace) or in
// two known ways that are the terminal tool's, not the hooks': gohands
// keeps a long output's directory (full_output_save_dir, null in 1.58.2
// for a short one) and leaves the exit-code line out of metadata.suffix.
func knownResponse(in map[string]any, work string) {
	r, ok := in["tool_response"].(map[string]any)
	if !ok || r["kind"] != "TerminalObservation" {
		return
	}
	r["full_output_save_dir"] = "(known difference)"
	if md, ok := r["metadata"].(map[string]any); ok {
		md["suffix"] = "(known difference)"
		if md["working_dir"] == work {
			md["working_dir"] = "(workspace)"
		}
	}
}

var touchFile = regexp.MustCompile(`touch [a-z]+\.txt`)

// testWriter logs what is written to it (with -v).
type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Log(string(p)); return len(p), nil }
