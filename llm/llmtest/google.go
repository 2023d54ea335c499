package llmtest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// TokenServer is a scripted Google OAuth token endpoint (what a
// credentials file's token_uri names). It exchanges a service account's
// signed JWT (grant urn:ietf:params:oauth:grant-type:jwt-bearer, the
// signature checked with the key it issued) and an authorized user's
// refresh token for access tokens, and records every exchange.
type TokenServer struct {
	// URL is the token endpoint.
	URL string
	// Lifetime is the expires_in of the tokens it issues (an hour unless
	// set).
	Lifetime time.Duration

	t   testing.TB
	srv *httptest.Server
	key *rsa.PrivateKey

	mu        sync.Mutex
	exchanges []TokenExchange
	fail      []int // statuses to answer the next exchanges with
	issued    int
}

// TokenExchange is one exchange the TokenServer answered.
type TokenExchange struct {
	// Form is the posted form.
	Form map[string]string
	// Header and Claims are the JWT's, for a service account.
	Header, Claims map[string]any
	// Token is the access token issued ("" when refused).
	Token string
}

// googleTokenURI is the audience of a service account's JWT.
const googleTokenURI = "https://oauth2.googleapis.com/token"

// Test credentials of the TokenServer's files.
const (
	TestClientEmail  = "gohands-test@test-project.iam.gserviceaccount.com"
	TestClientID     = "123456.apps.googleusercontent.com"
	TestClientSecret = "d-FL95Q19q7MQmFpd7hHD0Ty"
	TestRefreshToken = "1//0gTestRefreshToken-abcdefghijklmnop"
)

// NewTokenServer starts a token endpoint, closed when the test ends.
func NewTokenServer(t testing.TB) *TokenServer {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	s := &TokenServer{t: t, key: key, Lifetime: time.Hour}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL + "/token"
	t.Cleanup(s.srv.Close)
	return s
}

// Fail makes the next exchanges fail with these statuses, in order.
func (s *TokenServer) Fail(statuses ...int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fail = append(s.fail, statuses...)
}

// Exchanges returns the exchanges so far.
func (s *TokenServer) Exchanges() []TokenExchange {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]TokenExchange(nil), s.exchanges...)
}

// Issued reports whether the server issued token.
func (s *TokenServer) Issued(token string) bool {
	for _, e := range s.Exchanges() {
		if e.Token != "" && e.Token == token {
			return true
		}
	}
	return false
}

// ServiceAccount writes a service account key file of project whose
// token_uri is the server, and returns its path.
func (s *TokenServer) ServiceAccount(t testing.TB, project string) string {
	der, err := x509.MarshalPKCS8PrivateKey(s.key)
	if err != nil {
		t.Fatal(err)
	}
	return writeJSONFile(t, "service-account.json", map[string]string{
		"type": "service_account", "project_id": project, "private_key_id": "0123456789abcdef",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": TestClientEmail, "client_id": "1234567890", "token_uri": s.URL,
		"auth_uri": "https://accounts.google.com/o/oauth2/auth",
	})
}

// AuthorizedUser writes gcloud's application_default_credentials.json
// with the given quota project, its token_uri the server, and returns its
// path.
func (s *TokenServer) AuthorizedUser(t testing.TB, quotaProject string) string {
	return writeJSONFile(t, "application_default_credentials.json", map[string]string{
		"type": "authorized_user", "client_id": TestClientID, "client_secret": TestClientSecret,
		"refresh_token": TestRefreshToken, "quota_project_id": quotaProject, "token_uri": s.URL,
		"account": "", "universe_domain": "googleapis.com",
	})
}

