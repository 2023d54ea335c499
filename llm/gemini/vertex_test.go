package gemini_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// vertexLLM returns an LLM for a vertex_ai/ model calling srv, without an
// API key: it authorizes with the Google credentials of the environment.
func vertexLLM(t *testing.T, srv *llmtest.Server, model string, edit func(*llm.Config)) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig(model)
	cfg.BaseURL = srv.URL
	cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0, 0
	if edit != nil {
		edit(&cfg)
	}
	l, err := llm.New(cfg, &llm.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return l
}

// TestVertexGemini: a vertex_ai/gemini model is called at the aiplatform
// path of the service account's project in us-central1, plain and
// streamed, with a bearer token the token endpoint issued for the key's
// signed JWT; the token is exchanged once and reused.
func TestVertexGemini(t *testing.T) {
	tok := llmtest.NewTokenServer(t)
	llmtest.UseGoogleCredentials(t, tok.ServiceAccount(t, "test-project"))
	srv := llmtest.NewVertex(t, llmtest.Reply{Text: "plain"}, llmtest.Reply{Text: "streamed", ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"ls"}`}}})
	l := vertexLLM(t, srv, "vertex_ai/gemini-2.5-pro", nil)
	msgs := []event.Message{event.UserMessage("hi")}
	r, err := l.Completion(context.Background(), msgs, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	var streamed strings.Builder
	r2, err := l.Completion(context.Background(), msgs, nil, &llm.CallOptions{OnDelta: func(d llm.Delta) error { streamed.WriteString(d.Text); return nil }})
	if err != nil {
		t.Fatal(err)
	}
	if event.TextOf(r.Message.Content) != "plain" || streamed.String() != "streamed" || len(r2.Message.ToolCalls) != 1 {
		t.Errorf("replies %q, %q (%d calls)", event.TextOf(r.Message.Content), streamed.String(), len(r2.Message.ToolCalls))
	}
	reqs := srv.Requests()
	base := "/v1/projects/test-project/locations/us-central1/publishers/google/models/gemini-2.5-pro"
	if len(reqs) != 2 || reqs[0].Path != base+":generateContent" || reqs[1].Path != base+":streamGenerateContent" || reqs[1].Query.Get("alt") != "sse" {
		t.Fatalf("requests %+v", reqs)
	}
	for _, q := range reqs {
		token, ok := strings.CutPrefix(q.Header.Get("Authorization"), "Bearer ")
		if !ok || !tok.Issued(token) || q.Header.Get("x-goog-api-key") != "" || q.Wire != llmtest.WireVertexGemini {
			t.Errorf("request authorized with %q (api key %q), served as %s", q.Header.Get("Authorization"), q.Header.Get("x-goog-api-key"), q.Wire)
		}
	}
	ex := tok.Exchanges()
	if len(ex) != 1 || ex[0].Claims["scope"] != "https://www.googleapis.com/auth/cloud-platform" || ex[0].Header["kid"] != "0123456789abcdef" {
		t.Errorf("exchanges %+v: want one, for the cloud-platform scope", ex)
	}
}

// TestVertexTokenRefresh: a token is replaced before it expires: one
// that lives less than the refresh margin is exchanged again at every
// call, one that lives an hour is reused.
func TestVertexTokenRefresh(t *testing.T) {
	for _, tc := range []struct {
		life      time.Duration
		exchanges int
	}{{4 * time.Minute, 3}, {time.Hour, 1}} {
		tok := llmtest.NewTokenServer(t)
		tok.Lifetime = tc.life
		llmtest.UseGoogleCredentials(t, tok.ServiceAccount(t, "p"))
		srv := llmtest.NewVertex(t, llmtest.Reply{Text: "1"}, llmtest.Reply{Text: "2"}, llmtest.Reply{Text: "3"})
		l := vertexLLM(t, srv, "vertex_ai/gemini-2.5-flash", nil)
		for range 3 {
			if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
		if n := len(tok.Exchanges()); n != tc.exchanges {
			t.Errorf("tokens living %s: %d exchanges for 3 calls, want %d", tc.life, n, tc.exchanges)
		}
		last := srv.LastRequest().Header.Get("Authorization")
		if want := "Bearer " + tok.Exchanges()[tc.exchanges-1].Token; last != want {
			t.Errorf("last call sent %q, want the newest token %q", last, want)
		}
	}
}

// TestVertexADC: gcloud's application default credentials (an authorized
// user's refresh token) are found in gcloud's directory; the project is
// their quota project, billed through X-Goog-User-Project; VERTEXAI_*
// name the project and location when set.
func TestVertexADC(t *testing.T) {
	tok := llmtest.NewTokenServer(t)
	adc := tok.AuthorizedUser(t, "quota-project")
	llmtest.UseGoogleCredentials(t, adc)
	srv := llmtest.NewVertex(t, llmtest.Reply{Text: "a"}, llmtest.Reply{Text: "b"})
	l := vertexLLM(t, srv, "vertex_ai/gemini-2.5-flash", nil)
	if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	q := srv.LastRequest()
	if !strings.HasPrefix(q.Path, "/v1/projects/quota-project/locations/us-central1/") || q.Header.Get("X-Goog-User-Project") != "quota-project" {
		t.Errorf("path %s, user project %q", q.Path, q.Header.Get("X-Goog-User-Project"))
	}
	if ex := tok.Exchanges(); len(ex) != 1 || ex[0].Form["grant_type"] != "refresh_token" || ex[0].Form["refresh_token"] != llmtest.TestRefreshToken {
		t.Errorf("exchanges %+v", ex)
	}
	t.Setenv("VERTEXAI_PROJECT", "named-project")
	t.Setenv("VERTEXAI_LOCATION", "europe-west4")
	if _, err := l.Completion(context.Background(), []event.Message{event.UserMessage("hi")}, nil, nil); err != nil {
		t.Fatal(err)
	}
	if p := srv.LastRequest().Path; !strings.HasPrefix(p, "/v1/projects/named-project/locations/europe-west4/") {
		t.Errorf("path %s", p)
	}
}

// TestVertexCredentialErrors: no credentials, a refused key and a
// broken file are authentication errors said plainly, before any model
// call and without retries; a token endpoint that is down is retried. No
// secret of the files is in the errors.
func TestVertexCredentialErrors(t *testing.T) {
	msgs := []event.Message{event.UserMessage("hi")}
	t.Run("none", func(t *testing.T) {
		llmtest.UseGoogleCredentials(t, "")
		srv := llmtest.NewVertex(t)
		_, err := vertexLLM(t, srv, "vertex_ai/gemini-2.5-pro", nil).Completion(context.Background(), msgs, nil, nil)
		if !errors.Is(err, llm.ErrAuthentication) || !strings.Contains(err.Error(), "GOOGLE_APPLICATION_CREDENTIALS") || len(srv.Requests()) != 0 {
			t.Errorf("err = %v, %d requests", err, len(srv.Requests()))
		}
	})
	t.Run("refused", func(t *testing.T) {
		tok := llmtest.NewTokenServer(t)
		adc := tok.AuthorizedUser(t, "p")
		llmtest.UseGoogleCredentials(t, adc)
		tok.Fail(400)
		srv := llmtest.NewVertex(t)
		_, err := vertexLLM(t, srv, "vertex_ai/gemini-2.5-pro", nil).Completion(context.Background(), msgs, nil, nil)
		if !errors.Is(err, llm.ErrAuthentication) || len(srv.Requests()) != 0 || len(tok.Exchanges()) != 1 {
			t.Errorf("err = %v, %d requests, %d exchanges", err, len(srv.Requests()), len(tok.Exchanges()))
		}
		for _, s := range []string{llmtest.TestRefreshToken, llmtest.TestClientSecret} {
			if strings.Contains(err.Error(), s) {
				t.Errorf("error holds a secret: %v", err)
			}
		}
	})
	t.Run("down", func(t *testing.T) {
		tok := llmtest.NewTokenServer(t)
		llmtest.UseGoogleCredentials(t, tok.ServiceAccount(t, "p"))
		tok.Fail(503)
		srv := llmtest.NewVertex(t, llmtest.Reply{Text: "ok"})
		r, err := vertexLLM(t, srv, "vertex_ai/gemini-2.5-pro", func(c *llm.Config) { c.NumRetries = 2 }).Completion(context.Background(), msgs, nil, nil)
		if err != nil || event.TextOf(r.Message.Content) != "ok" || len(tok.Exchanges()) != 2 {
			t.Errorf("%v, %d exchanges", err, len(tok.Exchanges()))
		}
	})
	t.Run("broken file", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "key.json")
		if err := os.WriteFile(path, []byte(`{"type":"service_account","private_key":"-----BEGIN PRIVATE KEY-----\nTOPSECRETKEYMATERIAL`), 0o600); err != nil {
			t.Fatal(err)
		}
		llmtest.UseGoogleCredentials(t, path)
		srv := llmtest.NewVertex(t)
		_, err := vertexLLM(t, srv, "vertex_ai/gemini-2.5-pro", nil).Completion(context.Background(), msgs, nil, nil)
		if !errors.Is(err, llm.ErrAuthentication) || !strings.Contains(err.Error(), "not JSON") || strings.Contains(err.Error(), "TOPSECRET") {
			t.Errorf("err = %v", err)
		}
	})
	t.Run("other model", func(t *testing.T) {
		cfg := llm.DefaultConfig("vertex_ai/llama-3.1-405b-instruct-maas")
		if _, err := llm.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "Gemini and Claude") {
			t.Errorf("err = %v", err)
		}
	})
}

