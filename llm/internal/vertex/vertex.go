// Package vertex is what the Gemini and Anthropic providers share to call
// their models on Google Cloud's Vertex AI: the endpoint of a project and
// location, and OAuth access tokens made from a service account key
// (a signed JWT exchanged at the key's token URI) or from gcloud's
// application default credentials (a refresh token). Tokens are cached per
// credential and refreshed before they expire.
//
// Where settings come from, as LiteLLM takes them: the project from
// VERTEXAI_PROJECT (or VERTEX_PROJECT, GOOGLE_CLOUD_PROJECT, else the
// credentials' own project); the location from VERTEXAI_LOCATION (or
// VERTEX_LOCATION, else us-central1); the credentials from
// VERTEXAI_CREDENTIALS (JSON text or a file), GOOGLE_APPLICATION_CREDENTIALS,
// else gcloud's application_default_credentials.json. The metadata server
// of Google Cloud machines and workload identity federation are not used.
package vertex

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/internal/httpapi"
)

// Scope is the OAuth scope of Vertex AI calls.
const Scope = "https://www.googleapis.com/auth/cloud-platform"

// defaultTokenURI is Google's OAuth token endpoint, for credentials that
// name none.
const defaultTokenURI = "https://oauth2.googleapis.com/token"

// defaultLocation is LiteLLM's location when none is set.
const defaultLocation = "us-central1"

// refreshMargin is how long before its expiry a token is replaced, so
// that no call goes out with one about to lapse.
const refreshMargin = 5 * time.Minute

// Call is where one call goes and how it is authorized.
type Call struct {
	URL    string
	Header http.Header
	// Secrets are the values the call is authorized with, for errors to
	// leave out.
	Secrets []string
}

var locationPattern = regexp.MustCompile(`^[a-z0-9-]+$`)

// Prepare returns the call of verb ("generateContent", "rawPredict", ...)
// on the model of req published by publisher ("google", "anthropic"),
// with a fresh access token.
func Prepare(ctx context.Context, req *llm.Request, publisher, verb string) (*Call, error) {
	cred, err := findCredentials()
	if err != nil {
		return nil, &llm.APIError{Kind: llm.ErrAuthentication, Message: "vertex_ai: " + err.Error()}
	}
	project := firstEnv("VERTEXAI_PROJECT", "VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT")
	if project == "" {
		project = cred.project()
	}
	if project == "" {
		return nil, &llm.APIError{Kind: llm.ErrBadRequest, Message: "vertex_ai: no Google Cloud project: set VERTEXAI_PROJECT"}
	}
	location := firstEnv("VERTEXAI_LOCATION", "VERTEX_LOCATION")
	if location == "" {
		location = defaultLocation
	}
	if !locationPattern.MatchString(location) || !locationPattern.MatchString(project) {
		return nil, &llm.APIError{Kind: llm.ErrBadRequest, Message: fmt.Sprintf("vertex_ai: project %q or location %q is not a valid name", project, location)}
	}
	hc := req.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	token, err := cred.token(ctx, hc)
	if err != nil {
		return nil, err
	}
	base := strings.TrimSuffix(strings.TrimSuffix(req.Endpoint.BaseURL, "/"), "/v1")
	if base == "" {
		base = baseURL(location)
	}
	c := &Call{
		URL:     fmt.Sprintf("%s/v1/projects/%s/locations/%s/publishers/%s/models/%s:%s", base, project, location, publisher, url.PathEscape(req.Endpoint.Model), verb),
		Header:  http.Header{"Authorization": {"Bearer " + token}},
		Secrets: []string{token},
	}
	if q := cred.QuotaProject; q != "" {
		c.Header.Set("X-Goog-User-Project", q)
	}
	return c, nil
}

// baseURL is the API root of a location, as Google's SDKs name them.
func baseURL(location string) string {
	switch location {
	case "global":
		return "https://aiplatform.googleapis.com"
	case "us", "eu":
		return "https://aiplatform." + location + ".rep.googleapis.com"
	}
	return "https://" + location + "-aiplatform.googleapis.com"
}

func firstEnv(names ...string) string {
	for _, n := range names {
		if v := os.Getenv(n); v != "" {
			return v
		}
	}
	return ""
}

