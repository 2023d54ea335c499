package mcp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/oauthex"
	"golang.org/x/oauth2"

	"github.com/gohands/gohands/secret"
)

// OAuthState is what an oauth2 credential keeps between connections (its
// "state"): the tokens, the client the authorization server registered
// and when the access token expires, in the reference's token-storage
// layout. Its secrets are secret.String values, so they are redacted,
// encrypted or exposed as the rest of a Config's secrets are.
type OAuthState struct {
	Tokens     *OAuthTokens     `json:"tokens,omitempty"`
	ClientInfo *OAuthClientInfo `json:"client_info,omitempty"`
	// TokenExpiresAt is when the access token expires, in seconds since
	// the epoch; 0 means unknown.
	TokenExpiresAt float64 `json:"token_expires_at,omitempty"`
}

// OAuthTokens are the tokens of an OAuthState.
type OAuthTokens struct {
	AccessToken  secret.String `json:"access_token,omitzero"`
	TokenType    string        `json:"token_type,omitempty"`
	ExpiresIn    int64         `json:"expires_in,omitempty"`
	Scope        string        `json:"scope,omitempty"`
	RefreshToken secret.String `json:"refresh_token,omitzero"`
}

// OAuthClientInfo is the OAuth client an OAuthState's tokens were issued
// to (registered dynamically or configured).
type OAuthClientInfo struct {
	ClientID                string        `json:"client_id,omitempty"`
	ClientSecret            secret.String `json:"client_secret,omitzero"`
	RedirectURIs            []string      `json:"redirect_uris,omitempty"`
	TokenEndpointAuthMethod string        `json:"token_endpoint_auth_method,omitempty"`
	GrantTypes              []string      `json:"grant_types,omitempty"`
	ResponseTypes           []string      `json:"response_types,omitempty"`
	ClientName              string        `json:"client_name,omitempty"`
	// Issuer is the authorization server a dynamically registered client
	// was registered with (1.58.2's SEP-2352 stamp); kept, not checked.
	Issuer string `json:"issuer,omitempty"`
}

// IsZero reports whether st holds nothing.
func (st *OAuthState) IsZero() bool {
	return st == nil || (st.Tokens == nil && st.ClientInfo == nil && st.TokenExpiresAt == 0)
}

func (st *OAuthState) clone() *OAuthState {
	if st == nil {
		return nil
	}
	c := *st
	if st.Tokens != nil {
		t := *st.Tokens
		c.Tokens = &t
	}
	if st.ClientInfo != nil {
		ci := *st.ClientInfo
		c.ClientInfo = &ci
	}
	return &c
}