// TestVertexSecretsStayOut: the access token, the refresh token, the
// client secret and the private key reach no log, completion log or
// error, even when the server quotes the token back.
func TestVertexSecretsStayOut(t *testing.T) {
	tok := llmtest.NewTokenServer(t)
	key := tok.ServiceAccount(t, "p")
	llmtest.UseGoogleCredentials(t, key)
	var logs bytes.Buffer
	folder := t.TempDir()
	srv := llmtest.NewVertex(t, llmtest.Reply{Text: "fine"}, llmtest.Fail(503, "down"))
	cfg := llm.DefaultConfig("vertex_ai/gemini-2.5-pro")
	cfg.BaseURL, cfg.LogCompletions, cfg.LogCompletionsFolder = srv.URL, true, folder
	cfg.NumRetries, cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 2, 0, 0, 0
	l, err := llm.New(cfg, &llm.Options{Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []event.Message{event.UserMessage("hi")}
	if _, err := l.Completion(context.Background(), msgs, nil, nil); err != nil {
		t.Fatal(err)
	}
	token := tok.Exchanges()[0].Token
	srv.Add(llmtest.Reply{Fail: &llmtest.Failure{Status: 401, Message: "Request had invalid authentication credentials: " + token}})
	_, err = l.Completion(context.Background(), msgs, nil, nil)
	if err == nil || !strings.Contains(err.Error(), "[redacted]") {
		t.Fatalf("err = %v, want the quoted token redacted", err)
	}
	keyFile, _ := os.ReadFile(key)
	var files bytes.Buffer
	entries, _ := os.ReadDir(folder)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(folder, e.Name()))
		files.Write(b)
	}
	if len(entries) < 2 || logs.Len() == 0 {
		t.Fatalf("%d completion logs, %d bytes of logs", len(entries), logs.Len())
	}
	pk := string(keyFile[bytes.Index(keyFile, []byte("MII")):][:40])
	for _, s := range []string{token, pk} {
		for where, text := range map[string]string{"logs": logs.String(), "completion logs": files.String(), "error": err.Error()} {
			if strings.Contains(text, s) {
				t.Errorf("%s hold the secret %.16s…", where, s)
			}
		}
	}
}
