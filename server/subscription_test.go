package server_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/llm/subscription/subscriptiontest"
	"github.com/gohands/gohands/server"
)

type subStatus struct {
	Vendor       string  `json:"vendor"`
	Connected    bool    `json:"connected"`
	AccountEmail *string `json:"account_email"`
	ExpiresAt    *int64  `json:"expires_at"`
}

type subStart struct {
	DeviceCode              string  `json:"device_code"`
	UserCode                string  `json:"user_code"`
	VerificationURI         string  `json:"verification_uri"`
	VerificationURIComplete *string `json:"verification_uri_complete"`
	ExpiresAt               int64   `json:"expires_at"`
	IntervalSeconds         int     `json:"interval_seconds"`
}

type subFailure struct {
	Detail    string `json:"detail"`
	Exception string `json:"exception"`
	ErrorID   string `json:"error_id"`
}

// lockedBuffer collects a server's log.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// subscriptionServer is a server whose ChatGPT logins go to issuer, with
// its persistence directory and its log.
func subscriptionServer(t *testing.T, issuer string) (*testServer, string, *lockedBuffer) {
	dir := t.TempDir()
	log := &lockedBuffer{}
	ts := newTestServer(t, &server.Options{SessionAPIKeys: []string{"sess"}, SecretKey: "the secret key", PersistenceDir: dir, OpenAIIssuer: issuer,
		Logger: slog.New(slog.NewTextHandler(log, &slog.HandlerOptions{Level: slog.LevelDebug}))})
	return ts, filepath.Join(dir, "auth", "openai_oauth.json"), log
}

const subBase = "/api/llm/subscription/openai"

// The whole device login against a scripted issuer: start, poll while the
// user has not finished, poll once they have, then the stored login's
// status (refreshed when it expires), the models and logout.
func TestOpenAISubscriptionDeviceLogin(t *testing.T) {
	t.Parallel()
	is := subscriptiontest.NewIssuer(t)
	ts, file, log := subscriptionServer(t, is.URL)

	var st subStatus
	ts.must(200, "GET", subBase+"/status", nil, &st)
	if st.Connected || st.Vendor != "openai" || st.ExpiresAt != nil {
		t.Errorf("no login: %+v", st)
	}

	var start subStart
	before := time.Now()
	body := ts.must(200, "POST", subBase+"/device/start", nil, &start)
	if start.UserCode != "CODE-0001" || start.VerificationURI != is.URL+"/codex/device" || start.IntervalSeconds != 1 ||
		start.VerificationURIComplete != nil || !strings.Contains(string(body), `"verification_uri_complete":null`) ||
		len(start.DeviceCode) < 32 || strings.Contains(string(body), "deviceauth_") {
		t.Errorf("start: %s", body)
	}
	if lo, hi := before.Add(15*time.Minute).UnixMilli(), time.Now().Add(15*time.Minute).UnixMilli(); start.ExpiresAt < lo || start.ExpiresAt > hi {
		t.Errorf("start: expires_at %d, want within [%d, %d]", start.ExpiresAt, lo, hi)
	}
	poll := map[string]string{"device_code": start.DeviceCode}

	// The user has not entered the code: pending, and nothing stored.
	for range 2 {
		st = subStatus{}
		ts.must(200, "POST", subBase+"/device/poll", poll, &st)
		if st.Connected || st.ExpiresAt != nil {
			t.Errorf("pending poll: %+v", st)
		}
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a pending login stored something: %v", err)
	}

	is.Approve(start.UserCode)
	body = ts.must(200, "POST", subBase+"/device/poll", poll, &st)
	if !st.Connected || st.ExpiresAt == nil || strings.Contains(string(body), "token") {
		t.Errorf("finished poll: %s", body)
	}
	stored := readLogin(t, file)
	if stored["type"] != "oauth" || stored["vendor"] != "openai" || !strings.HasPrefix(stored["access_token"].(string), "access-token-") ||
		!strings.HasPrefix(stored["refresh_token"].(string), "refresh-token-") || int64(stored["expires_at"].(float64)) != *st.ExpiresAt {
		t.Errorf("stored login: %v", stored)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{file: 0o600, filepath.Dir(file): 0o700} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: %v, mode %v, want %v", p, err, fi.Mode().Perm(), want)
			}
		}
	}
	// A finished login is gone from the server.
	ts.must(404, "POST", subBase+"/device/poll", poll, nil)

	exp := *st.ExpiresAt
	body = ts.must(200, "GET", subBase+"/status", nil, &st)
	if !st.Connected || st.ExpiresAt == nil || *st.ExpiresAt != exp || strings.Contains(string(body), "token") {
		t.Errorf("status after login: %s", body)
	}
	var models struct {
		Vendor string   `json:"vendor"`
		Models []string `json:"models"`
	}
	ts.must(200, "GET", subBase+"/models", nil, &models)
	if models.Vendor != "openai" || !slices.Contains(models.Models, "gpt-5.5") || !slices.IsSorted(models.Models) {
		t.Errorf("models: %+v", models)
	}

	// Expired, the login is refreshed (the issuer rotates the refresh
	// token) and stays connected.
	stored["expires_at"] = time.Now().Add(-time.Hour).UnixMilli()
	writeLogin(t, file, stored)
	refreshes := is.Calls(subscriptiontest.TokenPath)
	ts.must(200, "GET", subBase+"/status", nil, &st)
	fresh := readLogin(t, file)
	if !st.Connected || is.Calls(subscriptiontest.TokenPath) != refreshes+1 || fresh["access_token"] == stored["access_token"] ||
		fresh["refresh_token"] == stored["refresh_token"] || int64(fresh["expires_at"].(float64)) != *st.ExpiresAt {
		t.Errorf("refreshed: %+v, stored %v (was %v)", st, fresh, stored)
	}
	// A refresh the issuer refuses leaves no usable login, and the stored
	// one as it was.
	is.RevokeRefreshTokens()
	fresh["expires_at"] = time.Now().Add(-time.Hour).UnixMilli()
	writeLogin(t, file, fresh)
	st = subStatus{}
	ts.must(200, "GET", subBase+"/status", nil, &st)
	if st.Connected {
		t.Errorf("refused refresh: %+v", st)
	}
	if got := readLogin(t, file); got["access_token"] != fresh["access_token"] {
		t.Errorf("a refused refresh changed the login: %v", got)
	}

	ts.must(200, "POST", subBase+"/logout", nil, &st)
	if _, err := os.Stat(file); !os.IsNotExist(err) || st.Connected {
		t.Errorf("logout: %+v, the file: %v", st, err)
	}
	ts.must(200, "POST", subBase+"/logout", nil, nil)
	ts.must(200, "GET", subBase+"/status", nil, &st)
	if st.Connected {
		t.Errorf("status after logout: %+v", st)
	}

	// Logout forgets the logins under way.
	ts.must(200, "POST", subBase+"/device/start", nil, &start)
	is.Approve(start.UserCode)
	ts.must(200, "POST", subBase+"/logout", nil, nil)
	ts.must(404, "POST", subBase+"/device/poll", map[string]string{"device_code": start.DeviceCode}, nil)

	ts.must(404, "POST", subBase+"/device/poll", map[string]any{"device_code": "x"}, nil)
	ts.must(422, "POST", subBase+"/device/poll", map[string]any{}, nil)
	if strings.Contains(log.String(), "access-token-") || strings.Contains(log.String(), "refresh-token-") {
		t.Errorf("a token reached the log:\n%s", log)
	}
	ts.key = ""
	for _, r := range [][2]string{{"GET", "/status"}, {"POST", "/device/start"}, {"POST", "/device/poll"}, {"POST", "/logout"}} {
		if code, body := ts.do(r[0], subBase+r[1], nil); code != 401 {
			t.Errorf("%s without the key: %d %s", r[1], code, body)
		}
	}
}

