package browser_test

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/browser"
)

// browsingModel is a scripted model that reads what the browser tools
// return and decides its next call from it, as a real model would: the
// element indices it clicks and types into come from browser_get_state.
// Each reply goes through llmtest's provider, so the agent loop sees a
// real provider response.
type browsingModel struct {
	script *llmtest.Provider
	next   func(last string, req *llm.Request) llmtest.Reply

	mu       sync.Mutex
	requests []*llm.Request
}

func (m *browsingModel) Complete(ctx context.Context, req *llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	m.requests = append(m.requests, req)
	m.mu.Unlock()
	last := ""
	if n := len(req.Messages); n > 0 && req.Messages[n-1].Role == event.RoleTool {
		last = event.TextOf(req.Messages[n-1].Content)
	}
	m.script.Add(m.next(last, req))
	return m.script.Complete(ctx, req)
}

func call(name string, args any) llmtest.Reply {
	return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: name, Arguments: llmtest.Args(args)}}}
}

// TestAgentFillsForm runs the agent loop with the browser tool set from
// its spec: the model opens the form, reads the page state with a
// screenshot, types a name, submits, reads the result as markdown and
// finishes with it. Closing the conversation stops the browser.
func TestAgentFillsForm(t *testing.T) {
	needChromium(t)
	srv := site(t)
	var profile string
	step, sendIndex := 0, 0
	m := &browsingModel{script: llmtest.NewProvider(t), next: func(last string, req *llm.Request) llmtest.Reply {
		step++
		switch step {
		case 1:
			return call(browser.NavigateName, map[string]any{"url": srv.URL + "/form"})
		case 2:
			profile = browserProfile(t)
			return call(browser.GetStateName, map[string]any{"include_screenshot": true})
		case 3:
			var st state
			if err := json.Unmarshal([]byte(last), &st); err != nil {
				t.Fatalf("state is not JSON: %v\n%s", err, last)
			}
			// The screenshot reached the model as an image.
			if !hasImage(req.Messages[len(req.Messages)-1]) {
				t.Errorf("no image in the tool message: %+v", req.Messages[len(req.Messages)-1].Content)
			}
			in := st.index(t, "name input", func(tag, _, ph, _ string) bool { return ph == "Your name" })
			send := st.index(t, "send button", func(tag, text, _, _ string) bool { return tag == "button" })
			sendIndex = send
			return call(browser.TypeName, map[string]any{"index": in, "text": "Grace Hopper"})
		case 4:
			return call(browser.ClickName, map[string]any{"index": sendIndex})
		case 5:
			return call(browser.GetContentName, map[string]any{})
		case 6:
			line := ""
			for l := range strings.SplitSeq(last, "\n") {
				if strings.HasPrefix(l, "Hello, ") {
					line = l
				}
			}
			return call("finish", map[string]any{"message": "The page says: " + line})
		}
		t.Errorf("unexpected request %d", step)
		return llmtest.Reply{Text: "?"}
	}}

	cfg := llm.DefaultConfig("openai/gpt-4o")
	model, err := llm.New(cfg, &llm.Options{Provider: m})
	if err != nil {
		t.Fatal(err)
	}
	a := agent.New(cfg, []tool.Spec{{Name: browser.Name}}, &agent.Options{Model: model})
	var mu sync.Mutex
	var finish string
	conv, err := conversation.New(context.Background(), a, t.TempDir(), &conversation.LocalOptions{
		OnEvent: func(e event.Event) {
			if ae, ok := e.(*event.ActionEvent); ok && ae.ToolName == "finish" {
				mu.Lock()
				finish = ae.ToolCall.Arguments
				mu.Unlock()
			}
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer conv.Close()
	conv.SendMessage(context.Background(), event.UserMessage("Sign up as Grace Hopper on the form and tell me what the page answers."))
	if err := conv.Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if s := conv.Status(); s != conversation.StatusFinished {
		t.Fatalf("status %v", s)
	}
	mu.Lock()
	got := finish
	mu.Unlock()
	if !strings.Contains(got, "Hello, Grace Hopper!") {
		t.Errorf("finish action %s", got)
	}
	// The model was offered the browser tools.
	names := map[string]bool{}
	for _, ts := range m.requests[0].Tools {
		names[ts.Name] = true
	}
	for _, n := range []string{browser.NavigateName, browser.ClickName, browser.GetStateName, browser.SetStorageName} {
		if !names[n] {
			t.Errorf("tool %s not offered: %v", n, names)
		}
	}
	if err := conv.Close(); err != nil {
		t.Fatal(err)
	}
	if pids := chromiumProcesses(t, profile); len(pids) > 0 {
		t.Errorf("Chromium processes left after closing the conversation: %v", pids)
	}
}

func hasImage(msg event.Message) bool {
	for _, c := range msg.Content {
		if c.Type == event.ContentImage && len(c.ImageURLs) == 1 && strings.HasPrefix(c.ImageURLs[0], "data:image/png;base64,") {
			return true
		}
	}
	return false
}
