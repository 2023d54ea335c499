// Package subscription signs in to an OpenAI (ChatGPT) subscription with
// OAuth's device-code flow, refreshes the access token it yields, and
// keeps the login where the reference 1.58.2 keeps it: auth/openai_oauth.json
// in the user's persistence directory, owner-only, with the reference's
// fields (type, vendor, access_token, refresh_token, expires_at in Unix
// milliseconds), so a login made by either program serves the other.
//
// The flow is the reference's: the client asks the issuer for a user code
// (POST /api/accounts/deviceauth/usercode), the user enters it at
// <issuer>/codex/device, the client polls (POST
// /api/accounts/deviceauth/token: 403 or 404 while the user has not
// finished), and exchanges the authorization code and PKCE verifier that
// poll returns at /oauth/token. The issuer is https://auth.openai.com
// unless Options.Issuer names another: tests point it at a loopback
// issuer they script (net/http/httptest), since the real one is not
// reachable from them. Nothing here has been run against the real issuer.
//
// A stored login that cannot be read is treated as no login but kept,
// where the reference deletes it: the file is the user's (perhaps written
// by a newer version or being edited), and a new login replaces it anyway.
//
// Tokens never appear in errors or logs: an error names the issuer's URL
// and its status (and the OAuth error code of its answer, if it has one).
//
// The LLM layer does not use a subscription login yet (see llm's package
// documentation); the agent server's /api/llm/subscription/openai routes do.
package subscription

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Facts of the reference's OpenAI subscription login.
const (
	// DefaultIssuer is OpenAI's authorization server.
	DefaultIssuer = "https://auth.openai.com"
	// ClientID is the public OAuth client id of the Codex login.
	ClientID = "app_EMoamEEZ73f0CkXaXp7hrann"
	// DeviceLoginLifetime is how long a device login may take.
	DeviceLoginLifetime = 15 * time.Minute
	// Vendor names the subscription's vendor in the stored login.
	Vendor = "openai"
	// defaultExpiresIn is the token lifetime assumed when the issuer's
	// answer gives none, in seconds.
	defaultExpiresIn = 3600
	// expiryMargin counts a token as expired this long before it is, so
	// it does not expire during a request.
	expiryMargin = time.Minute
	// requestTimeout bounds each request to the issuer.
	requestTimeout = 20 * time.Second
	// maxAnswer bounds what is read of an issuer's answer.
	maxAnswer = 1 << 20
)

// Models are the models a ChatGPT subscription offers, as the reference
// 1.58.2 lists them (sorted).
var Models = []string{"gpt-5.5", "gpt-5.6-luna", "gpt-5.6-sol", "gpt-5.6-terra", "gpt-6-astra", "gpt-6-luna", "gpt-6-sol", "gpt-6.1-sol"}

// Credentials are a stored login, in the reference's layout.
type Credentials struct {
	Type         string `json:"type"` // always "oauth"
	Vendor       string `json:"vendor"`
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	// ExpiresAt is when the access token expires, in Unix milliseconds.
	ExpiresAt int64 `json:"expires_at"`
}

// Expired reports whether the access token expires within a minute of
// now (the reference's margin).
func (c *Credentials) Expired(now time.Time) bool {
	return c.ExpiresAt < now.Add(expiryMargin).UnixMilli()
}

// Options configure a Client; nil is the defaults.
type Options struct {
	// Issuer is the authorization server's base URL; DefaultIssuer when
	// empty.
	Issuer string
	// HTTPClient sends the requests; a client with a 20-second timeout
	// when nil. Its own timeout, if shorter, bounds each request.
	HTTPClient *http.Client
	// Now is the clock; time.Now when nil.
	Now func() time.Time
}

// Client speaks to an OAuth issuer.
type Client struct {
	issuer string
	http   *http.Client
	now    func() time.Time
}

// New returns a Client.
func New(o *Options) *Client {
	c := &Client{issuer: DefaultIssuer, http: &http.Client{Timeout: requestTimeout}, now: time.Now}
	if o != nil {
		if o.Issuer != "" {
			c.issuer = strings.TrimRight(o.Issuer, "/")
		}
		if o.HTTPClient != nil {
			c.http = o.HTTPClient
		}
		if o.Now != nil {
			c.now = o.Now
		}
	}
	return c
}

