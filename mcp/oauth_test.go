package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/mcp/oauthtest"
	"github.com/gohands/gohands/secret"
)

// saves records the states OAuthOptions.Save was given.
type saves struct {
	mu  sync.Mutex
	got []*OAuthState
}

func (s *saves) save(_ string, st *OAuthState) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.got = append(s.got, st)
	return nil
}

func (s *saves) list() []*OAuthState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*OAuthState(nil), s.got...)
}

func oauthConfig(as *oauthtest.Server, st *OAuthState) Config {
	return Config{"secure": {URL: as.URL, Auth: &Auth{Strategy: AuthOAuth2, OAuth: &OAuthSettings{Type: "oauth"}, State: st}}}
}

const testRedirect = "http://localhost:1/callback"

// authorizeOnce connects through the whole flow: registration, consent,
// code exchange with PKCE. It returns the saved state.
func authorizeOnce(t *testing.T, as *oauthtest.Server) *OAuthState {
	t.Helper()
	var sv saves
	set := connect(t, oauthConfig(as, nil), &Options{OAuth: &OAuthOptions{Save: sv.save, Authorize: oauthtest.Consent, RedirectURL: testRedirect}})
	if got := text(call(t, findTool(t, set, "whoami"), `{}`)); !strings.Contains(got, "caller tester") {
		t.Fatalf("whoami = %q", got)
	}
	got := sv.list()
	if len(got) != 1 {
		t.Fatalf("saved %d states, want 1", len(got))
	}
	st := got[0]
	if st.Tokens == nil || st.Tokens.AccessToken.IsZero() || st.Tokens.RefreshToken.IsZero() || st.ClientInfo == nil || st.ClientInfo.ClientID == "" || st.TokenExpiresAt < float64(time.Now().Unix()) {
		t.Fatalf("saved state %+v lacks tokens, client or expiry", st)
	}
	if cur := set.OAuthState("secure"); cur == nil || cur.Tokens.AccessToken != st.Tokens.AccessToken {
		t.Errorf("Set.OAuthState = %+v, want the saved one", cur)
	}
	return st
}

func TestOAuthAuthorizationCodeFlow(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	st := authorizeOnce(t, as)
	if r, e, f := as.Counts(); r != 1 || e != 1 || f != 0 {
		t.Errorf("registered, exchanged, refreshed = %d, %d, %d; want 1, 1, 0", r, e, f)
	}
	// The stored state connects again with no one to authorize.
	var sv saves
	set := connect(t, oauthConfig(as, st), &Options{OAuth: &OAuthOptions{Save: sv.save}})
	if got := text(call(t, findTool(t, set, "whoami"), `{}`)); !strings.Contains(got, "caller tester") {
		t.Fatalf("whoami with the stored token = %q", got)
	}
	if r, e, _ := as.Counts(); r != 1 || e != 1 || len(sv.list()) != 0 {
		t.Errorf("a valid stored token registered or exchanged again (%d, %d) or saved %d states", r, e, len(sv.list()))
	}
}

func TestOAuthRefresh(t *testing.T) {
	t.Parallel()
	as := oauthtest.New(t)
	st := authorizeOnce(t, as)
	as.Expire()
	st.TokenExpiresAt = float64(time.Now().Add(-time.Minute).Unix())
	var sv saves
	set := connect(t, oauthConfig(as, st), &Options{OAuth: &OAuthOptions{Save: sv.save}})
	if got := text(call(t, findTool(t, set, "whoami"), `{}`)); !strings.Contains(got, "caller tester") {
		t.Fatalf("whoami after the refresh = %q", got)
	}
	if _, _, f := as.Counts(); f != 1 {
		t.Errorf("refreshed %d times, want 1", f)
	}
	got := sv.list()
	if len(got) != 1 {
		t.Fatalf("saved %d states, want 1", len(got))
	}
	n := got[0]
	if n.Tokens.AccessToken == st.Tokens.AccessToken || n.Tokens.RefreshToken == st.Tokens.RefreshToken || n.ClientInfo.ClientID != st.ClientInfo.ClientID || n.TokenExpiresAt <= st.TokenExpiresAt {
		t.Errorf("refreshed state %+v does not replace the tokens of %+v for the same client", n, st)
	}
}

