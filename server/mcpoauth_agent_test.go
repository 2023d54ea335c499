package server_test

import (
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/mcp/oauthtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server"
)

// An agent uses an MCP server behind OAuth: the user signs in through
// /api/mcp/oauth/* (the test plays the browser), the client starts a
// conversation whose agent's mcp_config carries the oauth_state the
// sign-in returned (encrypted with the server's key), and the agent (the
// scripted model) calls the server's whoami tool and gets its answer.
// Then the authorization server ends the access token early: the next
// call refreshes it once and succeeds. Then the token endpoint fails too:
// the call after that ends in an error observation that says to
// authorize again. No token is in the server's log, its files, the
// events or the model's requests.
func TestMCPOAuthAgent(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	dir := t.TempDir()
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}, SecretKey: "the secret key", PersistenceDir: dir,
		ConversationsPath: filepath.Join(dir, "conversations"),
		Logger:            slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	as := oauthtest.New(t)
	spec := map[string]any{"type": "http", "url": as.URL, "auth": map[string]any{"strategy": "oauth2"}}
	st := authorizeMCP(t, ts, spec)
	if !st.OK || st.Status != "succeeded" || st.OAuthState == nil {
		t.Fatalf("sign-in: %+v", st)
	}

	// The model calls whoami after each user message and finishes with
	// what it got.
	var mu sync.Mutex
	var results []string // the tool results the model got, in order
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
		last := body.Messages[len(body.Messages)-1]
		if last.Role == "tool" {
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
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{"agent": a,
		"initial_message": map[string]any{"role": "user", "content": []any{map[string]any{"type": "text", "text": "who am I?"}}, "run": true}}), &info)
	id, _ := info["id"].(string)
	ask := func(text string) {
		t.Helper()
		ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "run": true,
			"content": []any{map[string]any{"type": "text", "text": text}}}, nil)
	}
	lastResult := func(n int) string {
		t.Helper()
		ts.waitStatus(id, "finished")
		mu.Lock()
		defer mu.Unlock()
		if len(results) != n {
			t.Fatalf("the model got %d tool results, want %d: %q", len(results), n, results)
		}
		return results[n-1]
	}

	// The token the sign-in got.
	if got := lastResult(1); !strings.Contains(got, "caller tester") {
		t.Fatalf("whoami with the signed-in token: %s\n%s", got, logs.String())
	}
	if r, e, f := as.Counts(); r != 1 || e != 1 || f != 0 {
		t.Errorf("registered, exchanged, refreshed = %d, %d, %d; want 1, 1, 0", r, e, f)
	}

	// The access token ends before its announced expiry: refreshed once.
	as.Expire()
	ask("and now?")
	if got := lastResult(2); !strings.Contains(got, "caller tester") {
		t.Errorf("whoami after the token ended: %s", got)
	}
	if _, e, f := as.Counts(); e != 1 || f != 1 {
		t.Errorf("exchanged, refreshed = %d, %d; want 1, 1", e, f)
	}

	// The authorization server fails: a clear error, no sign-in prompt.
	as.Set(func(s *oauthtest.Server) { s.TokenError = "invalid_grant" })
	as.Expire()
	ask("once more")
	if got := lastResult(3); !strings.Contains(got, "authorized again") || strings.Contains(got, "caller tester") {
		t.Errorf("whoami with a failing authorization server: %s", got)
	}

	// No token anywhere: the server's log and files, the events, what the
	// model was sent.
	cipher := secret.NewCipher("the secret key")
	access, err := cipher.DecryptString(st.OAuthState.Tokens.AccessToken)
	if err != nil {
		t.Fatal(err)
	}
	refresh, err := cipher.DecryptString(st.OAuthState.Tokens.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	tokens := as.Issued() // the sign-in's and the refresh's
	if len(tokens) != 4 || !slices.Equal(tokens[:2], []string{access, refresh}) {
		t.Fatalf("issued %d tokens; the sign-in's must be the first two", len(tokens))
	}
	leaks := func(what, text string) {
		t.Helper()
		for _, tok := range tokens {
			if strings.Contains(text, tok) {
				t.Errorf("%s holds a token (%.6s...)", what, tok)
			}
		}
	}
	leaks("the server log", logs.String())
	evs, _ := json.Marshal(ts.eventsOf(id))
	leaks("the events", string(evs))
	for i, r := range model.Requests() {
		leaks("model request "+string(rune('0'+i)), string(r.RawBody))
	}
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); len(b) > 0 {
				leaks(p, string(b))
			}
		}
		return nil
	})
}