// Issuer is the base URL of the client's authorization server.
func (c *Client) Issuer() string { return c.issuer }

// DeviceCode is a device login the issuer has started.
type DeviceCode struct {
	// VerificationURL is where the user enters UserCode.
	VerificationURL string
	UserCode        string
	// DeviceAuthID names the login to the issuer; like the user code it
	// is not a credential, but only the poller needs it.
	DeviceAuthID string
	// Interval is how often to poll, at least a second.
	Interval time.Duration
}

// IssuerError is an answer of the issuer that ends a request: a status
// other than success, or a body that is not what the flow expects.
type IssuerError struct {
	URL    string
	Status int // 0 when the body, not the status, was wrong
	// Code is the OAuth error code of the answer ("expired_token",
	// "access_denied", ...), if it has one.
	Code string
	msg  string
}

func (e *IssuerError) Error() string {
	s := fmt.Sprintf("OpenAI subscription login: %s", e.URL)
	if e.Status != 0 {
		s += fmt.Sprintf(" answered %d %s", e.Status, http.StatusText(e.Status))
	}
	if e.Code != "" {
		s += " (" + e.Code + ")"
	}
	if e.msg != "" {
		s += ": " + e.msg
	}
	return s
}

// ErrPending is PollDevice's answer while the user has not finished the
// login.
var ErrPending = errors.New("OpenAI subscription login: the device login is still pending")

// StartDevice asks the issuer for a device login's user code.
func (c *Client) StartDevice(ctx context.Context) (*DeviceCode, error) {
	u := c.issuer + "/api/accounts/deviceauth/usercode"
	status, body, err := c.post(ctx, u, "application/json", jsonBody(map[string]string{"client_id": ClientID}))
	if err != nil {
		return nil, err
	}
	if status == http.StatusNotFound {
		return nil, &IssuerError{URL: u, Status: status, msg: "this issuer has no device-code login"}
	}
	if !success(status) {
		return nil, &IssuerError{URL: u, Status: status, Code: oauthCode(body)}
	}
	var d struct {
		Interval     json.RawMessage `json:"interval"`
		UserCode     string          `json:"user_code"`
		UserCode2    string          `json:"usercode"`
		DeviceAuthID json.RawMessage `json:"device_auth_id"`
	}
	bad := &IssuerError{URL: u, msg: "the answer is no device code"}
	if json.Unmarshal(body, &d) != nil {
		return nil, bad
	}
	// The interval comes as a number or a string of one; five seconds
	// when absent.
	interval := 5
	if raw := strings.Trim(strings.TrimSpace(string(d.Interval)), `"`); raw != "" && raw != "null" {
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return nil, bad
		}
		interval = n
	}
	code := d.UserCode
	if code == "" {
		code = d.UserCode2
	}
	var id string
	if code == "" || json.Unmarshal(d.DeviceAuthID, &id) != nil || id == "" {
		return nil, bad
	}
	return &DeviceCode{
		VerificationURL: c.issuer + "/codex/device",
		UserCode:        code,
		DeviceAuthID:    id,
		Interval:        time.Duration(max(interval, 1)) * time.Second,
	}, nil
}

// PollDevice asks the issuer once whether the user has finished the
// login d; when so, it exchanges the authorization code for tokens and
// returns them (not stored). While the user has not, it returns
// ErrPending.
func (c *Client) PollDevice(ctx context.Context, d *DeviceCode) (*Credentials, error) {
	u := c.issuer + "/api/accounts/deviceauth/token"
	status, body, err := c.post(ctx, u, "application/json", jsonBody(map[string]string{"device_auth_id": d.DeviceAuthID, "user_code": d.UserCode}))
	if err != nil {
		return nil, err
	}
	// The issuer answers 403 or 404 until the user has entered the code.
	if status == http.StatusForbidden || status == http.StatusNotFound {
		return nil, ErrPending
	}
	if !success(status) {
		return nil, &IssuerError{URL: u, Status: status, Code: oauthCode(body)}
	}
	var g struct {
		Code     string `json:"authorization_code"`
		Verifier string `json:"code_verifier"`
	}
	if json.Unmarshal(body, &g) != nil || g.Code == "" || g.Verifier == "" {
		return nil, &IssuerError{URL: u, msg: "the answer has no authorization code and verifier"}
	}
	form := url.Values{
		"grant_type":    {"authorization_code"},
		"code":          {g.Code},
		"redirect_uri":  {c.issuer + "/deviceauth/callback"},
		"client_id":     {ClientID},
		"code_verifier": {g.Verifier},
	}
	t, err := c.token(ctx, form)
	if err != nil {
		return nil, err
	}
	if t.RefreshToken == "" {
		return nil, &IssuerError{URL: c.issuer + "/oauth/token", msg: "the answer has no refresh token"}
	}
	return &Credentials{Type: "oauth", Vendor: Vendor, AccessToken: t.AccessToken, RefreshToken: t.RefreshToken, ExpiresAt: c.expiresAt(t.ExpiresIn)}, nil
}