func (st *OAuthState) mapSecrets(f func(secret.String) (secret.String, error)) (*OAuthState, error) {
	if st == nil {
		return nil, nil
	}
	c := st.clone()
	var err error
	if c.Tokens != nil {
		if c.Tokens.AccessToken, err = mapOne(f, c.Tokens.AccessToken); err != nil {
			return nil, err
		}
		if c.Tokens.RefreshToken, err = mapOne(f, c.Tokens.RefreshToken); err != nil {
			return nil, err
		}
	}
	if c.ClientInfo != nil {
		if c.ClientInfo.ClientSecret, err = mapOne(f, c.ClientInfo.ClientSecret); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// OAuthOptions configures how Connect uses servers whose auth strategy is
// oauth2.
type OAuthOptions struct {
	// Save is called with a server's new state each time its tokens are
	// obtained or refreshed, so that they outlive the connection (the
	// server keeps them in its settings). A failing Save is logged; the
	// connection keeps the new tokens.
	Save func(server string, st *OAuthState) error
	// Authorize, if set, lets a user authorize a server that has no
	// usable tokens: it is given the authorization server's URL to open
	// and returns the query of the request the authorization server
	// redirected to RedirectURL (code and state, or error). Without it
	// such a server fails to connect and asks to be authorized again.
	Authorize func(ctx context.Context, authorizationURL string) (url.Values, error)
	// RedirectURL is the callback URL registered with the authorization
	// server; required with Authorize.
	RedirectURL string
}

// ErrOAuthReauthorize is the cause of a failed connection to an oauth2
// server whose stored tokens are missing or could not be refreshed, when
// no one can authorize it (OAuthOptions.Authorize is nil).
var ErrOAuthReauthorize = errors.New("it must be authorized again: no stored OAuth token, or its refresh failed")

// expirySkew refreshes a token this long before it expires, so that it
// does not expire in flight.
const expirySkew = 30 * time.Second

// oauthHandler is an auth.OAuthHandler over an OAuthState: it sends the
// stored access token, refreshes it at the token endpoint it discovers,
// and runs the authorization code flow (PKCE, go-sdk's auth package) when
// someone can authorize.
type oauthHandler struct {
	server   string
	url      string
	settings *OAuthSettings
	opts     *OAuthOptions
	client   *http.Client
	log      *slog.Logger

	mu        sync.Mutex
	state     *OAuthState
	tokenURL  string // discovered or learnt from the authorization
	authStyle oauth2.AuthStyle
	// failed is the error of the last authorization, until tokens come:
	// one connection sends several requests (the SDK falls back from one
	// handshake to another), and the user is asked once.
	failed error
}

func newOAuthHandler(name string, spec *Server, opts *Options) *oauthHandler {
	o := opts.OAuth
	if o == nil {
		o = &OAuthOptions{}
	}
	c := opts.HTTPClient
	if c == nil {
		c = &http.Client{Timeout: 30 * time.Second}
	}
	h := &oauthHandler{server: name, url: spec.URL, settings: spec.Auth.OAuth, opts: o, client: c, log: opts.Logger}
	h.state = spec.Auth.State.clone()
	return h
}

// State returns a copy of the current state.
func (h *oauthHandler) State() *OAuthState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state.clone()
}

// TokenSource implements auth.OAuthHandler: nil (no header) until there
// is an access token.
func (h *oauthHandler) TokenSource(context.Context) (oauth2.TokenSource, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.state == nil || h.state.Tokens == nil || h.state.Tokens.AccessToken.IsZero() {
		return nil, nil
	}
	return h, nil
}

// Token implements oauth2.TokenSource: the stored token, refreshed first
// when it has expired.
func (h *oauthHandler) Token() (*oauth2.Token, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.state
	if st == nil || st.Tokens == nil || st.Tokens.AccessToken.IsZero() {
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "no access token"}
	}
	exp := expiry(st.TokenExpiresAt)
	if exp.IsZero() || time.Until(exp) > expirySkew {
		return &oauth2.Token{AccessToken: st.Tokens.AccessToken.Value(), TokenType: "Bearer", Expiry: exp}, nil
	}
	if st.Tokens.RefreshToken.IsZero() {
		// Only a new authorization helps: the transport gets a 401 and
		// calls Authorize.
		return nil, &oauth2.RetrieveError{ErrorCode: "invalid_grant", ErrorDescription: "the access token expired and there is no refresh token"}
	}
	return h.refreshLocked()
}

func expiry(at float64) time.Time {
	if at <= 0 {
		return time.Time{}
	}
	sec, frac := math.Modf(at)
	return time.Unix(int64(sec), int64(frac*1e9))
}

// refreshLocked exchanges the refresh token for new tokens. On failure the
// stored state is left as it was.
func (h *oauthHandler) refreshLocked() (*oauth2.Token, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if h.tokenURL == "" {
		if err := h.discoverLocked(ctx); err != nil {
			return nil, fmt.Errorf("refreshing the OAuth token of MCP server %q: %w", h.server, err)
		}
	}
	cfg := h.configLocked()
	old := &oauth2.Token{RefreshToken: h.state.Tokens.RefreshToken.Value(), Expiry: time.Unix(1, 0)}
	tok, err := cfg.TokenSource(context.WithValue(ctx, oauth2.HTTPClient, h.client), old).Token()
	if err != nil {
		h.log.Warn("mcp: OAuth token refresh failed", "server", h.server, "err", err)
		var re *oauth2.RetrieveError
		if errors.As(err, &re) {
			// The token endpoint refused: a 401 follows, and Authorize
			// says what to do.
			return nil, &oauth2.RetrieveError{Response: re.Response, Body: re.Body, ErrorCode: "invalid_grant", ErrorDescription: re.Error()}
		}
		return nil, fmt.Errorf("refreshing the OAuth token of MCP server %q: %w", h.server, err)
	}
	h.setTokenLocked(tok, nil)
	return &oauth2.Token{AccessToken: tok.AccessToken, TokenType: "Bearer", Expiry: tok.Expiry}, nil
}

func (h *oauthHandler) configLocked() *oauth2.Config {
	cfg := &oauth2.Config{Endpoint: oauth2.Endpoint{TokenURL: h.tokenURL, AuthStyle: h.authStyle}}
	if ci := h.state.ClientInfo; ci != nil {
		cfg.ClientID, cfg.ClientSecret = ci.ClientID, ci.ClientSecret.Value()
	}
	if s := h.settings; s != nil && s.ClientID != "" {
		cfg.ClientID, cfg.ClientSecret = s.ClientID, s.ClientSecret.Value()
	}
	if cfg.Endpoint.AuthStyle == oauth2.AuthStyleAutoDetect && cfg.ClientSecret == "" {
		cfg.Endpoint.AuthStyle = oauth2.AuthStyleInParams
	}
	return cfg
}

