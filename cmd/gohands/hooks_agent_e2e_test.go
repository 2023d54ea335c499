package main

import (
	"encoding/json"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// hookJudgeReason is the reason the agent hook's sub-agent gives when it
// denies a command.
const hookJudgeReason = "JUDGE-7: denied.txt is off limits"

// agentHookConfig is a PreToolUse agent hook on the terminal tool.
const agentHookConfig = `{"PreToolUse":[{"matcher":"terminal","hooks":[{"type":"agent","name":"judge","system_prompt":"You judge terminal commands.","timeout":60}]}]}`

// hookJudgeModel scripts a run with an agent hook. The hook's sub-agent
// (its first user message carries the PreToolUse event) finishes with a
// deny when the command touches denied.txt and an allow otherwise; the
// main agent runs the command its task names ("touch FILE"), then
// finishes. It records the main agent's requests that carry a tool result.
type hookJudgeModel struct {
	*llmtest.Server
	mu      sync.Mutex
	results []llmtest.Request // main agent requests after a tool result
	judged  int               // the sub-agent's requests
}

func newHookJudgeModel(t *testing.T) *hookJudgeModel {
	m := &hookJudgeModel{}
	m.Server = llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := r.Decode(&body); err != nil {
			return llmtest.Reply{}, err
		}
		first, results := "", 0
		for _, msg := range body.Messages {
			if msg.Role == "user" && first == "" {
				first = contentText(msg.Content)
			}
			if msg.Role == "tool" {
				results++
			}
		}
		if _, ok := r.Body["tools"]; !ok { // a title
			return llmtest.Reply{Text: "Hooks"}, nil
		}
		m.mu.Lock()
		defer m.mu.Unlock()
		switch {
		case strings.Contains(first, "PreToolUse") && strings.Contains(first, `"tool_name"`):
			m.judged++
			decision := `{"decision":"allow","reason":"harmless"}`
			if strings.Contains(first, "denied.txt") {
				decision = `{"decision":"deny","reason":"` + hookJudgeReason + `"}`
			}
			return finishReply(decision), nil
		case results == 0:
			_, file, _ := strings.Cut(first, "touch ")
			file = strings.Fields(file)[0]
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_touch", "terminal", map[string]any{"command": "touch " + file})}}, nil
		}
		m.results = append(m.results, r)
		return finishReply("done"), nil
	}, nil)
	return m
}

// toldReason reports whether the main agent's request after the command
// got the judge's reason as the command's result.
func (m *hookJudgeModel) toldReason(t *testing.T) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, r := range m.results {
		ids, texts := toolResults(t, r)
		if i := slices.Index(ids, "call_touch"); i >= 0 && strings.Contains(texts[i], hookJudgeReason) {
			return true
		}
	}
	return false
}

// checkHookEvents checks the hook's stored decision: one PreToolUse
// HookExecutionEvent of the agent hook, blocked with the judge's reason
// when deny, and for a deny a UserRejectObservation from the hook
// answering the command, with no observation of it having run.
func checkHookEvents(t *testing.T, evs []event.Event, deny bool) {
	t.Helper()
	var runs []*event.HookExecutionEvent
	for _, h := range ofKind[*event.HookExecutionEvent](evs) {
		if h.HookEventType == "PreToolUse" {
			runs = append(runs, h)
		}
	}
	if len(runs) != 1 {
		t.Fatalf("%d PreToolUse hook runs stored, want 1; kinds %v", len(runs), kinds(evs))
	}
	h := runs[0]
	if h.HookCommand != "agent-hook:judge" || h.ToolName != "terminal" || h.Blocked != deny || !h.Success || h.Stdout != "" {
		t.Errorf("hook run: command %q, tool %q, blocked %v, success %v, stdout %q; want agent-hook:judge, terminal, %v, true, none (as 1.58.2)",
			h.HookCommand, h.ToolName, h.Blocked, h.Success, h.Stdout, deny)
	}
	rejects := ofKind[*event.UserRejectObservation](evs)
	var ran bool
	for _, o := range ofKind[*event.ObservationEvent](evs) {
		ran = ran || o.ToolName == "terminal"
	}
	if deny {
		if h.Reason != hookJudgeReason {
			t.Errorf("hook run reason %q, want %q", h.Reason, hookJudgeReason)
		}
		if len(rejects) != 1 || rejects[0].RejectionSource != event.RejectedByHook || !strings.Contains(rejects[0].RejectionReason, hookJudgeReason) {
			t.Errorf("rejections %+v, want one from the hook with the judge's reason", rejects)
		}
		if ran {
			t.Error("the denied command has an observation: it ran")
		}
	} else if len(rejects) != 0 || !ran {
		t.Errorf("an allowed command: rejections %d, ran %v", len(rejects), ran)
	}
}

