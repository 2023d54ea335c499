package llmtest

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// A ProviderCase describes a provider for Conformance.
type ProviderCase struct {
	// Server starts a scripted server speaking the provider's wire
	// format (NewAnthropic, NewGemini, ...).
	Server func(t testing.TB, replies ...Reply) *Server
	// LLM returns an LLM calling srv with fast retries, its configuration
	// edited by edit when not nil.
	LLM func(t *testing.T, srv *Server, edit func(*llm.Config)) *llm.LLM
	// NotRetried are the provider's own error answers that must fail at
	// once, each with its kind; a context window overflow is always
	// checked.
	NotRetried []Refusal
}

// A Refusal is an error answer and the llm error kind it must map to.
type Refusal struct {
	Reply Reply
	Kind  error
}

// Conformance runs the behaviour every provider shares, as subtests:
// retried failures, failures that are not retried, and timeouts, streamed
// or not, with and without retries left.
func Conformance(t *testing.T, c ProviderCase) {
	t.Helper()
	msgs := []event.Message{event.UserMessage("List the files.")}
	text := func(r *llm.Response) string { return event.TextOf(r.Message.Content) }

	t.Run("retried", func(t *testing.T) {
		srv := c.Server(t, RateLimited(0), Fail(503, "overloaded"), Reply{Text: "finally"})
		r, err := c.LLM(t, srv, nil).Completion(context.Background(), msgs, nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if text(r) != "finally" || len(srv.Requests()) != 3 {
			t.Errorf("reply %q after %d requests, want the third's", text(r), len(srv.Requests()))
		}
	})

	t.Run("not retried", func(t *testing.T) {
		for _, f := range append([]Refusal{{ContextWindowExceeded(), llm.ErrContextWindowExceeded}}, c.NotRetried...) {
			srv := c.Server(t, f.Reply)
			_, err := c.LLM(t, srv, nil).Completion(context.Background(), msgs, nil, nil)
			if !errors.Is(err, f.Kind) {
				t.Errorf("err = %v, want %v", err, f.Kind)
			}
			if n := len(srv.Requests()); n != 1 {
				t.Errorf("%v: %d requests, want 1 (no retry)", f.Kind, n)
			}
		}
	})

	t.Run("timeout", func(t *testing.T) {
		for _, stream := range []bool{false, true} {
			t.Run(fmt.Sprintf("stream=%v", stream), func(t *testing.T) {
				t.Parallel()
				opts := &llm.CallOptions{OnDelta: func(llm.Delta) error { return nil }}
				edit := func(timeout float64, retries int) func(*llm.Config) {
					return func(c *llm.Config) { c.Timeout, c.NumRetries, c.Stream = timeout, retries, stream }
				}
				srv := c.Server(t, Reply{Text: "too late", Delay: time.Minute})
				if _, err := c.LLM(t, srv, edit(0.1, 1)).Completion(context.Background(), msgs, nil, opts); !errors.Is(err, llm.ErrTimeout) {
					t.Errorf("err = %v, want ErrTimeout", err)
				}
				// With retries left, a timed-out attempt is tried again. The
				// second attempt must answer within the same limit, so it is
				// not 0.1 s: a loaded machine missed that (issue 35).
				srv = c.Server(t, Reply{Text: "too late", Delay: time.Minute}, Reply{Text: "second try"})
				r, err := c.LLM(t, srv, edit(3, 2)).Completion(context.Background(), msgs, nil, opts)
				if err != nil || text(r) != "second try" {
					t.Errorf("after a timeout: %v, %+v", err, r)
				}
			})
		}
	})

	t.Run("broken stream", func(t *testing.T) {
		// A stream cut before its first event, after one, after three,
		// and one whose first event is not JSON: each a clear error of a
		// retryable kind, retried when nothing of it reached the caller.
		broken := []Reply{{Text: "cut short by the server", CutAfter: 1}, {Text: "cut short by the server", CutAfter: 3}, {Text: "garbled", MalformedStream: true}}
		for _, b := range broken {
			deltas := 0
			opts := &llm.CallOptions{OnDelta: func(llm.Delta) error { deltas++; return nil }}
			srv := c.Server(t, b, Reply{Text: "second try"})
			l := c.LLM(t, srv, func(c *llm.Config) { c.Timeout, c.NumRetries = 30, 2 })
			r, err := l.Completion(context.Background(), msgs, nil, opts)
			switch {
			case err == nil && text(r) == "second try" && len(srv.Requests()) == 2:
			case err == nil:
				t.Errorf("%+v: reply %q after %d requests, want the retry's", b, text(r), len(srv.Requests()))
			case deltas == 0:
				t.Errorf("%+v: %v; nothing was streamed, so it must be retried", b, err)
			case !errors.Is(err, llm.ErrConnection) && !errors.Is(err, llm.ErrNoResponse) && !errors.Is(err, llm.ErrServer):
				t.Errorf("%+v: err = %v, want a connection, no-response or server error", b, err)
			}
		}
	})
}
