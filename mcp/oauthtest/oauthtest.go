// Package oauthtest serves an MCP server behind OAuth 2 on loopback, for
// tests: protected resource metadata, authorization server metadata,
// dynamic client registration, an authorization endpoint that consents at
// once, a token endpoint (authorization code with PKCE S256, refresh
// token) and a streamable HTTP MCP endpoint with one tool, "whoami", that
// requires a valid access token.
package oauthtest

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
)

// Server is the authorization server and the MCP server, on one origin.
type Server struct {
	URL    string // the MCP endpoint (origin + "/mcp")
	Origin string // the issuer

	mu sync.Mutex
	// TokenTTL is the lifetime of issued access tokens (default 1 h).
	TokenTTL time.Duration
	// TokenError, if set, is the OAuth error code the token endpoint
	// answers every request with (HTTP 400).
	TokenError string
	// TokenStatus, if set, is a status the token endpoint answers with
	// instead (for example 500), with a non-JSON body.
	TokenStatus int
	clients     map[string]string // client id -> redirect URI
	codes       map[string]grant  // authorization code -> grant
	access      map[string]time.Time
	refresh     map[string]string // refresh token -> client id
	issued      []string          // every token handed out, in order
	registered  int
	exchanged   int
	refreshed   int
}

type grant struct {
	client, challenge, redirect string
}

// New starts a Server, closed when the test ends.
func New(t testing.TB) *Server {
	s := &Server{
		TokenTTL: time.Hour,
		clients:  map[string]string{},
		codes:    map[string]grant{},
		access:   map[string]time.Time{},
		refresh:  map[string]string{},
	}
	mux := http.NewServeMux()
	hs := httptest.NewServer(mux)
	t.Cleanup(hs.Close)
	s.Origin, s.URL = hs.URL, hs.URL+"/mcp"

	mux.Handle("GET /.well-known/oauth-protected-resource/mcp", auth.ProtectedResourceMetadataHandler(&oauthex.ProtectedResourceMetadata{
		Resource:             s.URL,
		AuthorizationServers: []string{s.Origin},
	}))
	mux.HandleFunc("GET /.well-known/oauth-authorization-server", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"issuer":                                s.Origin,
			"authorization_endpoint":                s.Origin + "/authorize",
			"token_endpoint":                        s.Origin + "/oauth/token",
			"registration_endpoint":                 s.Origin + "/register",
			"response_types_supported":              []string{"code"},
			"grant_types_supported":                 []string{"authorization_code", "refresh_token"},
			"code_challenge_methods_supported":      []string{"S256"},
			"token_endpoint_auth_methods_supported": []string{"none"},
		})
	})
	mux.HandleFunc("POST /register", s.register)
	mux.HandleFunc("GET /authorize", s.authorize)
	mux.HandleFunc("POST /oauth/token", s.token)

	mcpServer := sdk.NewServer(&sdk.Implementation{Name: "oauthtest", Version: "1"}, nil)
	type whoamiArgs struct{}
	sdk.AddTool(mcpServer, &sdk.Tool{Name: "whoami", Description: "Says who called"}, func(ctx context.Context, req *sdk.CallToolRequest, _ whoamiArgs) (*sdk.CallToolResult, any, error) {
		who := "nobody"
		if ti := req.Extra.TokenInfo; ti != nil {
			who = ti.UserID
		}
		return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: "caller " + who}}}, nil, nil
	})
	handler := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return mcpServer }, &sdk.StreamableHTTPOptions{Stateless: true})
	mux.Handle("/mcp", auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
		ResourceMetadataURL: s.Origin + "/.well-known/oauth-protected-resource/mcp",
	})(handler))
	return s
}

// Counts returns how many clients registered, codes were exchanged and
// tokens refreshed.
func (s *Server) Counts() (registered, exchanged, refreshed int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.registered, s.exchanged, s.refreshed
}

// Issued returns every access and refresh token the Server has handed
// out, in order: what a test that no token may be left in clear looks
// for. (A prefix would do no better: "at-" turns up in encrypted values
// and in words.)
func (s *Server) Issued() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.issued)
}

