package llm

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"sync"
	"time"
)

// errStreamIdle is the cause of an attempt cut by stream_idle_timeout.
var errStreamIdle = errors.New("stream idle timeout")

// idleTransport cuts an event stream that sends nothing for idle: each
// response body of type text/event-stream or Bedrock's
// application/vnd.amazon.eventstream (a streamed reply, whether the
// caller asked for deltas or the provider needs a stream) cancels the
// attempt with errStreamIdle when no byte arrives for that long. The time
// before the response comes is the per-call timeout's.
type idleTransport struct {
	base   http.RoundTripper
	idle   time.Duration
	cancel context.CancelCauseFunc
}

func (t *idleTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil {
		return nil, err
	}
	if typ, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); typ == "text/event-stream" || typ == "application/vnd.amazon.eventstream" {
		b := &idleBody{ReadCloser: resp.Body, idle: t.idle}
		b.timer = time.AfterFunc(t.idle, func() { t.cancel(errStreamIdle) })
		resp.Body = b
	}
	return resp, nil
}

type idleBody struct {
	io.ReadCloser
	idle  time.Duration
	once  sync.Once
	timer *time.Timer
}

func (b *idleBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if n > 0 {
		b.timer.Reset(b.idle)
	}
	return n, err
}

func (b *idleBody) Close() error {
	b.once.Do(func() { b.timer.Stop() })
	return b.ReadCloser.Close()
}

// withIdleTimeout returns req with an HTTP client that cuts idle event
// streams by cancelling with cancel, or req itself when the config sets no
// idle limit.
func withIdleTimeout(req *Request, cancel context.CancelCauseFunc) *Request {
	c := req.Config
	if c == nil || c.StreamIdleTimeout == nil || *c.StreamIdleTimeout <= 0 {
		return req
	}
	hc := req.HTTPClient
	if hc == nil {
		hc = defaultHTTPClient
	}
	base := hc.Transport
	if base == nil {
		base = http.DefaultTransport
	}
	wrapped := *hc
	wrapped.Transport = &idleTransport{base: base, idle: seconds(*c.StreamIdleTimeout), cancel: cancel}
	r := *req
	r.HTTPClient = &wrapped
	return &r
}
