package httpapi

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/llm"
)

func TestParseBody(t *testing.T) {
	for _, tc := range []struct {
		name, body string
		want       Body
	}{
		{"openai", `{"error":{"message":"Rate limit reached","type":"requests","param":null,"code":"rate_limit_exceeded"}}`,
			Body{Code: "rate_limit_exceeded", Type: "requests", Message: "Rate limit reached"}},
		{"openai null code", `{"error":{"message":"boom","type":"server_error","param":null,"code":null}}`,
			Body{Code: "server_error", Type: "server_error", Message: "boom"}},
		{"anthropic", `{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}`,
			Body{Code: "overloaded_error", Type: "overloaded_error", Message: "Overloaded"}},
		{"google", `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[]}}`,
			Body{Code: "RESOURCE_EXHAUSTED", Message: "Quota exceeded"}},
		{"google retry info", `{"error":{"code":429,"message":"Quota exceeded","status":"RESOURCE_EXHAUSTED","details":[` +
			`{"@type":"type.googleapis.com/google.rpc.QuotaFailure","violations":[]},` +
			`{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"37s"}]}}`,
			Body{Code: "RESOURCE_EXHAUSTED", Message: "Quota exceeded", RetryAfter: 37 * time.Second}},
		{"error string", `{"error":"model \"x\" not found"}`, Body{Message: `model "x" not found`}},
		{"top-level message", `{"message":"bad key","type":"auth","code":"invalid_api_key"}`, Body{Code: "invalid_api_key", Type: "auth", Message: "bad key"}},
		{"fastapi detail", `{"detail":"Not authenticated"}`, Body{Message: "Not authenticated"}},
		{"other JSON", `{"custom":true}`, Body{Message: `{"custom":true}`}},
		{"error object without message", `{"error":{"type":"invalid_request_error"}}`, Body{Code: "invalid_request_error", Type: "invalid_request_error", Message: `{"error":{"type":"invalid_request_error"}}`}},
		{"not JSON", "  <html>Bad Gateway</html>\n", Body{Message: "<html>Bad Gateway</html>"}},
		{"empty", "", Body{}},
	} {
		if got := ParseBody([]byte(tc.body)); got != tc.want {
			t.Errorf("%s: got %+v, want %+v", tc.name, got, tc.want)
		}
	}
	long := ParseBody([]byte(strings.Repeat("é", maxMessage)))
	if len(long.Message) > maxMessage+len("…") || !strings.HasSuffix(long.Message, "é…") {
		t.Errorf("long body kept as %d bytes ending %q", len(long.Message), long.Message[len(long.Message)-8:])
	}
}

func TestDo(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/ok":
			w.Write([]byte(`{"ok":true}`))
		case "/limited":
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(429)
			w.Write([]byte(`{"error":{"message":"slow down","type":"requests","code":"rate_limit_exceeded"}}`))
		case "/window":
			w.WriteHeader(400)
			w.Write([]byte(`{"error":{"message":"This model's maximum context length is 8192 tokens.","type":"invalid_request_error","code":"context_length_exceeded"}}`))
		case "/gateway":
			w.WriteHeader(502)
			w.Write([]byte("<html>Bad Gateway</html>"))
		}
	}))
	defer srv.Close()
	get := func(path string) (*http.Response, error) {
		req, _ := http.NewRequest("GET", srv.URL+path, nil)
		return Do(srv.Client(), req)
	}
	resp, err := get("/ok")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	_, err = get("/limited")
	var e *llm.APIError
	if !errors.Is(err, llm.ErrRateLimit) || !errors.As(err, &e) || e.RetryAfter != 7*time.Second || e.StatusCode != 429 || e.Message != "slow down" {
		t.Errorf("429: %v (%+v)", err, e)
	}
	if _, err = get("/window"); !errors.Is(err, llm.ErrContextWindowExceeded) {
		t.Errorf("context window: %v", err)
	}
	if _, err = get("/gateway"); !errors.Is(err, llm.ErrServer) || !strings.Contains(err.Error(), "Bad Gateway") {
		t.Errorf("502: %v", err)
	}
}

func TestStreamError(t *testing.T) {
	// An error event inside a stream has no status: its text decides.
	e := Error(0, nil, []byte(`{"error":{"message":"Your input exceeds the context window of this model.","code":"context_length_exceeded"}}`))
	if !errors.Is(e, llm.ErrContextWindowExceeded) {
		t.Errorf("got %v", e)
	}
}
