package server_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/mcp/oauthtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server"
)

// A refresh of the OAuth tokens of an MCP server the conversation's agent
// carries inline is posted to each webhook at /mcp-oauth-state, with the
// session key, as {server_url, oauth_state} with the tokens in clear, as
// 1.58.2 does, so that the app server keeps the rotated refresh token. A
// webhook that fails changes nothing for the conversation. No token
// reaches the log.
func TestMCPOAuthWriteBack(t *testing.T) {
	t.Parallel()
	type post struct {
		key  string
		body []byte
	}
	var (
		mu    sync.Mutex
		posts []post
	)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/mcp-oauth-state" {
			b, _ := io.ReadAll(r.Body)
			mu.Lock()
			posts = append(posts, post{r.Header.Get("X-Session-API-Key"), b})
			mu.Unlock()
		}
	}))
	t.Cleanup(receiver.Close)
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusInternalServerError)
	}))
	t.Cleanup(failing.Close)

	var logs syncBuffer
	none := 0
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}, SecretKey: "the secret key",
		PersistenceDir: t.TempDir(),
		Webhooks:       []server.WebhookSpec{{BaseURL: failing.URL, NumRetries: &none}, {BaseURL: receiver.URL + "/"}},
		Logger:         slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	as := oauthtest.New(t)
	st := authorizeMCP(t, ts, map[string]any{"type": "http", "url": as.URL, "auth": map[string]any{"strategy": "oauth2"}})
	if !st.OK || st.OAuthState == nil {
		t.Fatalf("sign-in: %+v", st)
	}
	model := llmtest.NewResponder(t, func(r llmtest.Request) (llmtest.Reply, error) {
		if _, ok := r.Body["tools"]; !ok {
			return llmtest.Reply{Text: "OAuth"}, nil
		}
		if strings.Contains(string(r.RawBody), `"role":"tool"`) {
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

	as.Expire()
	ts.must(200, "POST", "/api/conversations/"+id+"/events", map[string]any{"role": "user", "run": true,
		"content": []any{map[string]any{"type": "text", "text": "who am I?"}}}, nil)
	ts.waitStatus(id, "finished")
	if _, e, f := as.Counts(); e != 1 || f != 1 {
		t.Fatalf("exchanged, refreshed = %d, %d; want 1, 1\n%s", e, f, logs.String())
	}

	signedIn, err := secret.NewCipher("the secret key").DecryptString(st.OAuthState.Tokens.RefreshToken)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(posts) != 1 {
		t.Fatalf("%d posts to /mcp-oauth-state, want 1 (the refresh)\n%s", len(posts), logs.String())
	}
	var got struct {
		ServerURL  string `json:"server_url"`
		OAuthState struct {
			Tokens struct {
				AccessToken  string `json:"access_token"`
				RefreshToken string `json:"refresh_token"`
			} `json:"tokens"`
			ClientInfo struct {
				ClientID string `json:"client_id"`
			} `json:"client_info"`
			TokenExpiresAt float64 `json:"token_expires_at"`
		} `json:"oauth_state"`
	}
	if err := json.Unmarshal(posts[0].body, &got); err != nil {
		t.Fatal(err)
	}
	tok := got.OAuthState.Tokens
	if posts[0].key != "sess" || got.ServerURL != strings.TrimRight(as.URL, "/") ||
		!strings.HasPrefix(tok.AccessToken, "at-") || !strings.HasPrefix(tok.RefreshToken, "rt-") ||
		tok.RefreshToken == signedIn || got.OAuthState.TokenExpiresAt == 0 ||
		got.OAuthState.ClientInfo.ClientID == "" {
		t.Fatalf("post with key %q: server_url %q, tokens at %.3q rt %.3q (sign-in's rt reused: %v), expires %v, client %q",
			posts[0].key, got.ServerURL, tok.AccessToken, tok.RefreshToken,
			tok.RefreshToken == signedIn, got.OAuthState.TokenExpiresAt, got.OAuthState.ClientInfo.ClientID)
	}
	if !strings.Contains(logs.String(), "could not write back an MCP server's OAuth state") {
		t.Errorf("the failing webhook was not logged")
	}
	for _, tok := range as.Issued() {
		if strings.Contains(logs.String(), tok) {
			t.Errorf("the log holds a token (%.6s...)", tok)
		}
	}
}