// credentials is a service account key or gcloud's authorized user file.
type credentials struct {
	Type         string `json:"type"`
	ProjectID    string `json:"project_id"`
	QuotaProject string `json:"quota_project_id"`
	TokenURI     string `json:"token_uri"`
	// service_account
	ClientEmail  string `json:"client_email"`
	PrivateKeyID string `json:"private_key_id"`
	PrivateKey   string `json:"private_key"`
	// authorized_user
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	RefreshToken string `json:"refresh_token"`

	source string // where it was read, for messages
	key    string // identity for the token cache
}

func (c *credentials) project() string {
	if c.ProjectID != "" {
		return c.ProjectID
	}
	return c.QuotaProject
}

// findCredentials reads the credentials in LiteLLM's order.
func findCredentials() (*credentials, error) {
	if v := firstEnv("VERTEXAI_CREDENTIALS", "VERTEX_CREDENTIALS"); v != "" {
		if strings.HasPrefix(strings.TrimSpace(v), "{") {
			return parseCredentials([]byte(v), "VERTEXAI_CREDENTIALS")
		}
		return readCredentials(v)
	}
	if p := os.Getenv("GOOGLE_APPLICATION_CREDENTIALS"); p != "" {
		return readCredentials(p)
	}
	dir := os.Getenv("CLOUDSDK_CONFIG")
	if dir == "" {
		home, _ := os.UserHomeDir()
		dir = filepath.Join(home, ".config", "gcloud")
	}
	adc := filepath.Join(dir, "application_default_credentials.json")
	if _, err := os.Stat(adc); err == nil {
		return readCredentials(adc)
	}
	return nil, fmt.Errorf("no Google credentials: set GOOGLE_APPLICATION_CREDENTIALS to a service account key, VERTEXAI_CREDENTIALS, or run gcloud auth application-default login (looked for %s)", adc)
}

func readCredentials(path string) (*credentials, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("reading Google credentials: %w", err)
	}
	return parseCredentials(data, path)
}

func parseCredentials(data []byte, source string) (*credentials, error) {
	var c credentials
	if err := json.Unmarshal(data, &c); err != nil {
		// The error names the position only, never the file's content.
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return nil, fmt.Errorf("the Google credentials in %s are not JSON (offset %d)", source, se.Offset)
		}
		return nil, fmt.Errorf("the Google credentials in %s are not the JSON of a key file", source)
	}
	c.source = source
	// gcloud writes no token_uri; a file that names one is taken at its
	// word (google-auth sends authorized users to Google's endpoint
	// regardless).
	if c.TokenURI == "" {
		c.TokenURI = defaultTokenURI
	}
	switch c.Type {
	case "service_account":
		if c.ClientEmail == "" || c.PrivateKey == "" {
			return nil, fmt.Errorf("the service account key in %s lacks client_email or private_key", source)
		}
	case "authorized_user":
		if c.ClientID == "" || c.ClientSecret == "" || c.RefreshToken == "" {
			return nil, fmt.Errorf("the credentials in %s lack client_id, client_secret or refresh_token", source)
		}
	default:
		return nil, fmt.Errorf("the Google credentials in %s are of type %q; gohands reads service_account keys and gcloud's authorized_user credentials", source, c.Type)
	}
	h := sha256.Sum256(data)
	c.key = string(h[:])
	return &c, nil
}

// token is a cached access token.
type token struct {
	mu     sync.Mutex
	value  string
	expiry time.Time
}

var (
	tokensMu sync.Mutex
	tokens   = map[string]*token{} // by credentials' key
)

// now is the clock of token expiry; tests move it.
var now = time.Now