// An issuer that fails, refuses or cannot be reached: the reference's
// 500 with an error_id, an exception naming the issuer's URL, the login
// still pollable, and nothing stored.
func TestOpenAISubscriptionIssuerFailures(t *testing.T) {
	t.Parallel()
	is := subscriptiontest.NewIssuer(t)
	ts, file, log := subscriptionServer(t, is.URL)
	failed := func(method, path string, body any, want ...string) {
		t.Helper()
		var f subFailure
		ts.must(500, method, path, body, &f)
		if f.Detail != "Internal Server Error" || len(f.ErrorID) != 32 || !strings.Contains(log.String(), f.ErrorID) {
			t.Errorf("%s: %+v", path, f)
		}
		for _, w := range want {
			if !strings.Contains(f.Exception, w) {
				t.Errorf("%s: exception %q lacks %q", path, f.Exception, w)
			}
		}
	}

	is.Fail(subscriptiontest.UserCodePath, 503)
	failed("POST", subBase+"/device/start", nil, is.URL+subscriptiontest.UserCodePath, "503")
	is.Fail(subscriptiontest.UserCodePath, 404)
	failed("POST", subBase+"/device/start", nil, "no device-code login")
	is.Fail(subscriptiontest.UserCodePath, 0)

	start := func() map[string]string {
		var s subStart
		ts.must(200, "POST", subBase+"/device/start", nil, &s)
		return map[string]string{"device_code": s.DeviceCode, "user": s.UserCode}
	}
	// Refused logins (expired at the issuer, denied by the user) fail
	// each poll; the server keeps them until their time is up, as the
	// reference does.
	for _, code := range []string{"expired_token", "access_denied"} {
		l := start()
		is.Refuse(l["user"], code)
		for range 2 {
			failed("POST", subBase+"/device/poll", map[string]string{"device_code": l["device_code"]}, is.URL+subscriptiontest.PollPath, "400", code)
		}
	}
	// A failing poll or token exchange stores nothing, and a later poll
	// can still finish the login.
	l := start()
	poll := map[string]string{"device_code": l["device_code"]}
	is.Fail(subscriptiontest.PollPath, 502)
	failed("POST", subBase+"/device/poll", poll, "502")
	is.Fail(subscriptiontest.PollPath, 0)
	is.Approve(l["user"])
	is.Fail(subscriptiontest.TokenPath, 500)
	failed("POST", subBase+"/device/poll", poll, is.URL+subscriptiontest.TokenPath, "500")
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a failed login stored something: %v", err)
	}
	is.Fail(subscriptiontest.TokenPath, 0)
	// The issuer's authorization code was handed out once; the user
	// approves a new login.
	l = start()
	is.Approve(l["user"])
	var st subStatus
	ts.must(200, "POST", subBase+"/device/poll", map[string]string{"device_code": l["device_code"]}, &st)
	if !st.Connected {
		t.Errorf("login after failures: %+v", st)
	}
	if strings.Contains(log.String(), "access-token-") || strings.Contains(log.String(), "refresh-token-") {
		t.Errorf("a token reached the log:\n%s", log)
	}

	// Nothing listens on port 1: the issuer cannot be reached.
	down, _, _ := subscriptionServer(t, "http://127.0.0.1:1")
	var f subFailure
	down.must(500, "POST", subBase+"/device/start", nil, &f)
	if f.Detail != "Internal Server Error" || f.ErrorID == "" || !strings.Contains(f.Exception, "http://127.0.0.1:1"+subscriptiontest.UserCodePath) {
		t.Errorf("unreachable issuer: %+v", f)
	}
}