// discoverLocked finds the token endpoint as the MCP authorization spec
// says: the server's protected resource metadata names the authorization
// server, whose metadata names the endpoint; without metadata, /token at
// the authorization server's (or the MCP server's) origin.
func (h *oauthHandler) discoverLocked(ctx context.Context) error {
	u, err := url.Parse(h.url)
	if err != nil {
		return err
	}
	issuer := h.issuer(ctx, u)
	asm, err := auth.GetAuthServerMetadata(ctx, issuer, h.client)
	if err != nil {
		return fmt.Errorf("authorization server metadata of %s: %w", issuer, err)
	}
	if asm == nil || asm.TokenEndpoint == "" {
		h.tokenURL = strings.TrimRight(issuer, "/") + "/token"
		return nil
	}
	h.tokenURL = asm.TokenEndpoint
	if h.settings != nil && h.settings.ClientAuthMethod != "" {
		h.authStyle = styleOf(h.settings.ClientAuthMethod)
	}
	return nil
}

// issuer is the authorization server the MCP server at u names in its
// protected resource metadata, or u's origin.
func (h *oauthHandler) issuer(ctx context.Context, u *url.URL) string {
	origin := u.Scheme + "://" + u.Host
	for _, prmURL := range []string{
		origin + "/.well-known/oauth-protected-resource" + strings.TrimRight(u.Path, "/"),
		origin + "/.well-known/oauth-protected-resource",
	} {
		prm, err := oauthex.GetProtectedResourceMetadata(ctx, prmURL, h.url, h.client)
		if err == nil && len(prm.AuthorizationServers) > 0 {
			return prm.AuthorizationServers[0]
		}
	}
	return origin
}

// issuerID is issuer written as 1.58.2 records it in a registered
// client's "issuer": a URL without a path gets a trailing "/".
func issuerID(issuer string) string {
	if u, err := url.Parse(issuer); err == nil && u.Path == "" {
		return issuer + "/"
	}
	return issuer
}

func styleOf(method string) oauth2.AuthStyle {
	if method == "client_secret_basic" {
		return oauth2.AuthStyleInHeader
	}
	return oauth2.AuthStyleInParams
}

// setTokenLocked stores tok (and the client it was issued to, if given),
// then saves the state.
func (h *oauthHandler) setTokenLocked(tok *oauth2.Token, client *OAuthClientInfo) {
	st := h.state.clone()
	if st == nil {
		st = &OAuthState{}
	}
	t := &OAuthTokens{AccessToken: secret.New(tok.AccessToken), TokenType: tok.TokenType, ExpiresIn: tok.ExpiresIn}
	if t.TokenType == "" {
		t.TokenType = "Bearer"
	}
	if scope, ok := tok.Extra("scope").(string); ok {
		t.Scope = scope
	}
	t.RefreshToken = secret.New(tok.RefreshToken)
	if t.RefreshToken.IsZero() && st.Tokens != nil {
		// A refresh that returns no new refresh token keeps the old one.
		t.RefreshToken = st.Tokens.RefreshToken
	}
	st.Tokens = t
	st.TokenExpiresAt = 0
	if !tok.Expiry.IsZero() {
		st.TokenExpiresAt = float64(tok.Expiry.UnixMilli()) / 1000
	}
	if client != nil {
		st.ClientInfo = client
	}
	h.state, h.failed = st, nil
	if h.opts.Save != nil {
		if err := h.opts.Save(h.server, st.clone()); err != nil {
			h.log.Warn("mcp: saving the OAuth state failed", "server", h.server, "err", err)
		}
	}
}