// gohands run with a PreToolUse agent hook in the workspace's
// .openhands/hooks.json: the hook's sub-agent denies `touch denied.txt`
// (the file is not made, the model is told the judge's reason, the run
// stores the hook's decision and the hook's rejection) and allows `touch
// allowed.txt` (the command runs).
func TestE2EAgentHookRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		file string
		deny bool
	}{{"denied.txt", true}, {"allowed.txt", false}} {
		t.Run(tc.file, func(t *testing.T) {
			t.Parallel()
			m := newHookJudgeModel(t)
			e := newE2E(t)
			for i, kv := range e.env {
				if strings.HasPrefix(kv, "LLM_BASE_URL=") {
					e.env[i] = "LLM_BASE_URL=" + m.URL + "/v1"
				}
			}
			hooks := filepath.Join(e.work, ".openhands", "hooks.json")
			if err := os.MkdirAll(filepath.Dir(hooks), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(hooks, []byte(`{"hooks":`+agentHookConfig+`}`), 0o644); err != nil {
				t.Fatal(err)
			}
			e.mustRun(0, e.args("touch "+tc.file)...)
			_, err := os.Stat(filepath.Join(e.work, tc.file))
			if made := err == nil; made == tc.deny {
				t.Errorf("%s made %v, want %v", tc.file, made, !tc.deny)
			}
			m.mu.Lock()
			judged := m.judged
			m.mu.Unlock()
			if judged == 0 {
				t.Error("the hook's sub-agent was never asked")
			}
			if got := m.toldReason(t); got != tc.deny {
				t.Errorf("the model was told the judge's reason: %v, want %v", got, tc.deny)
			}
			evs, _ := e.events()
			checkHookEvents(t, evs, tc.deny)
		})
	}
}

// gohands serve with a conversation whose hook_config has a PreToolUse
// agent hook: the same deny and allow as TestE2EAgentHookRun, read from
// the served events.
func TestE2EAgentHookServe(t *testing.T) {
	t.Parallel()
	m := newHookJudgeModel(t)
	home := t.TempDir()
	srv := startServeProc(t, home, t.TempDir(), nil, "--autotitle=false")
	for _, tc := range []struct {
		file string
		deny bool
	}{{"denied.txt", true}, {"allowed.txt", false}} {
		work := t.TempDir()
		body := `{"agent":{"kind":"Agent","llm":{"model":"openai/gpt-4o","base_url":"` + m.URL + `/v1","api_key":"k","usage_id":"agent","num_retries":0},` +
			`"tools":[{"name":"terminal"}]},"workspace":{"kind":"LocalWorkspace","working_dir":` + quote(work) + `},` +
			`"hook_config":` + agentHookConfig + `,` +
			`"initial_message":{"role":"user","content":[{"type":"text","text":` + quote("touch "+tc.file) + `}],"run":true}}`
		var info struct {
			ID string `json:"id"`
		}
		srv.do("POST", "/api/conversations", body, http.StatusCreated, &info)
		if st := srv.waitStatus(info.ID, 2*time.Minute, "finished", "error", "stuck"); st != "finished" {
			t.Fatalf("%s: status %s\nserver log:\n%s", tc.file, st, srv.logs())
		}
		_, err := os.Stat(filepath.Join(work, tc.file))
		if made := err == nil; made == tc.deny {
			t.Errorf("%s made %v, want %v", tc.file, made, !tc.deny)
		}
		var page struct {
			Items []json.RawMessage `json:"items"`
		}
		srv.do("GET", "/api/conversations/"+info.ID+"/events/search?limit=100", "", http.StatusOK, &page)
		var evs []event.Event
		for _, raw := range page.Items {
			ev, err := event.Unmarshal(raw)
			if err != nil {
				t.Fatalf("%v: %s", err, raw)
			}
			evs = append(evs, ev)
		}
		t.Run(tc.file, func(t *testing.T) { checkHookEvents(t, evs, tc.deny) })
	}
	if !m.toldReason(t) {
		t.Error("the model was not told the judge's reason")
	}
}
