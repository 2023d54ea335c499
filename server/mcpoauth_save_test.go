package server_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/mcp/oauthtest"
	"github.com/gohands/gohands/server"
)

// A refresh of an MCP server's OAuth tokens is saved in the conversation's
// stored mcp_config, encrypted with the server's key: the authorization
// server rotates refresh tokens (the one the sign-in got is spent by the
// refresh), and a server restarted on the conversation's files still
// reaches the MCP server, refreshing with the rotated token, with no new
// sign-in. No token is in clear in the files or the log.
func TestMCPOAuthRefreshSaved(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	dir := t.TempDir()
	opts := func(conversations string) *server.Options {
		return &server.Options{SessionAPIKeys: []string{"sess"}, SecretKey: "the secret key", PersistenceDir: dir,
			ConversationsPath: conversations,
			Logger:            slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	}
	ts := newTestServer(t, opts(filepath.Join(dir, "conversations")))
	as := oauthtest.New(t)
	st := authorizeMCP(t, ts, map[string]any{"type": "http", "url": as.URL, "auth": map[string]any{"strategy": "oauth2"}})
	if !st.OK || st.OAuthState == nil {
		t.Fatalf("sign-in: %+v", st)
	}
	var mu sync.Mutex
	var results []string
	model := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok {
			return llmtest.Reply{Text: "OAuth"}, nil
		}
		var body struct {
			Messages []struct {
				Role    string          `json:"role"`
				Content json.RawMessage `json:"content"`
			} `json:"messages"`
		}
		if err := r.Decode(&body); err != nil {
			return llmtest.Reply{}, err
		}
		if last := body.Messages[len(body.Messages)-1]; last.Role == "tool" {
			mu.Lock()
			results = append(results, string(last.Content))
			mu.Unlock()
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
		}
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "whoami", Arguments: `{}`}}}, nil
	}, nil)
	a := pythonAgent(t, model.URL+"/v1")
	a["mcp_config"] = map[string]any{"mcpServers": map[string]any{"secure": map[string]any{
		"url": as.URL, "auth": map[string]any{"strategy": "oauth2", "state": st.OAuthState}}}}
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"agent": a}), &info)
	id, _ := info["id"].(string)
	ask := func(ts *testServer, n int) string {
		t.Helper()
		ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "run": true,
			"content": []any{map[string]any{"type": "text", "text": "who am I?"}}}, nil)
		ts.waitStatus(id, "finished")
		mu.Lock()
		defer mu.Unlock()
		if len(results) != n {
			t.Fatalf("the model got %d tool results, want %d: %q\n%s", len(results), n, results, logs.String())
		}
		return results[n-1]
	}

	// The access token ends: refreshed, and the refresh token rotated.
	as.Expire()
	if got := ask(ts, 1); !strings.Contains(got, "caller tester") {
		t.Fatalf("whoami after the refresh: %s\n%s", got, logs.String())
	}
	if _, e, f := as.Counts(); e != 1 || f != 1 {
		t.Fatalf("exchanged, refreshed = %d, %d; want 1, 1", e, f)
	}
	stored := func(ts *testServer) map[string]any {
		t.Helper()
		var c map[string]any
		ts.must(200, "GET", "/api/conversations/"+id, nil, &c)
		s, _ := c["agent"].(map[string]any)["mcp_config"].(map[string]any)["mcpServers"].(map[string]any)["secure"].(map[string]any)["auth"].(map[string]any)["state"].(map[string]any)
		return s
	}
	saved := stored(ts)
	tokens, _ := saved["tokens"].(map[string]any)
	if rt, _ := tokens["refresh_token"].(string); rt == "" || rt == st.OAuthState.Tokens.RefreshToken || strings.HasPrefix(rt, "rt-") {
		t.Fatalf("stored refresh token %.12q: want the rotated one, encrypted", rt)
	}

	// A server restarted on a copy of the files refreshes with the rotated
	// token: no new sign-in.
	restarted := filepath.Join(t.TempDir(), "conversations")
	if err := os.CopyFS(restarted, os.DirFS(ts.opts.ConversationsPath)); err != nil {
		t.Fatal(err)
	}
	tb := newTestServer(t, opts(restarted))
	as.Expire()
	if got := ask(tb, 2); !strings.Contains(got, "caller tester") {
		t.Fatalf("whoami after the restart: %s\n%s", got, logs.String())
	}
	if r, e, f := as.Counts(); r != 1 || e != 1 || f != 2 {
		t.Errorf("registered, exchanged, refreshed = %d, %d, %d; want 1, 1, 2", r, e, f)
	}

	issued := as.Issued()
	if len(issued) != 6 { // the sign-in's pair and two refreshes'
		t.Fatalf("the authorization server issued %d tokens, want 6", len(issued))
	}
	for _, tok := range issued {
		if strings.Contains(logs.String(), tok) {
			t.Errorf("the log holds a token (%.6s...)", tok)
		}
	}
	for _, root := range []string{dir, restarted} {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				for _, tok := range issued {
					if strings.Contains(string(b), tok) {
						t.Errorf("%s holds a token in clear (%.6s...)", p, tok)
					}
				}
			}
			return nil
		})
	}
}