// An authorization server that answers errors fails the connection with a
// clear error, and nothing is saved.
func TestOAuthServerErrors(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	try := func(t *testing.T, cfg Config, o *OAuthOptions) error {
		t.Helper()
		var sv saves
		o.Save = sv.save
		set, err := Connect(ctx, cfg, &Options{OAuth: o})
		set.Close()
		if n := len(sv.list()); n != 0 {
			t.Errorf("saved %d states after a failure", n)
		}
		if err == nil {
			t.Fatal("connected")
		}
		return err
	}
	t.Run("code exchange refused", func(t *testing.T) {
		as := oauthtest.New(t)
		as.Set(func(s *oauthtest.Server) { s.TokenError = "invalid_client" })
		err := try(t, oauthConfig(as, nil), &OAuthOptions{Authorize: oauthtest.Consent, RedirectURL: testRedirect})
		if !strings.Contains(err.Error(), "invalid_client") || !strings.Contains(err.Error(), `"secure"`) {
			t.Errorf("error %q does not name the server and the refusal", err)
		}
	})
	t.Run("consent denied", func(t *testing.T) {
		as := oauthtest.New(t)
		deny := func(context.Context, string) (url.Values, error) {
			return url.Values{"error": {"access_denied"}}, nil
		}
		err := try(t, oauthConfig(as, nil), &OAuthOptions{Authorize: deny, RedirectURL: testRedirect})
		if !strings.Contains(err.Error(), "access_denied") {
			t.Errorf("error %q does not say access_denied", err)
		}
	})
	t.Run("refresh refused", func(t *testing.T) {
		as := oauthtest.New(t)
		st := authorizeOnce(t, as)
		as.Expire()
		st.TokenExpiresAt = 1
		as.Set(func(s *oauthtest.Server) { s.TokenStatus = 500 })
		err := try(t, oauthConfig(as, st), &OAuthOptions{})
		if !errors.Is(err, ErrOAuthReauthorize) {
			t.Errorf("error %q does not ask to authorize again", err)
		}
	})
	t.Run("no tokens", func(t *testing.T) {
		as := oauthtest.New(t)
		err := try(t, oauthConfig(as, nil), &OAuthOptions{})
		if !errors.Is(err, ErrOAuthReauthorize) || !strings.Contains(err.Error(), as.URL) {
			t.Errorf("error %q does not ask to authorize %s again", err, as.URL)
		}
		if r, _, _ := as.Counts(); r != 0 {
			t.Errorf("registered %d clients with no one to authorize", r)
		}
	})
}

// The state travels in the reference's layout, and its secrets are
// secrets: redacted by default, mapped by MapSecrets.
func TestOAuthStateJSON(t *testing.T) {
	t.Parallel()
	in := `{"s": {"url": "http://h/mcp", "auth": {"strategy": "oauth2", "authentication": {"type": "oauth", "scopes": ["a", "b"]},
		"state": {"tokens": {"access_token": "AT", "token_type": "Bearer", "expires_in": 3600, "refresh_token": "RT"},
		"client_info": {"client_id": "cid", "client_secret": "CS", "redirect_uris": ["http://localhost:5/callback"]}, "token_expires_at": 1700000000.5}}}}`
	c, err := ParseConfig([]byte(in))
	if err != nil {
		t.Fatal(err)
	}
	st := c["s"].Auth.State
	if st.Tokens.AccessToken.Value() != "AT" || st.Tokens.RefreshToken.Value() != "RT" || st.ClientInfo.ClientSecret.Value() != "CS" || st.TokenExpiresAt != 1700000000.5 {
		t.Fatalf("decoded %+v", st)
	}
	out, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"AT", "RT", "CS"} {
		if strings.Contains(string(out), `"`+v+`"`) {
			t.Errorf("%s in clear in %s", v, out)
		}
	}
	cipher := secret.NewCipher("k")
	enc, err := c.MapSecrets(cipher.Encrypt)
	if err != nil {
		t.Fatal(err)
	}
	est := enc.(Config)["s"].Auth.State
	if !est.Tokens.AccessToken.IsToken() || !est.Tokens.RefreshToken.IsToken() || !est.ClientInfo.ClientSecret.IsToken() {
		t.Errorf("MapSecrets left a secret of %+v unencrypted", est)
	}
	if st.Tokens.AccessToken.Value() != "AT" {
		t.Error("MapSecrets changed the original")
	}
}
