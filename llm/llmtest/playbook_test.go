package llmtest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
)

const testPlaybook = `{"rules": [
 {"name": "title", "system": "titles", "replies": [{"text": "A title"}], "loop": true},
 {"name": "ask", "last_user": "#ask", "replies": [{"text": "answer"}], "loop": true},
 {"name": "echo", "first_user": "^#echo", "replies": [
  {"text": "running", "tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi"}}]},
  {"tool_calls": [{"name": "finish", "arguments": "{\"message\":\"done\"}"}]}]}
]}`

// chatRequest is a Chat Completions request with the given messages.
func chatRequest(msgs ...map[string]any) llmtest.Request {
	list := make([]any, len(msgs))
	for i, m := range msgs {
		list[i] = m
	}
	return llmtest.Request{Wire: llmtest.WireChat, Body: map[string]any{"messages": list}}
}

func msg(role string, content any) map[string]any {
	return map[string]any{"role": role, "content": content}
}

func TestPlaybookRespond(t *testing.T) {
	p, err := llmtest.ParsePlaybook([]byte(testPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	sys := msg("system", "You are an agent.")
	user := msg("user", []any{map[string]any{"type": "text", "text": "#echo say hi"}})
	asst := msg("assistant", nil)
	tool := msg("tool", "hi")
	for _, c := range []struct {
		name     string
		req      llmtest.Request
		wantText string
		wantTool string
		wantErr  string
	}{
		{"first turn", chatRequest(sys, user), "running", "terminal", ""},
		{"second turn", chatRequest(sys, user, asst, tool), "", "finish", ""},
		{"past the end", chatRequest(sys, user, asst, tool, asst, tool), "", "", "has 2 replies"},
		{"side question", chatRequest(sys, user, asst, tool, asst, tool, msg("user", "#ask what?")), "answer", "", ""},
		{"title", chatRequest(msg("system", "make titles"), msg("user", "#echo say hi")), "A title", "", ""},
		{"no rule", chatRequest(sys, msg("user", "something else")), "", "", "no playbook rule"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r, err := p.Respond(c.req)
			if c.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if r.Text != c.wantText {
				t.Errorf("text %q, want %q", r.Text, c.wantText)
			}
			var tool string
			if len(r.ToolCalls) > 0 {
				tool = r.ToolCalls[0].Name
			}
			if tool != c.wantTool {
				t.Errorf("tool %q, want %q", tool, c.wantTool)
			}
		})
	}
	// Arguments written as an object and as a JSON string both arrive as
	// JSON text.
	r, _ := p.Respond(chatRequest(sys, user))
	if got := r.ToolCalls[0].Arguments; got != `{"command": "echo hi"}` {
		t.Errorf("object arguments: %s", got)
	}
	r, _ = p.Respond(chatRequest(sys, user, asst, tool))
	if got := r.ToolCalls[0].Arguments; got != `{"message":"done"}` {
		t.Errorf("string arguments: %s", got)
	}
}

func TestPlaybookWires(t *testing.T) {
	p, err := llmtest.NewPlaybook(llmtest.Rule{Name: "x", System: "^sys$", FirstUser: "^task$", Replies: []llmtest.Reply{{Text: "a"}, {Text: "b"}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		wire llmtest.Wire
		body string
		want string
	}{
		{llmtest.WireAnthropic, `{"system":"sys","messages":[{"role":"user","content":"task"},{"role":"assistant","content":[{"type":"text","text":"a"}]},{"role":"user","content":[{"type":"tool_result","content":"x"}]}]}`, "b"},
		{llmtest.WireGemini, `{"systemInstruction":{"parts":[{"text":"sys"}]},"contents":[{"role":"user","parts":[{"text":"task"}]}]}`, "a"},
		{llmtest.WireResponses, `{"instructions":"sys","input":[{"role":"user","content":[{"type":"input_text","text":"task"}]},{"type":"reasoning"},{"type":"function_call"},{"type":"function_call_output"}]}`, "b"},
	} {
		var body map[string]any
		if err := json.Unmarshal([]byte(c.body), &body); err != nil {
			t.Fatal(err)
		}
		r, err := p.Respond(llmtest.Request{Wire: c.wire, Body: body})
		if err != nil {
			t.Errorf("%s: %v", c.wire, err)
			continue
		}
		if r.Text != c.want {
			t.Errorf("%s: reply %q, want %q", c.wire, r.Text, c.want)
		}
	}
}

func TestParsePlaybookErrors(t *testing.T) {
	for _, c := range []struct{ name, src, want string }{
		{"unknown key", `{"rules":[{"name":"a","replies":[{"txt":"x"}]}]}`, "unknown field"},
		{"no replies", `{"rules":[{"name":"a","replies":[]}]}`, "no replies"},
		{"bad pattern", `{"rules":[{"name":"a","first_user":"(","replies":[{"text":"x"}]}]}`, "rule a"},
		{"nameless call", `{"rules":[{"replies":[{"tool_calls":[{"arguments":{}}]}]}]}`, "without a name"},
		{"not JSON", `rules:`, "playbook"},
	} {
		if _, err := llmtest.ParsePlaybook([]byte(c.src)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one containing %q", c.name, err, c.want)
		}
	}
}

// A responder server answers by the playbook over HTTP, and a request the
// playbook cannot answer gets a 400 and fails the test.
func TestNewResponder(t *testing.T) {
	p, err := llmtest.ParsePlaybook([]byte(testPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewResponder(t, p.Respond, nil)
	resp, err := http.Post(srv.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"#echo hi"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || !strings.Contains(string(b), `"name":"terminal"`) {
		t.Errorf("status %d, body %s", resp.StatusCode, b)
	}

	ft := &recorder{TB: t}
	bad := llmtest.NewResponder(ft, p.Respond, &llmtest.ResponderOptions{NoRecord: true})
	resp, err = http.Post(bad.URL+"/v1/chat/completions", "application/json",
		strings.NewReader(`{"model":"m","messages":[{"role":"user","content":"unknown"}]}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("unanswerable request: status %d, want 400", resp.StatusCode)
	}
	if f := ft.failures(); len(f) != 1 || !strings.Contains(f[0], "no playbook rule") {
		t.Errorf("test errors %q, want one about no rule", ft.failures())
	}
	if n := len(bad.Requests()); n != 0 {
		t.Errorf("NoRecord server kept %d requests", n)
	}
}
