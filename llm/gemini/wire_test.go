package gemini_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
)

// rawServer answers every request with handle and counts the requests.
func rawServer(t *testing.T, handle func(w http.ResponseWriter, r *http.Request)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	n := new(atomic.Int32)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		io.Copy(io.Discard, r.Body)
		handle(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, n
}

func rawLLM(t *testing.T, url string, retries int) *llm.LLM {
	t.Helper()
	cfg := llm.DefaultConfig("gemini/gemini-2.0-flash")
	cfg.BaseURL, cfg.APIKey, cfg.NumRetries = url, secret.New("k"), retries
	cfg.RetryMultiplier, cfg.RetryMinWait, cfg.RetryMaxWait = 0, 0, 0
	l, err := llm.New(cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

const chunk = `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hel"}]}}]}` + "\r\n\r\n"

func streamOpts() *llm.CallOptions {
	return &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
}

// TestDroppedStream checks a stream cut off, inside an event or between
// two, fails as a connection or no-response error rather than passing for
// a whole reply.
func TestDroppedStream(t *testing.T) {
	cases := map[string]string{
		"inside an event": chunk + `data: {"candidates":[{"content":{"ro`,
		"between events":  chunk,
	}
	for name, body := range cases {
		srv, _ := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, body)
		})
		_, err := rawLLM(t, srv.URL, 2).Completion(context.Background(), conversation(), nil, streamOpts())
		if err == nil {
			t.Errorf("%s: no error", name)
			continue
		}
		if !errors.Is(err, llm.ErrConnection) && !errors.Is(err, llm.ErrNoResponse) {
			t.Errorf("%s: err = %v, want a connection or no-response error", name, err)
		}
	}
}

// TestMalformedReply checks a reply that is not JSON gives an error that
// says so, for a plain call and inside a stream.
func TestMalformedReply(t *testing.T) {
	for _, stream := range []bool{false, true} {
		srv, _ := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
			if stream {
				w.Header().Set("Content-Type", "text/event-stream")
				io.WriteString(w, chunk+"data: {not json}\r\n\r\n")
				return
			}
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"candidates":[`)
		})
		var opts *llm.CallOptions
		if stream {
			opts = streamOpts()
		}
		_, err := rawLLM(t, srv.URL, 1).Completion(context.Background(), conversation(), nil, opts)
		if err == nil || !strings.Contains(err.Error(), "malformed reply") {
			t.Errorf("stream=%v: err = %v, want a malformed-reply error", stream, err)
		}
	}
}

// TestErrorBodies checks errors that are not Google's JSON (a proxy's
// HTML page) still map by status, and Retry-After is read.
func TestErrorBodies(t *testing.T) {
	srv, _ := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Retry-After", "12")
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusTooManyRequests)
		io.WriteString(w, "<html><body>Slow down</body></html>")
	})
	_, err := rawLLM(t, srv.URL, 1).Completion(context.Background(), conversation(), nil, nil)
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrRateLimit) || !errors.As(err, &apiErr) || apiErr.RetryAfter.Seconds() != 12 || !strings.Contains(apiErr.Message, "Slow down") {
		t.Errorf("err = %v (%+v)", err, apiErr)
	}
}

// TestStreamErrorEventRetryInfo checks an error event inside a stream
// keeps its status and RetryInfo wait.
func TestStreamErrorEventRetryInfo(t *testing.T) {
	srv, n := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, chunk)
		fmt.Fprint(w, `data: {"error":{"code":429,"message":"Quota exceeded.","status":"RESOURCE_EXHAUSTED",`+
			`"details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"3s"}]}}`+"\r\n\r\n")
	})
	_, err := rawLLM(t, srv.URL, 1).Completion(context.Background(), conversation(), nil, streamOpts())
	var apiErr *llm.APIError
	if !errors.Is(err, llm.ErrRateLimit) || !errors.As(err, &apiErr) || apiErr.StatusCode != 429 || apiErr.RetryAfter.Seconds() != 3 || apiErr.Code != "RESOURCE_EXHAUSTED" {
		t.Errorf("err = %v (%+v)", err, apiErr)
	}
	if n.Load() != 1 {
		t.Errorf("%d requests", n.Load())
	}
}

// TestHeaders checks what a call sends besides the key: our user agent,
// which the config's extra headers may replace, and the stream's Accept.
func TestHeaders(t *testing.T) {
	var mu sync.Mutex
	var got []http.Header
	srv, _ := rawServer(t, func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Header.Clone())
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		io.WriteString(w, `data: {"candidates":[{"content":{"role":"model","parts":[{"text":"Hi"}]},"finishReason":"STOP"}]}`+"\r\n\r\n")
	})
	cfg := llm.DefaultConfig("gemini/gemini-2.0-flash")
	cfg.BaseURL, cfg.APIKey = srv.URL, secret.New("k")
	cfg.ExtraHeaders = map[string]string{"User-Agent": "mine/1"}
	for _, edit := range []func(){func() {}, func() { cfg.ExtraHeaders = nil }} {
		edit()
		l, err := llm.New(cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Completion(context.Background(), conversation(), nil, streamOpts()); err != nil {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(got) != 2 || got[0].Get("User-Agent") != "mine/1" || got[1].Get("User-Agent") != "gohands" ||
		got[1].Get("Accept") != "text/event-stream" || got[1].Get("Content-Type") != "application/json" {
		t.Errorf("headers %v", got)
	}
}
