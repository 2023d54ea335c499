// Package subscriptiontest is a scripted OpenAI OAuth issuer on loopback
// for tests of the subscription device login: it hands out device codes,
// answers "pending" (403) until the test approves a login, then the
// authorization code and PKCE verifier, exchanges them for tokens, and
// refreshes tokens, checking what the reference's client sends at each
// step. A test can also make it deny or expire a login, or fail an
// endpoint with a status of its choice.
package subscriptiontest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/gohands/gohands/llm/subscription"
)

// Paths of the issuer's endpoints.
const (
	UserCodePath = "/api/accounts/deviceauth/usercode"
	PollPath     = "/api/accounts/deviceauth/token"
	TokenPath    = "/oauth/token"
)

// Issuer is a scripted issuer; URL is its base URL (Options.Issuer).
type Issuer struct {
	URL string
	t   testing.TB

	mu      sync.Mutex
	n       int
	logins  map[string]*login // by user code
	codes   map[string]string // authorization code → verifier
	refresh map[string]bool   // refresh tokens that are good
	fail    map[string]int    // path → status to answer
	calls   map[string]int    // path → requests
	hold    map[string]*hold  // path → requests wait
}

type hold struct {
	arrived chan struct{}
	gate    chan struct{}
	once    sync.Once
}

type login struct {
	id       string
	approved bool
	refused  string // an OAuth error code answered to polls
}

// NewIssuer starts an issuer, closed when the test ends.
func NewIssuer(t testing.TB) *Issuer {
	is := &Issuer{t: t, logins: map[string]*login{}, codes: map[string]string{}, refresh: map[string]bool{}, fail: map[string]int{}, calls: map[string]int{}, hold: map[string]*hold{}}
	srv := httptest.NewServer(http.HandlerFunc(is.serve))
	t.Cleanup(srv.Close)
	is.URL = srv.URL
	return is
}

// Approve finishes the login of userCode, as a user entering it would.
func (is *Issuer) Approve(userCode string) { is.set(userCode, func(l *login) { l.approved = true }) }

// Refuse makes polls of userCode's login answer 400 with the OAuth error
// code (such as "access_denied" or "expired_token").
func (is *Issuer) Refuse(userCode, code string) {
	is.set(userCode, func(l *login) { l.refused = code })
}

func (is *Issuer) set(userCode string, f func(*login)) {
	is.mu.Lock()
	defer is.mu.Unlock()
	l := is.logins[userCode]
	if l == nil {
		is.t.Errorf("subscriptiontest: no login has the user code %q", userCode)
		return
	}
	f(l)
}

// Fail makes the endpoint at path answer status (0: answer normally).
func (is *Issuer) Fail(path string, status int) {
	is.mu.Lock()
	defer is.mu.Unlock()
	is.fail[path] = status
}

// Calls is how many requests the endpoint at path has had.
func (is *Issuer) Calls(path string) int {
	is.mu.Lock()
	defer is.mu.Unlock()
	return is.calls[path]
}

// RevokeRefreshTokens makes every refresh token issued so far bad.
func (is *Issuer) RevokeRefreshTokens() {
	is.mu.Lock()
	defer is.mu.Unlock()
	clear(is.refresh)
}

// Hold makes the requests to path wait until release is called (at the
// latest when the test ends); arrived receives once for each request that
// waits, so a test can act while one is in flight.
func (is *Issuer) Hold(path string) (arrived <-chan struct{}, release func()) {
	h := &hold{arrived: make(chan struct{}, 64), gate: make(chan struct{})}
	is.mu.Lock()
	is.hold[path] = h
	is.mu.Unlock()
	release = func() {
		h.once.Do(func() {
			is.mu.Lock()
			if is.hold[path] == h {
				delete(is.hold, path)
			}
			is.mu.Unlock()
			close(h.gate)
		})
	}
	is.t.Cleanup(release)
	return h.arrived, release
}