// Authorize implements auth.OAuthHandler: the authorization code flow with
// PKCE, or ErrOAuthReauthorize when no one can authorize. A 401 to a
// request that carried an access token is first answered by refreshing
// it (the server may end a token before the expiry it announced); the
// transport then sends the request again once. The reference goes
// straight to a new authorization, which needs a user at a browser.
func (h *oauthHandler) Authorize(ctx context.Context, req *http.Request, resp *http.Response) error {
	if resp.StatusCode == http.StatusUnauthorized && req.Header.Get("Authorization") != "" && h.refreshRejected(req) {
		resp.Body.Close()
		return nil
	}
	if h.opts.Authorize == nil {
		resp.Body.Close()
		return fmt.Errorf("MCP server %q (%s): %w", h.server, h.url, ErrOAuthReauthorize)
	}
	h.mu.Lock()
	if h.failed != nil {
		err := h.failed
		h.mu.Unlock()
		resp.Body.Close()
		return err
	}
	cfg := &auth.AuthorizationCodeHandlerConfig{
		RedirectURL:         h.opts.RedirectURL,
		Client:              h.client,
		RequestRefreshToken: true,
		AuthorizationCodeFetcher: func(ctx context.Context, args *auth.AuthorizationArgs) (*auth.AuthorizationResult, error) {
			q, err := h.opts.Authorize(ctx, args.URL)
			if err != nil {
				return nil, err
			}
			if e := q.Get("error"); e != "" {
				return nil, fmt.Errorf("the authorization server refused: %s %s", e, q.Get("error_description"))
			}
			if q.Get("code") == "" {
				return nil, errors.New("the OAuth callback carries no code")
			}
			return &auth.AuthorizationResult{Code: q.Get("code"), State: q.Get("state"), Iss: q.Get("iss")}, nil
		},
	}
	s := h.settings
	var clientID, clientSecret, method, registeredWith string
	switch {
	case s != nil && s.ClientID != "":
		clientID, clientSecret, method = s.ClientID, s.ClientSecret.Value(), s.ClientAuthMethod
	case h.state != nil && h.state.ClientInfo != nil && h.state.ClientInfo.ClientID != "" &&
		(len(h.state.ClientInfo.RedirectURIs) == 0 || h.state.ClientInfo.RedirectURIs[0] == h.opts.RedirectURL):
		ci := h.state.ClientInfo
		clientID, clientSecret, method = ci.ClientID, ci.ClientSecret.Value(), ci.TokenEndpointAuthMethod
	}
	if clientID != "" {
		cc := &oauthex.ClientCredentials{ClientID: clientID}
		if clientSecret != "" {
			cc.ClientSecretAuth = &oauthex.ClientSecretAuth{ClientSecret: clientSecret}
		}
		cfg.PreregisteredClient = cc
	} else {
		if u, err := url.Parse(h.url); err == nil {
			registeredWith = issuerID(h.issuer(ctx, u))
		}
		method = "none"
		if s != nil && s.ClientAuthMethod != "" {
			method = s.ClientAuthMethod
		}
		name := "gohands"
		if s != nil && s.ClientName != "" {
			name = s.ClientName
		}
		cfg.DynamicClientRegistrationConfig = &auth.DynamicClientRegistrationConfig{Metadata: &oauthex.ClientRegistrationMetadata{
			RedirectURIs:            []string{h.opts.RedirectURL},
			ClientName:              name,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			TokenEndpointAuthMethod: method,
		}}
	}
	if scopes := s.scopes(); len(scopes) > 0 {
		cfg.ScopeFilter = func([]string) []string { return scopes }
	}
	cfg.NewTokenSource = func(_ context.Context, c *oauth2.Config, tok *oauth2.Token) (oauth2.TokenSource, error) {
		// Called by the go-sdk's Authorize (under no lock of ours) once
		// the code is exchanged: keep the token and its client.
		h.mu.Lock()
		defer h.mu.Unlock()
		h.tokenURL, h.authStyle = c.Endpoint.TokenURL, c.Endpoint.AuthStyle
		h.setTokenLocked(tok, &OAuthClientInfo{
			ClientID:                c.ClientID,
			ClientSecret:            secret.New(c.ClientSecret),
			RedirectURIs:            []string{c.RedirectURL},
			TokenEndpointAuthMethod: method,
			GrantTypes:              []string{"authorization_code", "refresh_token"},
			ResponseTypes:           []string{"code"},
			Issuer:                  registeredWith,
		})
		return h, nil
	}
	h.mu.Unlock()
	inner, err := auth.NewAuthorizationCodeHandler(cfg)
	if err != nil {
		resp.Body.Close()
		return fmt.Errorf("MCP server %q: OAuth: %w", h.server, err)
	}
	if err := inner.Authorize(ctx, req, resp); err != nil {
		err = fmt.Errorf("MCP server %q: OAuth authorization failed: %w", h.server, err)
		h.mu.Lock()
		h.failed = err
		h.mu.Unlock()
		return err
	}
	return nil
}

// refreshRejected refreshes the access token req was rejected with, and
// reports whether there is a new one. A token already replaced (by
// another request's refresh) counts as new.
func (h *oauthHandler) refreshRejected(req *http.Request) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	st := h.state
	if st == nil || st.Tokens == nil || st.Tokens.RefreshToken.IsZero() {
		return false
	}
	if req.Header.Get("Authorization") != "Bearer "+st.Tokens.AccessToken.Value() {
		return true
	}
	_, err := h.refreshLocked()
	return err == nil
}

// scopes returns the configured scopes (a string of space-separated
// scopes or a list).
func (s *OAuthSettings) scopes() []string {
	if s == nil {
		return nil
	}
	switch v := s.Scopes.(type) {
	case string:
		return strings.Fields(v)
	case []any:
		var out []string
		for _, x := range v {
			if str, ok := x.(string); ok {
				out = append(out, str)
			}
		}
		return out
	case []string:
		return v
	}
	return nil
}