// Refresh exchanges cred's refresh token for a new access token and
// returns the updated login (not stored); the refresh token is kept when
// the issuer sends no new one.
func (c *Client) Refresh(ctx context.Context, cred *Credentials) (*Credentials, error) {
	t, err := c.token(ctx, url.Values{
		"grant_type":    {"refresh_token"},
		"refresh_token": {cred.RefreshToken},
		"client_id":     {ClientID},
	})
	if err != nil {
		return nil, err
	}
	out := &Credentials{Type: "oauth", Vendor: cred.Vendor, AccessToken: t.AccessToken, RefreshToken: cmp.Or(t.RefreshToken, cred.RefreshToken), ExpiresAt: c.expiresAt(t.ExpiresIn)}
	return out, nil
}

type tokens struct {
	AccessToken  string `json:"access_token"`
	RefreshToken string `json:"refresh_token"`
	ExpiresIn    *int64 `json:"expires_in"`
}

// token posts an OAuth token request.
func (c *Client) token(ctx context.Context, form url.Values) (*tokens, error) {
	u := c.issuer + "/oauth/token"
	status, body, err := c.post(ctx, u, "application/x-www-form-urlencoded", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	if !success(status) {
		return nil, &IssuerError{URL: u, Status: status, Code: oauthCode(body)}
	}
	var t tokens
	if json.Unmarshal(body, &t) != nil || t.AccessToken == "" {
		return nil, &IssuerError{URL: u, msg: "the answer has no access token"}
	}
	return &t, nil
}

func (c *Client) expiresAt(expiresIn *int64) int64 {
	sec := int64(defaultExpiresIn)
	if expiresIn != nil {
		sec = *expiresIn
	}
	return c.now().UnixMilli() + sec*1000
}

// post sends one request to the issuer and reads its answer. A transport
// failure names the URL (url.Error does) and never the body sent.
func (c *Client) post(ctx context.Context, u, contentType string, body io.Reader) (int, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, requestTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, body)
	if err != nil {
		return 0, nil, fmt.Errorf("OpenAI subscription login: %w", err)
	}
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("Accept", "application/json")
	resp, err := c.http.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("OpenAI subscription login: %w", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer))
	if err != nil {
		return 0, nil, fmt.Errorf("OpenAI subscription login: reading the answer of %s: %w", u, err)
	}
	return resp.StatusCode, b, nil
}

func success(status int) bool { return status >= 200 && status < 300 }

func jsonBody(v any) io.Reader {
	b, _ := json.Marshal(v)
	return bytes.NewReader(b)
}

// oauthCode is the OAuth error code of an error answer ({"error": "..."}
// or {"error": {"code": "..."}}), if it has a short one.
func oauthCode(body []byte) string {
	var e struct {
		Error json.RawMessage `json:"error"`
	}
	if json.Unmarshal(body, &e) != nil || len(e.Error) == 0 {
		return ""
	}
	var s string
	if json.Unmarshal(e.Error, &s) != nil {
		var o struct {
			Code string `json:"code"`
		}
		if json.Unmarshal(e.Error, &o) != nil {
			return ""
		}
		s = o.Code
	}
	if len(s) > 64 || strings.ContainsFunc(s, func(r rune) bool {
		return !(r == '_' || r == '-' || r == '.' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9')
	}) {
		return ""
	}
	return s
}