// token returns a valid access token for c, exchanging a new one when
// the cached one is missing or within refreshMargin of its expiry.
func (c *credentials) token(ctx context.Context, hc *http.Client) (string, error) {
	tokensMu.Lock()
	t, ok := tokens[c.key]
	if !ok {
		t = &token{}
		tokens[c.key] = t
	}
	tokensMu.Unlock()
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.value != "" && now().Add(refreshMargin).Before(t.expiry) {
		return t.value, nil
	}
	form := url.Values{}
	switch c.Type {
	case "service_account":
		jwt, err := c.assertion()
		if err != nil {
			return "", &llm.APIError{Kind: llm.ErrAuthentication, Message: "vertex_ai: " + err.Error()}
		}
		form.Set("grant_type", "urn:ietf:params:oauth:grant-type:jwt-bearer")
		form.Set("assertion", jwt)
	case "authorized_user":
		form.Set("grant_type", "refresh_token")
		form.Set("client_id", c.ClientID)
		form.Set("client_secret", c.ClientSecret)
		form.Set("refresh_token", c.RefreshToken)
	}
	value, life, err := exchange(ctx, hc, c.TokenURI, form)
	if err != nil {
		return "", err
	}
	t.value, t.expiry = value, now().Add(life)
	return value, nil
}

// assertion is the signed JWT a service account exchanges for a token.
func (c *credentials) assertion() (string, error) {
	block, _ := pem.Decode([]byte(c.PrivateKey))
	if block == nil {
		return "", fmt.Errorf("the private_key of the service account key in %s is not PEM", c.source)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		parsed, err = x509.ParsePKCS1PrivateKey(block.Bytes)
	}
	key, ok := parsed.(*rsa.PrivateKey)
	if err != nil || !ok {
		return "", fmt.Errorf("the private_key of the service account key in %s is not an RSA key", c.source)
	}
	iat := now().Unix()
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": c.PrivateKeyID})
	// The audience is Google's token endpoint whatever token_uri says, as
	// google-auth makes it.
	claims, _ := json.Marshal(map[string]any{"iss": c.ClientEmail, "scope": Scope, "aud": defaultTokenURI, "iat": iat, "exp": iat + 3600})
	enc := base64.RawURLEncoding
	signing := enc.EncodeToString(header) + "." + enc.EncodeToString(claims)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, key, crypto.SHA256, sum[:])
	if err != nil {
		return "", fmt.Errorf("signing the token request: %w", err)
	}
	return signing + "." + enc.EncodeToString(sig), nil
}

// exchange posts form to the token endpoint and returns the access token
// and its lifetime. A refusal (a revoked key, a wrong client) is an
// authentication error; an unavailable endpoint is retryable.
func exchange(ctx context.Context, hc *http.Client, uri string, form url.Values) (string, time.Duration, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, uri, strings.NewReader(form.Encode()))
	if err != nil {
		return "", 0, &llm.APIError{Kind: llm.ErrAuthentication, Message: "vertex_ai: token_uri: " + err.Error()}
	}
	r.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	r.Header.Set("Accept", "application/json")
	resp, err := hc.Do(r)
	if err != nil {
		return "", 0, fmt.Errorf("vertex_ai: getting an access token: %w", err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil {
		return "", 0, fmt.Errorf("vertex_ai: getting an access token: %w", err)
	}
	var out struct {
		AccessToken string  `json:"access_token"`
		ExpiresIn   float64 `json:"expires_in"`
		Error       string  `json:"error"`
		Description string  `json:"error_description"`
	}
	_ = json.Unmarshal(body, &out)
	if resp.StatusCode != http.StatusOK || out.AccessToken == "" {
		msg := strings.TrimSpace(out.Error + ": " + out.Description)
		if out.Error == "" {
			msg = httpapi.ParseBody(body).Message
		}
		e := llm.NewAPIError(resp.StatusCode, out.Error, "vertex_ai: the token endpoint refused the credentials: "+msg, resp.Header, nil)
		if resp.StatusCode >= 400 && resp.StatusCode < 500 && resp.StatusCode != http.StatusTooManyRequests {
			e.Kind = llm.ErrAuthentication
		}
		if resp.StatusCode == http.StatusOK {
			e.Kind, e.Message = llm.ErrServer, "vertex_ai: the token endpoint answered without an access token"
		}
		return "", 0, e
	}
	life := time.Duration(out.ExpiresIn * float64(time.Second))
	if life <= 0 {
		life = time.Hour
	}
	return out.AccessToken, life, nil
}

// Redact removes secrets from the message of a provider's error.
func Redact(err error, secrets []string) error {
	var api *llm.APIError
	if !errors.As(err, &api) {
		return err
	}
	for _, s := range secrets {
		if len(s) >= 8 {
			api.Message = strings.ReplaceAll(api.Message, s, "[redacted]")
		}
	}
	return err
}
