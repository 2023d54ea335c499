package main

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
)

// lastUserText is the text of the last user message of the model's last
// request.
func lastUserText(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := srv.LastRequest().Decode(&req); err != nil {
		t.Fatal(err)
	}
	for i := len(req.Messages) - 1; i >= 0; i-- {
		m := req.Messages[i]
		if m.Role != "user" {
			continue
		}
		var s string
		if json.Unmarshal(m.Content, &s) == nil {
			return s
		}
		var parts []struct {
			Text string `json:"text"`
		}
		_ = json.Unmarshal(m.Content, &parts)
		var b strings.Builder
		for _, p := range parts {
			b.WriteString(p.Text)
		}
		return b.String()
	}
	return ""
}

// TestTUIMultiLineAndEsc: in tmux, Ctrl-J and Alt-Enter start new lines, a
// bracketed paste keeps its newlines without sending, and the model gets
// every line as one message; Esc stops a step that waits for the model;
// /model lists the known models of the providers with a key.
func TestTUIMultiLineAndEsc(t *testing.T) {
	t.Parallel()
	e := newE2E(t,
		llmtest.Reply{Text: "Got all four lines."},
		llmtest.Reply{Text: "too late", Delay: 50 * time.Second},
	)
	e.env = append(e.env, "XDG_CONFIG_HOME="+e.home, "ANTHROPIC_API_KEY=sk-ant-e2e")
	s := startScreen(t, e, "multi", "--persistence-dir", e.data, "--llm-config", e.config)
	s.waitFor("Ask gohands")

	s.tmux("send-keys", "-t", s.name, "-l", "fix this:")
	s.keys("C-j")
	s.tmux("set-buffer", "-b", "trace", "Traceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError")
	s.tmux("paste-buffer", "-p", "-b", "trace", "-t", s.name)
	s.keys("M-Enter")
	s.tmux("send-keys", "-t", s.name, "-l", "thanks")
	scr := s.waitFor("› fix this:", "  ZeroDivisionError", "  thanks")
	t.Logf("the prompt:\n%s", scr)
	if n := len(e.srv.Requests()); n != 0 {
		t.Fatalf("%d model calls before Enter: the paste or a newline key sent", n)
	}
	s.keys("Enter")
	s.waitFor("Got all four lines.")
	want := "fix this:\nTraceback (most recent call last):\n  File \"calc.py\", line 3\nZeroDivisionError\nthanks"
	if got := lastUserText(t, e.srv); got != want {
		t.Errorf("the model got %q, want %q", got, want)
	}

	s.typeLine("/model")
	scr = s.waitFor("Model: openai/gpt-4o", "openai/gpt-4o-mini", "anthropic/claude-sonnet-4-5", "/model NAME switches")
	if strings.Contains(scr, "gemini/") {
		t.Errorf("/model lists gemini models though no key for it is set:\n%s", scr)
	}

	s.typeLine("think for a long time")
	s.waitFor("Thinking…")
	s.keys("Escape")
	scr = s.waitFor("Paused.")
	if strings.Contains(scr, "too late") {
		t.Errorf("the step was not interrupted:\n%s", scr)
	}
	s.typeLine("/exit")
	if code, stderr := s.exited(); code != "0" {
		t.Fatalf("exit %s: %s", code, stderr)
	}
}
