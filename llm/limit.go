package llm

import (
	"errors"
	"fmt"
	"io"
	"net/http"
)

// DefaultMaxReplyBytes bounds the size of one reply from a provider
// (Options.MaxReplyBytes): a confused or hostile server cannot make the
// process hold gigabytes. Replies of real models are far smaller.
const DefaultMaxReplyBytes = 32 << 20

// ErrReplyTooLarge is returned (wrapped) for a reply larger than
// Options.MaxReplyBytes. It is not retried.
var ErrReplyTooLarge = errors.New("llm: the reply is too large")

// limitTransport bounds the bodies of the responses it returns.
type limitTransport struct {
	base http.RoundTripper
	max  int64
}

func (t *limitTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.Body != nil {
		resp.Body = &limitBody{rc: resp.Body, max: t.max}
	}
	return resp, err
}

// limitBody fails a read past max bytes with ErrReplyTooLarge.
type limitBody struct {
	rc   io.ReadCloser
	n    int64
	max  int64
	over bool
}

func (b *limitBody) Read(p []byte) (int, error) {
	if b.over {
		return 0, b.err()
	}
	if b.n >= b.max {
		var one [1]byte
		n, err := b.rc.Read(one[:])
		if n > 0 {
			b.over = true
			return 0, b.err()
		}
		return 0, err
	}
	if rest := b.max - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.rc.Read(p)
	b.n += int64(n)
	return n, err
}

func (b *limitBody) err() error {
	return fmt.Errorf("%w: more than %d bytes", ErrReplyTooLarge, b.max)
}

func (b *limitBody) Close() error { return b.rc.Close() }

// limitClient returns hc with its responses bounded to max bytes.
func limitClient(hc *http.Client, max int64) *http.Client {
	if t, ok := hc.Transport.(*limitTransport); ok && t.max == max {
		return hc
	}
	c := *hc
	base := c.Transport
	if t, ok := base.(*limitTransport); ok {
		base = t.base
	}
	if base == nil {
		base = http.DefaultTransport
	}
	c.Transport = &limitTransport{base: base, max: max}
	return &c
}
