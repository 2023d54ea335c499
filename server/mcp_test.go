package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/mcp/oauthtest"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server"
)

// syncBuffer is a log sink the server's goroutines may write to.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type mcpStatus struct {
	OK               bool     `json:"ok"`
	Status           string   `json:"status"`
	JobID            string   `json:"job_id"`
	AuthorizationURL string   `json:"authorization_url"`
	Tools            []string `json:"tools"`
	ToolResult       *struct {
		Text string `json:"text"`
	} `json:"tool_result"`
	OAuthState *mcpOAuthState  `json:"oauth_state"`
	Error      string          `json:"error"`
	ErrorKind  string          `json:"error_kind"`
	Raw        json.RawMessage `json:"-"`
}

type mcpOAuthState struct {
	Tokens struct {
		AccessToken  string `json:"access_token"`
		RefreshToken string `json:"refresh_token"`
	} `json:"tokens"`
	ClientInfo struct {
		ClientID string `json:"client_id"`
	} `json:"client_info"`
	TokenExpiresAt float64 `json:"token_expires_at"`
}

// authorizeMCP runs the install flow of the routes: start, the user's
// consent in a browser that cannot reach the loopback callback, the
// callback URL handed over.
func authorizeMCP(t *testing.T, ts *testServer, server map[string]any) mcpStatus {
	t.Helper()
	var start mcpStatus
	ts.must(200, "POST", "/api/mcp/oauth/start", map[string]any{"server": server}, &start)
	if !start.OK || start.JobID == "" || start.AuthorizationURL == "" {
		t.Fatalf("start: %+v", start)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	cb, err := oauthtest.ConsentURL(ctx, start.AuthorizationURL)
	if err != nil {
		t.Fatal(err)
	}
	var st mcpStatus
	ts.must(200, "POST", "/api/mcp/oauth/callback/"+start.JobID, map[string]any{"callback_url": cb}, &st)
	for deadline := time.Now().Add(time.Minute); st.Status != "succeeded" && st.Status != "failed" && time.Now().Before(deadline); {
		time.Sleep(20 * time.Millisecond) // the probe lists the tools after the callback
		st = mcpStatus{}
		ts.must(200, "GET", "/api/mcp/oauth/status/"+start.JobID, nil, &st)
	}
	return st
}

func TestMCPOAuthRoutes(t *testing.T) {
	t.Parallel()
	var logs syncBuffer
	dir := t.TempDir()
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}, SecretKey: "the secret key", PersistenceDir: dir,
		Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	cipher := secret.NewCipher("the secret key")
	as := oauthtest.New(t)
	srv := map[string]any{"type": "http", "url": as.URL, "auth": map[string]any{"strategy": "oauth2"}}

	st := authorizeMCP(t, ts, srv)
	if !st.OK || st.Status != "succeeded" || len(st.Tools) != 1 || st.Tools[0] != "whoami" || st.OAuthState == nil {
		t.Fatalf("after the callback: %+v", st)
	}
	// The state comes back encrypted with the server's key.
	access, err := cipher.DecryptString(st.OAuthState.Tokens.AccessToken)
	if err != nil || !strings.HasPrefix(access, "at-") {
		t.Fatalf("access token %q is not a token of the server's key (%v)", st.OAuthState.Tokens.AccessToken, err)
	}
	if _, err := cipher.DecryptString(st.OAuthState.Tokens.RefreshToken); err != nil {
		t.Errorf("refresh token not encrypted: %v", err)
	}

	// Saved in the settings as the reference saves it (auth.state), it is
	// encrypted at rest and redacted when read back.
	saved := map[string]any{"transport": "http", "url": as.URL, "auth": map[string]any{"strategy": "oauth2", "state": st.OAuthState}}
	ts.must(201, "POST", "/api/settings/mcp/secure", saved, nil)
	var got map[string]any
	ts.must(200, "GET", "/api/settings", nil, &got)
	stored := got["agent_settings"].(map[string]any)["mcp_config"].(map[string]any)["secure"].(map[string]any)
	if tok := stored["auth"].(map[string]any)["state"].(map[string]any)["tokens"].(map[string]any)["access_token"]; tok != "**********" {
		t.Errorf("GET /api/settings shows the access token as %v", tok)
	}
	noPlaintext := func(what string) {
		t.Helper()
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				if b, _ := os.ReadFile(p); bytes.Contains(b, []byte(access)) {
					t.Errorf("%s: %s holds the access token in clear", what, p)
				}
			}
			return nil
		})
		if strings.Contains(logs.String(), access) {
			t.Errorf("%s: the log holds the access token", what)
		}
	}
	noPlaintext("after saving")

	// The test route uses the stored (encrypted) state and calls a tool.
	var probe mcpStatus
	srv["auth"] = map[string]any{"strategy": "oauth2", "state": st.OAuthState}
	ts.must(200, "POST", "/api/mcp/test", map[string]any{"server": srv, "tool_call": map[string]any{"name": "whoami"}}, &probe)
	if !probe.OK || probe.ToolResult == nil || probe.ToolResult.Text != "caller tester" {
		t.Fatalf("test with the stored state: %+v", probe)
	}
	if r, e, f := as.Counts(); r != 1 || e != 1 || f != 0 {
		t.Errorf("registered, exchanged, refreshed = %d, %d, %d; want 1, 1, 0", r, e, f)
	}

	// An expired token is refreshed, and the new state returned.
	as.Expire()
	expired := *st.OAuthState
	expired.TokenExpiresAt = 1
	srv["auth"] = map[string]any{"strategy": "oauth2", "state": expired}
	probe = mcpStatus{}
	ts.must(200, "POST", "/api/mcp/test", map[string]any{"server": srv}, &probe)
	if !probe.OK || probe.OAuthState == nil || probe.OAuthState.Tokens.AccessToken == st.OAuthState.Tokens.AccessToken || probe.OAuthState.TokenExpiresAt <= 1 {
		t.Fatalf("test with an expired token: %+v", probe)
	}
	if _, _, f := as.Counts(); f != 1 {
		t.Errorf("refreshed %d times, want 1", f)
	}

	// A token endpoint that fails: a clear error, no state.
	as.Set(func(s *oauthtest.Server) { s.TokenStatus = 500 })
	as.Expire()
	probe = mcpStatus{}
	ts.must(200, "POST", "/api/mcp/test", map[string]any{"server": srv}, &probe)
	if probe.OK || probe.ErrorKind != "connection" || !strings.Contains(probe.Error, "authorized again") || probe.OAuthState != nil {
		t.Errorf("test against a failing token endpoint: %+v", probe)
	}
	noPlaintext("at the end")
}