// Set changes the Server's settings under its lock.
func (s *Server) Set(f func(s *Server)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// Expire makes every access token issued so far invalid.
func (s *Server) Expire() {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k := range s.access {
		s.access[k] = time.Now().Add(-time.Minute)
	}
}

func (s *Server) verify(_ context.Context, token string, _ *http.Request) (*auth.TokenInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	exp, ok := s.access[token]
	if !ok || time.Now().After(exp) {
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{Expiration: exp, UserID: "tester"}, nil
}

func (s *Server) register(w http.ResponseWriter, r *http.Request) {
	var m struct {
		RedirectURIs []string `json:"redirect_uris"`
	}
	if err := json.NewDecoder(r.Body).Decode(&m); err != nil || len(m.RedirectURIs) == 0 {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_client_metadata"})
		return
	}
	s.mu.Lock()
	id := "client-" + rand.Text()[:8]
	s.clients[id] = m.RedirectURIs[0]
	s.registered++
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, map[string]any{
		"client_id":                  id,
		"redirect_uris":              m.RedirectURIs,
		"token_endpoint_auth_method": "none",
		"grant_types":                []string{"authorization_code", "refresh_token"},
		"response_types":             []string{"code"},
	})
}

// authorize consents at once: it redirects to the client's redirect URI
// with a code, or with error=invalid_request for a request without PKCE.
func (s *Server) authorize(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	s.mu.Lock()
	redirect, ok := s.clients[q.Get("client_id")]
	s.mu.Unlock()
	if !ok || q.Get("redirect_uri") != redirect {
		http.Error(w, "unknown client or redirect_uri", http.StatusBadRequest)
		return
	}
	back, _ := url.Parse(redirect)
	v := url.Values{"state": {q.Get("state")}}
	if q.Get("code_challenge") == "" || q.Get("code_challenge_method") != "S256" || q.Get("response_type") != "code" {
		v.Set("error", "invalid_request")
	} else {
		code := rand.Text()
		s.mu.Lock()
		s.codes[code] = grant{client: q.Get("client_id"), challenge: q.Get("code_challenge"), redirect: redirect}
		s.mu.Unlock()
		v.Set("code", code)
	}
	back.RawQuery = v.Encode()
	http.Redirect(w, r, back.String(), http.StatusFound)
}

func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_request"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.TokenStatus != 0 {
		http.Error(w, "the token service is down", s.TokenStatus)
		return
	}
	if s.TokenError != "" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": s.TokenError, "error_description": "refused by the test"})
		return
	}
	client := r.PostForm.Get("client_id")
	switch r.PostForm.Get("grant_type") {
	case "authorization_code":
		g, ok := s.codes[r.PostForm.Get("code")]
		delete(s.codes, r.PostForm.Get("code"))
		sum := sha256.Sum256([]byte(r.PostForm.Get("code_verifier")))
		if !ok || g.client != client || g.redirect != r.PostForm.Get("redirect_uri") ||
			base64.RawURLEncoding.EncodeToString(sum[:]) != g.challenge {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "bad code, client, redirect_uri or code_verifier"})
			return
		}
		s.exchanged++
	case "refresh_token":
		c, ok := s.refresh[r.PostForm.Get("refresh_token")]
		if !ok || c != client {
			writeJSON(w, http.StatusBadRequest, map[string]string{"error": "invalid_grant", "error_description": "unknown refresh token"})
			return
		}
		delete(s.refresh, r.PostForm.Get("refresh_token")) // rotated
		s.refreshed++
	default:
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	access, refresh := "at-"+rand.Text(), "rt-"+rand.Text()
	s.access[access] = time.Now().Add(s.TokenTTL)
	s.refresh[refresh] = client
	s.issued = append(s.issued, access, refresh)
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token":  access,
		"token_type":    "Bearer",
		"expires_in":    int(s.TokenTTL / time.Second),
		"refresh_token": refresh,
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}

// Consent is a browser that the user lets consent: it opens
// authorizationURL without following the redirect and returns the query
// the authorization server sent the browser back with.
func Consent(ctx context.Context, authorizationURL string) (url.Values, error) {
	loc, err := ConsentURL(ctx, authorizationURL)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(loc)
	if err != nil {
		return nil, err
	}
	return u.Query(), nil
}

// ConsentURL is Consent's redirect: the callback URL with its query.
func ConsentURL(ctx context.Context, authorizationURL string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authorizationURL, nil)
	if err != nil {
		return "", err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return "", err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound {
		return "", fmt.Errorf("authorization endpoint answered %s", resp.Status)
	}
	loc := resp.Header.Get("Location")
	if loc == "" {
		return "", errors.New("no redirect")
	}
	return loc, nil
}
