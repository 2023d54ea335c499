package llm

import (
	"context"
	"io"
	"net"
	"net/http"
	"time"
)

// defaultHTTPClient is the client of an LLM given none: http's default
// transport, whose connections let a request body write itself (see
// bodyConn).
var defaultHTTPClient = &http.Client{Transport: newTransport()}

func newTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second} // as http.DefaultTransport's
	t.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		return bodyConn{c}, nil
	}
	return t
}

// A sizedBody is a request body that can write what is left of it
// (io.WriterTo) and knows how much that is: llm/openai's body of cached
// message encodings. It must be an io.ReadCloser: net/http hands the
// connection any other body inside io.NopCloser's wrapper, without Len.
type sizedBody interface {
	io.WriterTo
	Len() int
}

// bodyConn lets a sizedBody write itself to the connection. net/http gives
// a body of known length to the connection's ReadFrom wrapped in an
// *io.LimitedReader, which io.Copy reads through a 32 KB buffer with one
// system call per 32 KB: for the request of a long history, resent at every
// step, that copy and those calls cost more than the encoding the message
// cache saved. Any other reader goes the usual way. Over TLS, tls.Conn
// writes records to the connection and never hands it a body.
type bodyConn struct{ net.Conn }

func (c bodyConn) ReadFrom(r io.Reader) (int64, error) {
	if lr, ok := r.(*io.LimitedReader); ok {
		if b, ok := lr.R.(sizedBody); ok && int64(b.Len()) == lr.N {
			n, err := b.WriteTo(c.Conn)
			lr.N -= n
			return n, err
		}
	}
	return io.Copy(c.Conn, r)
}
