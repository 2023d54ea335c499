package subscription_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/subscription"
	"github.com/gohands/gohands/llm/subscription/subscriptiontest"
)

func TestDeviceLogin(t *testing.T) {
	t.Parallel()
	is := subscriptiontest.NewIssuer(t)
	now := time.UnixMilli(1_800_000_000_000)
	c := subscription.New(&subscription.Options{Issuer: is.URL + "/", Now: func() time.Time { return now }})
	ctx := t.Context()
	d, err := c.StartDevice(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if d.UserCode != "CODE-0001" || d.VerificationURL != is.URL+"/codex/device" || d.Interval != time.Second || d.DeviceAuthID == "" {
		t.Errorf("device code: %+v", d)
	}
	if _, err := c.PollDevice(ctx, d); !errors.Is(err, subscription.ErrPending) {
		t.Errorf("pending poll: %v", err)
	}
	is.Approve(d.UserCode)
	cred, err := c.PollDevice(ctx, d)
	if err != nil {
		t.Fatal(err)
	}
	if cred.Type != "oauth" || cred.Vendor != "openai" || cred.AccessToken == "" || cred.RefreshToken == "" || cred.ExpiresAt != now.UnixMilli()+3600_000 {
		t.Errorf("credentials: %+v", cred)
	}
	if cred.Expired(now) || !cred.Expired(now.Add(time.Hour-30*time.Second)) {
		t.Errorf("Expired: the token lasts an hour, less a minute's margin")
	}
	fresh, err := c.Refresh(ctx, cred)
	if err != nil || fresh.AccessToken == cred.AccessToken || fresh.RefreshToken == cred.RefreshToken {
		t.Errorf("refresh: %+v, %v", fresh, err)
	}
	// The spent refresh token is refused, and the error names no token.
	_, err = c.Refresh(ctx, cred)
	var ie *subscription.IssuerError
	if !errors.As(err, &ie) || ie.Status != 401 || ie.Code != "invalid_grant" || strings.Contains(err.Error(), cred.RefreshToken) {
		t.Errorf("spent refresh token: %v", err)
	}
}

// The issuer's device-code answer as OpenAI varies it: a numeric
// interval, "usercode" for "user_code", no interval; and answers that are
// no device code.
func TestStartDeviceAnswers(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		body     string
		interval time.Duration
		bad      bool
	}{
		{body: `{"device_auth_id":"d","user_code":"U","interval":7}`, interval: 7 * time.Second},
		{body: `{"device_auth_id":"d","usercode":"U","interval":" 3 "}`, interval: 3 * time.Second},
		{body: `{"device_auth_id":"d","user_code":"U"}`, interval: 5 * time.Second},
		{body: `{"device_auth_id":"d","user_code":"U","interval":0}`, interval: time.Second},
		{body: `{"device_auth_id":"d","interval":5}`, bad: true},
		{body: `{"user_code":"U"}`, bad: true},
		{body: `{"device_auth_id":"d","user_code":"U","interval":"soon"}`, bad: true},
		{body: `not json`, bad: true},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(tc.body))
		}))
		d, err := subscription.New(&subscription.Options{Issuer: srv.URL}).StartDevice(t.Context())
		srv.Close()
		switch {
		case tc.bad && err == nil:
			t.Errorf("%s: accepted as %+v", tc.body, d)
		case tc.bad && !strings.Contains(err.Error(), srv.URL+subscriptiontest.UserCodePath):
			t.Errorf("%s: the error names no URL: %v", tc.body, err)
		case !tc.bad && (err != nil || d.UserCode != "U" || d.DeviceAuthID != "d" || d.Interval != tc.interval):
			t.Errorf("%s: %+v, %v", tc.body, d, err)
		}
	}
}

func TestStore(t *testing.T) {
	t.Parallel()
	s := subscription.Store{Dir: filepath.Join(t.TempDir(), "persist")}
	if c, err := s.Load(); c != nil || err != nil {
		t.Errorf("nothing stored: %+v, %v", c, err)
	}
	if ok, err := s.Delete(); ok || err != nil {
		t.Errorf("delete of nothing: %v, %v", ok, err)
	}
	want := &subscription.Credentials{Type: "oauth", Vendor: "openai", AccessToken: "a", RefreshToken: "r", ExpiresAt: 42}
	if err := s.Save(want); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Load(); err != nil || *got != *want {
		t.Errorf("load: %+v, %v", got, err)
	}
	// Only the login is left in the directory (no temporary file).
	if ents, _ := os.ReadDir(filepath.Dir(s.Path())); len(ents) != 1 || ents[0].Name() != "openai_oauth.json" {
		t.Errorf("auth directory: %v", ents)
	}
	for _, bad := range []string{`{`, `{"vendor":"openai","access_token":"a","refresh_token":"r"}`, `{"type":"api_key","vendor":"openai","access_token":"a","refresh_token":"r","expires_at":1}`} {
		if err := os.WriteFile(s.Path(), []byte(bad), 0o600); err != nil {
			t.Fatal(err)
		}
		if c, err := s.Load(); !errors.Is(err, subscription.ErrUnreadable) {
			t.Errorf("%s: %+v, %v", bad, c, err)
		}
	}
	if ok, err := s.Delete(); !ok || err != nil {
		t.Errorf("delete: %v, %v", ok, err)
	}
}
