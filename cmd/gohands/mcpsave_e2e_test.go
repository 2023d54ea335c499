package main

import (
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/mcp/oauthtest"
)

// signIn runs gohands mcp login NAME --no-browser, plays the browser, and
// returns the callback page's status and the login's result.
func (e *e2e) signIn(t *testing.T, name string) (int, result) {
	t.Helper()
	p := e.start("mcp", "login", "--no-browser", name)
	authURL := p.waitLine("http://", time.Minute)
	resp, err := http.Get(authURL) // follows the redirect to gohands' callback
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	return resp.StatusCode, p.wait(time.Minute)
}

// A run refreshes the OAuth token of a server signed in with gohands mcp
// login and saves the new state in the settings: the authorization server
// rotates refresh tokens, and a second run refreshes again with the
// rotated one, with no new sign-in.
func TestE2EMCPRefreshSaved(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	whoami := llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("call_w", "whoami", map[string]any{})}}
	e := newE2E(t, whoami, finishReply("one"), whoami, finishReply("two"))
	e.mustRun(0, "mcp", "add", "tracker", "--url", as.URL, "--oauth")
	if _, r := e.signIn(t, "tracker"); r.code != 0 {
		t.Fatalf("login: exit %d\n%s\n%s", r.code, r.stdout, r.stderr)
	}
	for i := 1; i <= 2; i++ {
		as.Expire()
		e.mustRun(0, e.args("who am I?")...)
		_, texts := toolResults(t, e.srv.LastRequest())
		if len(texts) == 0 || !strings.Contains(texts[len(texts)-1], "caller tester") {
			t.Fatalf("run %d: whoami result %q", i, texts)
		}
		if _, exch, ref := as.Counts(); exch != 1 || ref != i {
			t.Fatalf("run %d: exchanged %d codes, refreshed %d times; want 1, %d", i, exch, ref, i)
		}
	}
}

// gohands mcp login against an authorization server whose token endpoint
// answers an error fails with a message that says so and saves nothing.
func TestE2EMCPLoginTokenError(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	as.Set(func(s *oauthtest.Server) { s.TokenError = "invalid_client" })
	e := newE2E(t)
	e.mustRun(0, "mcp", "add", "tracker", "--url", as.URL, "--oauth")
	before, err := os.ReadFile(filepath.Join(e.home, ".gohands", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	_, r := e.signIn(t, "tracker")
	if r.code == 0 || !strings.Contains(r.stderr, `MCP server "tracker"`) || !strings.Contains(r.stderr, "invalid_client") {
		t.Fatalf("login: exit %d\nstdout: %s\nstderr: %s", r.code, r.stdout, r.stderr)
	}
	after, err := os.ReadFile(filepath.Join(e.home, ".gohands", "settings.json"))
	if err != nil {
		t.Fatal(err)
	}
	if string(after) != string(before) {
		t.Fatalf("the settings changed:\n%s\n->\n%s", before, after)
	}
}