func writeJSONFile(t testing.TB, name string, v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

func (s *TokenServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost || r.URL.Path != "/token" {
		http.Error(w, "no such endpoint", http.StatusNotFound)
		return
	}
	if err := r.ParseForm(); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	ex := TokenExchange{Form: map[string]string{}}
	for k := range r.PostForm {
		ex.Form[k] = r.PostForm.Get(k)
	}
	refuse := func(status int, code, desc string) {
		s.mu.Lock()
		s.exchanges = append(s.exchanges, ex)
		s.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		json.NewEncoder(w).Encode(map[string]string{"error": code, "error_description": desc})
	}
	s.mu.Lock()
	var status int
	if len(s.fail) > 0 {
		status, s.fail = s.fail[0], s.fail[1:]
	}
	s.mu.Unlock()
	if status != 0 {
		refuse(status, "scripted", fmt.Sprintf("scripted failure %d", status))
		return
	}
	switch ex.Form["grant_type"] {
	case "urn:ietf:params:oauth:grant-type:jwt-bearer":
		var err error
		if ex.Header, ex.Claims, err = s.verify(ex.Form["assertion"]); err != nil {
			refuse(http.StatusBadRequest, "invalid_grant", err.Error())
			return
		}
	case "refresh_token":
		if ex.Form["client_id"] != TestClientID || ex.Form["client_secret"] != TestClientSecret || ex.Form["refresh_token"] != TestRefreshToken {
			refuse(http.StatusBadRequest, "invalid_grant", "Bad Request")
			return
		}
	default:
		refuse(http.StatusBadRequest, "unsupported_grant_type", "Invalid grant_type: "+ex.Form["grant_type"])
		return
	}
	s.mu.Lock()
	s.issued++
	ex.Token = fmt.Sprintf("ya29.llmtest-access-token-%d", s.issued)
	s.exchanges = append(s.exchanges, ex)
	life := s.Lifetime
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"access_token": ex.Token, "expires_in": int(life / time.Second), "token_type": "Bearer"})
}

// verify checks a JWT assertion: RS256 signed by the server's key, for
// the server, the test account and the cloud-platform scope, not expired.
func (s *TokenServer) verify(jwt string) (header, claims map[string]any, err error) {
	parts := strings.Split(jwt, ".")
	if len(parts) != 3 {
		return nil, nil, fmt.Errorf("assertion is not a JWT")
	}
	dec := base64.RawURLEncoding
	raw := make([][]byte, 3)
	for i, p := range parts {
		if raw[i], err = dec.DecodeString(p); err != nil {
			return nil, nil, fmt.Errorf("JWT part %d: %w", i, err)
		}
	}
	if json.Unmarshal(raw[0], &header) != nil || json.Unmarshal(raw[1], &claims) != nil {
		return nil, nil, fmt.Errorf("JWT header or claims are not JSON")
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if header["alg"] != "RS256" || rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], raw[2]) != nil {
		return nil, nil, fmt.Errorf("invalid JWT signature")
	}
	exp, _ := claims["exp"].(float64)
	iat, _ := claims["iat"].(float64)
	switch {
	case claims["iss"] != TestClientEmail:
		return nil, nil, fmt.Errorf("invalid_client: iss %v", claims["iss"])
	case claims["aud"] != googleTokenURI:
		// Google's token endpoint, whatever the file's token_uri.
		return nil, nil, fmt.Errorf("aud %v is not %s", claims["aud"], googleTokenURI)
	case claims["scope"] == nil || claims["scope"] == "":
		return nil, nil, fmt.Errorf("no scope")
	case exp <= iat || exp-iat > 3600:
		return nil, nil, fmt.Errorf("invalid JWT: token must be a short-lived token (60 minutes)")
	}
	return header, claims, nil
}

// UseGoogleCredentials makes the credentials file at path the only Google
// setting of the environment for the rest of the test: the VERTEX*
// variables and GOOGLE_CLOUD_PROJECT are cleared, gcloud's directory is
// an empty one (unless path is in it), and GOOGLE_APPLICATION_CREDENTIALS
// names path (unless path is gcloud's file, or empty).
func UseGoogleCredentials(t testing.TB, path string) {
	for _, k := range []string{"VERTEXAI_PROJECT", "VERTEX_PROJECT", "GOOGLE_CLOUD_PROJECT", "VERTEXAI_LOCATION", "VERTEX_LOCATION", "VERTEXAI_CREDENTIALS", "VERTEX_CREDENTIALS", "GOOGLE_APPLICATION_CREDENTIALS"} {
		t.Setenv(k, "")
	}
	if filepath.Base(path) == "application_default_credentials.json" {
		t.Setenv("CLOUDSDK_CONFIG", filepath.Dir(path))
		return
	}
	t.Setenv("CLOUDSDK_CONFIG", t.TempDir())
	t.Setenv("GOOGLE_APPLICATION_CREDENTIALS", path)
}