// A login the reference stored (its layout) reads as connected until it
// expires; one that is not a login counts as none.
func TestOpenAISubscriptionStoredByReference(t *testing.T) {
	t.Parallel()
	is := subscriptiontest.NewIssuer(t)
	ts, file, _ := subscriptionServer(t, is.URL)
	exp := time.Now().Add(time.Hour).UnixMilli()
	writeLogin(t, file, map[string]any{"type": "oauth", "vendor": "openai", "access_token": "ACCESS-TOKEN-1", "refresh_token": "REFRESH-TOKEN-1", "expires_at": exp})
	var st subStatus
	body := ts.must(200, "GET", subBase+"/status", nil, &st)
	if !st.Connected || st.ExpiresAt == nil || *st.ExpiresAt != exp || strings.Contains(string(body), "TOKEN-1") {
		t.Errorf("stored login: %s", body)
	}
	if n := is.Calls(subscriptiontest.TokenPath); n != 0 {
		t.Errorf("an unexpired login was refreshed (%d calls)", n)
	}
	if err := os.WriteFile(file, []byte(`{"vendor": "openai"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	st = subStatus{}
	ts.must(200, "GET", subBase+"/status", nil, &st)
	if st.Connected {
		t.Errorf("unreadable login: %+v", st)
	}
}

func readLogin(t *testing.T, file string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatalf("%s: %v", file, err)
	}
	return m
}

func writeLogin(t *testing.T, file string, m map[string]any) {
	t.Helper()
	b, _ := json.Marshal(m)
	if err := os.MkdirAll(filepath.Dir(file), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(file, b, 0o600); err != nil {
		t.Fatal(err)
	}
}

// A poll while another of the same login waits on the issuer answers not
// connected; a logout meanwhile wins: the finished login is not stored,
// and the polling token is gone.
func TestOpenAISubscriptionPollInFlight(t *testing.T) {
	t.Parallel()
	is := subscriptiontest.NewIssuer(t)
	ts, file, _ := subscriptionServer(t, is.URL)
	var start subStart
	ts.must(200, "POST", subBase+"/device/start", nil, &start)
	is.Approve(start.UserCode)
	poll := map[string]string{"device_code": start.DeviceCode}
	arrived, release := is.Hold(subscriptiontest.PollPath)
	type result struct {
		code int
		body []byte
	}
	first := make(chan result, 1)
	go func() {
		code, body := ts.do("POST", subBase+"/device/poll", poll)
		first <- result{code, body}
	}()
	<-arrived
	var st subStatus
	ts.must(200, "POST", subBase+"/device/poll", poll, &st)
	if st.Connected {
		t.Errorf("second poll: %+v", st)
	}
	ts.must(200, "POST", subBase+"/logout", nil, nil)
	release()
	r := <-first
	if r.code != 200 || json.Unmarshal(r.body, &st) != nil || st.Connected {
		t.Errorf("the poll overtaken by logout: %d %s", r.code, r.body)
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a login finished after logout was stored: %v", err)
	}
	ts.must(404, "POST", subBase+"/device/poll", poll, nil)
}
