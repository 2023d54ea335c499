package dockerapi

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Attachment is a connection attached to a container's standard streams.
// Closing it closes the container's stdin when the container was created
// with OpenStdin and StdinOnce: a process reading stdin then sees EOF. The
// kernel closes it too when this process dies, however it dies, which is
// what lets a container end with the program that started it.
type Attachment struct {
	conn net.Conn
	r    *bufio.Reader
}

// ContainerAttach attaches to the container's stdin, stdout and stderr.
// Attach before starting the container to see all of its output.
// Read the output with Output.
func (c *Client) ContainerAttach(ctx context.Context, id string) (*Attachment, error) {
	conn, err := c.dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("docker: engine at %s unreachable: %w", c.host, err)
	}
	if d, ok := ctx.Deadline(); ok {
		conn.SetDeadline(d)
	}
	q := url.Values{"stream": {"1"}, "stdin": {"1"}, "stdout": {"1"}, "stderr": {"1"}}
	path := strings.TrimPrefix(c.base, "http://docker") + "/containers/" + id + "/attach?" + q.Encode()
	req := "POST " + path + " HTTP/1.1\r\nHost: docker\r\nContent-Type: text/plain\r\nConnection: Upgrade\r\nUpgrade: tcp\r\n\r\n"
	if _, err := io.WriteString(conn, req); err != nil {
		conn.Close()
		return nil, fmt.Errorf("docker: attach: %w", err)
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		conn.Close()
		return nil, fmt.Errorf("docker: attach: %w", err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols && resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
		conn.Close()
		return nil, &Error{Status: resp.StatusCode, Message: strings.TrimSpace(string(b))}
	}
	conn.SetDeadline(time.Time{})
	return &Attachment{conn: conn, r: r}, nil
}

// Output copies the container's stdout and stderr to w, interleaved,
// until the container's streams end or the attachment is closed.
func (a *Attachment) Output(w io.Writer) error { return demux(w, a.r) }

// OutputTo copies the container's stdout to stdout and its stderr to
// stderr until the container's streams end or the attachment is closed.
func (a *Attachment) OutputTo(stdout, stderr io.Writer) error {
	var h [8]byte
	for {
		if _, err := io.ReadFull(a.r, h[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil
			}
			return err
		}
		n := int64(h[4])<<24 | int64(h[5])<<16 | int64(h[6])<<8 | int64(h[7])
		w := stdout
		if h[0] == 2 {
			w = stderr
		}
		if _, err := io.CopyN(w, a.r, n); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// Write sends p to the container's stdin.
func (a *Attachment) Write(p []byte) (int, error) { return a.conn.Write(p) }

// CloseWrite ends the container's stdin, keeping its output coming.
func (a *Attachment) CloseWrite() error {
	if cw, ok := a.conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

// Close detaches, closing the container's stdin.
func (a *Attachment) Close() error { return a.conn.Close() }
