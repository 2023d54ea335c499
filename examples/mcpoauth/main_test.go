package main

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/mcp/oauthtest"
)

// Against a loopback authorization server and MCP server: the first run
// registers, has the user consent (a browser that follows the redirect to
// the program's callback), exchanges the code, saves the tokens and lets
// an agent call the tool; the second run connects with the saved tokens,
// with no consent and no new exchange.
func TestRun(t *testing.T) {
	t.Setenv("HOME", t.TempDir()) // no user skills
	as := oauthtest.New(t)
	tokens := filepath.Join(t.TempDir(), "mcp-oauth.json")
	opened := 0
	browser := func(u string) {
		opened++
		loc, err := oauthtest.ConsentURL(context.Background(), u) // the user consents
		if err != nil {
			t.Error(err)
			return
		}
		resp, err := http.Get(loc) // and is sent back to the program
		if err != nil {
			t.Error(err)
			return
		}
		resp.Body.Close()
	}
	srv := llmtest.NewChat(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "whoami", Arguments: `{}`}}},
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message": "You are tester."}`}}},
	)
	c := llm.DefaultConfig("openai/gpt-4o")
	c.BaseURL = srv.URL + "/v1"

	var out bytes.Buffer
	if err := run(context.Background(), config{URL: as.URL, Tokens: tokens, Open: browser, LLM: &c, Out: &out}); err != nil {
		t.Fatalf("first run: %v\n%s", err, out.String())
	}
	for _, want := range []string{"tool whoami", "caller tester", "You are tester."} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("first run's output lacks %q:\n%s", want, out.String())
		}
	}
	if b, err := os.ReadFile(tokens); err != nil || !strings.Contains(string(b), `"refresh_token"`) {
		t.Fatalf("tokens file %s: %v", b, err)
	}

	out.Reset()
	if err := run(context.Background(), config{URL: as.URL, Tokens: tokens, Open: browser, Out: &out}); err != nil {
		t.Fatalf("second run: %v\n%s", err, out.String())
	}
	if !strings.Contains(out.String(), "tool whoami") {
		t.Errorf("second run's output:\n%s", out.String())
	}
	if r, e, _ := as.Counts(); r != 1 || e != 1 || opened != 1 {
		t.Errorf("registered %d, exchanged %d, consent pages %d; want 1 each (the second run uses the saved tokens)", r, e, opened)
	}
}