func TestMCPOAuthRouteErrors(t *testing.T) {
	t.Parallel()
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}})
	as := oauthtest.New(t)
	srv := map[string]any{"url": as.URL, "auth": map[string]any{"strategy": "oauth2"}}

	// The authorization server refuses the code: the job fails and says
	// why; nothing comes back to be saved.
	as.Set(func(s *oauthtest.Server) { s.TokenError = "invalid_client" })
	st := authorizeMCP(t, ts, srv)
	if st.OK || st.Status != "failed" || !strings.Contains(st.Error, "invalid_client") || st.OAuthState != nil {
		t.Errorf("refused exchange: %+v", st)
	}

	ts.must(400, "POST", "/api/mcp/oauth/start", map[string]any{"server": map[string]any{"url": as.URL}}, nil)
	ts.must(404, "GET", "/api/mcp/oauth/status/nonexistent", nil, nil)
	ts.must(404, "POST", "/api/mcp/oauth/callback/nonexistent", map[string]any{"callback_url": "http://localhost:1/callback"}, nil)
	ts.must(422, "POST", "/api/mcp/test", map[string]any{}, nil)
	ts.must(422, "POST", "/api/mcp/test", map[string]any{"server": map[string]any{"type": "stdio"}}, nil)

	var probe mcpStatus
	ts.must(200, "POST", "/api/mcp/test", map[string]any{"server": map[string]any{"command": "/nonexistent/mcp-server"}, "timeout": 5}, &probe)
	if probe.OK || probe.ErrorKind != "connection" || !strings.Contains(probe.Error, "/nonexistent/mcp-server") {
		t.Errorf("a missing command: %+v", probe)
	}
	// A callback URL elsewhere than the job's listener is refused.
	var start mcpStatus
	as.Set(func(s *oauthtest.Server) { s.TokenError = "" })
	ts.must(200, "POST", "/api/mcp/oauth/start", map[string]any{"server": srv}, &start)
	ts.must(400, "POST", "/api/mcp/oauth/callback/"+start.JobID, map[string]any{"callback_url": "http://example.com/callback"}, nil)
	ts.must(400, "POST", "/api/mcp/oauth/callback/"+start.JobID, map[string]any{"callback_url": "http://localhost:1/callback"}, nil)
}