func (is *Issuer) serve(w http.ResponseWriter, r *http.Request) {
	is.mu.Lock()
	h := is.hold[r.URL.Path]
	is.mu.Unlock()
	if h != nil {
		select {
		case h.arrived <- struct{}{}:
		default:
		}
		<-h.gate
	}
	is.mu.Lock()
	defer is.mu.Unlock()
	is.calls[r.URL.Path]++
	if st := is.fail[r.URL.Path]; st != 0 {
		answer(w, st, map[string]any{"error": map[string]string{"message": "scripted failure"}})
		return
	}
	if r.Method != http.MethodPost {
		is.t.Errorf("subscriptiontest: %s %s", r.Method, r.URL.Path)
		http.Error(w, "method", http.StatusMethodNotAllowed)
		return
	}
	switch r.URL.Path {
	case UserCodePath:
		var b struct {
			ClientID string `json:"client_id"`
		}
		if json.NewDecoder(r.Body).Decode(&b) != nil || b.ClientID != subscription.ClientID {
			is.t.Errorf("subscriptiontest: a device code request without the client id")
			answer(w, 400, map[string]string{"error": "invalid_client"})
			return
		}
		is.n++
		code := fmt.Sprintf("CODE-%04d", is.n)
		is.logins[code] = &login{id: fmt.Sprintf("deviceauth_%d", is.n)}
		// The interval comes as a string, as OpenAI sends it.
		answer(w, 200, map[string]any{"device_auth_id": is.logins[code].id, "user_code": code, "interval": "1"})
	case PollPath:
		var b struct {
			ID   string `json:"device_auth_id"`
			Code string `json:"user_code"`
		}
		_ = json.NewDecoder(r.Body).Decode(&b)
		l := is.logins[b.Code]
		switch {
		case l == nil || l.id != b.ID:
			answer(w, 404, map[string]any{"error": map[string]string{"message": "unknown device code", "code": "deviceauth_not_found"}})
		case l.refused != "":
			answer(w, 400, map[string]string{"error": l.refused})
		case !l.approved:
			answer(w, 403, map[string]any{"error": map[string]string{"message": "Device authorization is pending", "code": "authorization_pending"}})
		default:
			is.n++
			ac, ver := fmt.Sprintf("authcode-%d", is.n), fmt.Sprintf("verifier-%d", is.n)
			is.codes[ac] = ver
			delete(is.logins, b.Code) // a login completes once
			answer(w, 200, map[string]string{"authorization_code": ac, "code_verifier": ver, "code_challenge": "challenge"})
		}
	case TokenPath:
		if err := r.ParseForm(); err != nil || r.PostForm.Get("client_id") != subscription.ClientID {
			answer(w, 400, map[string]string{"error": "invalid_client"})
			return
		}
		f := r.PostForm
		switch f.Get("grant_type") {
		case "authorization_code":
			ver, ok := is.codes[f.Get("code")]
			if !ok || ver != f.Get("code_verifier") || f.Get("redirect_uri") != is.URL+"/deviceauth/callback" {
				answer(w, 400, map[string]string{"error": "invalid_grant"})
				return
			}
			delete(is.codes, f.Get("code"))
		case "refresh_token":
			if !is.refresh[f.Get("refresh_token")] {
				answer(w, 401, map[string]string{"error": "invalid_grant"})
				return
			}
			delete(is.refresh, f.Get("refresh_token")) // rotated
		default:
			answer(w, 400, map[string]string{"error": "unsupported_grant_type"})
			return
		}
		is.n++
		rt := fmt.Sprintf("refresh-token-%d", is.n)
		is.refresh[rt] = true
		answer(w, 200, map[string]any{"access_token": fmt.Sprintf("access-token-%d", is.n), "refresh_token": rt, "id_token": "id-token", "expires_in": 3600, "token_type": "Bearer"})
	default:
		is.t.Errorf("subscriptiontest: unexpected %s %s", r.Method, r.URL.Path)
		http.NotFound(w, r)
	}
}

func answer(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	json.NewEncoder(w).Encode(v)
}
