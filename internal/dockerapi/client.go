// Package dockerapi is a small client of the Docker Engine API over its
// unix socket: the calls gohands needs to run containers (create, start,
// inspect, logs, pause, stop, remove, list, wait, stats) and images
// (inspect). It speaks plain HTTP with net/http; the official client would
// add megabytes to the gohands binary for these few routes.
package dockerapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// APIVersion is the Engine API version the client asks for: Docker 20.10
// (Debian bookworm's docker.io) and every later engine serve it.
const APIVersion = "1.41"

// DefaultHost is where the engine listens unless DOCKER_HOST says otherwise.
const DefaultHost = "unix:///var/run/docker.sock"

// Client talks to one Docker engine. It is safe for concurrent use.
type Client struct {
	hc   *http.Client
	base string // "http://docker/v1.41"
	host string
	dial func(ctx context.Context) (net.Conn, error)
}

// New returns a client of the engine at host ("unix:///path" or
// "tcp://h:p"); an empty host means $DOCKER_HOST, else DefaultHost.
func New(host string) (*Client, error) {
	if host == "" {
		host = os.Getenv("DOCKER_HOST")
	}
	if host == "" {
		host = DefaultHost
	}
	u, err := url.Parse(host)
	if err != nil {
		return nil, fmt.Errorf("docker: bad host %q: %w", host, err)
	}
	var network, addr string
	switch u.Scheme {
	case "unix":
		network, addr = "unix", u.Path
	case "tcp", "http":
		network, addr = "tcp", u.Host
	default:
		return nil, fmt.Errorf("docker: host %q: only unix:// and tcp:// are supported", host)
	}
	dial := func(ctx context.Context) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	tr := &http.Transport{
		MaxIdleConnsPerHost: 8,
		IdleConnTimeout:     30 * time.Second,
		DialContext:         func(ctx context.Context, _, _ string) (net.Conn, error) { return dial(ctx) },
	}
	return &Client{hc: &http.Client{Transport: tr}, base: "http://docker/v" + APIVersion, host: host, dial: dial}, nil
}

// Host is the engine's address, as given to New.
func (c *Client) Host() string { return c.host }

// Close releases idle connections.
func (c *Client) Close() error {
	c.hc.CloseIdleConnections()
	return nil
}

// Error is a response of the engine with a status >= 400.
type Error struct {
	Status  int
	Message string
}

func (e *Error) Error() string { return fmt.Sprintf("docker: %s (HTTP %d)", e.Message, e.Status) }

// IsNotFound reports whether err is the engine's 404 (no such container or image).
func IsNotFound(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusNotFound
}

// IsConflict reports whether err is the engine's 409 (a name in use, a
// container in the wrong state).
func IsConflict(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Status == http.StatusConflict
}

// do sends a request; body, when not nil, is sent as JSON. The caller
// closes the response's body.
func (c *Client) do(ctx context.Context, method, path string, q url.Values, body any) (*http.Response, error) {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(b)
	}
	u := c.base + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("docker: engine at %s unreachable: %w", c.host, err)
	}
	if resp.StatusCode >= 400 {
		defer resp.Body.Close()
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		var m struct{ Message string }
		if json.Unmarshal(b, &m) != nil || m.Message == "" {
			m.Message = strings.TrimSpace(string(b))
		}
		return nil, &Error{Status: resp.StatusCode, Message: m.Message}
	}
	return resp, nil
}

// call sends a request and decodes a JSON answer into out (when not nil).
func (c *Client) call(ctx context.Context, method, path string, q url.Values, body, out any) error {
	resp, err := c.do(ctx, method, path, q, body)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// Ping checks that the engine answers.
func (c *Client) Ping(ctx context.Context) error {
	return c.call(ctx, http.MethodGet, "/_ping", nil, nil, nil)
}

// Version is the engine's version answer (the fields gohands reads).
type Version struct {
	Version    string
	APIVersion string
	Os         string
	Arch       string
}

// Version returns the engine's version.
func (c *Client) Version(ctx context.Context) (*Version, error) {
	var v Version
	return &v, c.call(ctx, http.MethodGet, "/version", nil, nil, &v)
}

// ImageInspect returns an image's id and configuration; IsNotFound(err)
// when the engine has no such image.
func (c *Client) ImageInspect(ctx context.Context, ref string) (*Image, error) {
	var im Image
	if err := c.call(ctx, http.MethodGet, "/images/"+url.PathEscape(ref)+"/json", nil, nil, &im); err != nil {
		return nil, err
	}
	return &im, nil
}

// ContainerCreate creates a container named name (empty: the engine picks
// one) and returns its id.
func (c *Client) ContainerCreate(ctx context.Context, name string, cfg *ContainerConfig) (string, error) {
	q := url.Values{}
	if name != "" {
		q.Set("name", name)
	}
	var r struct {
		ID       string `json:"Id"`
		Warnings []string
	}
	if err := c.call(ctx, http.MethodPost, "/containers/create", q, cfg, &r); err != nil {
		return "", err
	}
	return r.ID, nil
}

// ContainerStart starts a created or stopped container; starting a running
// one is not an error.
func (c *Client) ContainerStart(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/start", nil, nil, nil)
}

// ContainerInspect returns a container's state and settings.
func (c *Client) ContainerInspect(ctx context.Context, id string) (*ContainerJSON, error) {
	var cj ContainerJSON
	if err := c.call(ctx, http.MethodGet, "/containers/"+id+"/json", nil, nil, &cj); err != nil {
		return nil, err
	}
	return &cj, nil
}

// ContainerStop sends the container's stop signal, then SIGKILL after
// timeout; stopping a stopped container is not an error.
func (c *Client) ContainerStop(ctx context.Context, id string, timeout time.Duration) error {
	q := url.Values{"t": {strconv.Itoa(int((timeout + time.Second - 1) / time.Second))}}
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/stop", q, nil, nil)
}

// ContainerKill sends signal (empty: SIGKILL) to the container's main process.
func (c *Client) ContainerKill(ctx context.Context, id, signal string) error {
	var q url.Values
	if signal != "" {
		q = url.Values{"signal": {signal}}
	}
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/kill", q, nil, nil)
}

// ContainerPause freezes every process of the container.
func (c *Client) ContainerPause(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/pause", nil, nil, nil)
}

// ContainerUnpause thaws a paused container.
func (c *Client) ContainerUnpause(ctx context.Context, id string) error {
	return c.call(ctx, http.MethodPost, "/containers/"+id+"/unpause", nil, nil, nil)
}

// ContainerRemove removes a container, killing it first when running, with
// its anonymous volumes. A container already gone is not an error.
func (c *Client) ContainerRemove(ctx context.Context, id string) error {
	err := c.call(ctx, http.MethodDelete, "/containers/"+id, url.Values{"force": {"1"}, "v": {"1"}}, nil, nil)
	if IsNotFound(err) {
		return nil
	}
	// 409 "removal already in progress" (an AutoRemove racing us).
	if IsConflict(err) && strings.Contains(err.Error(), "in progress") {
		return nil
	}
	return err
}

// WaitResult is how a container ended.
type WaitResult struct {
	StatusCode int
	Err        error
}

// ContainerWait asks the engine to report when the container reaches
// condition ("not-running", "next-exit" or "removed"). It returns once
// the engine has registered the wait, so a container started afterwards
// cannot end unseen; the channel then gets one result.
func (c *Client) ContainerWait(ctx context.Context, id, condition string) (<-chan WaitResult, error) {
	resp, err := c.do(ctx, http.MethodPost, "/containers/"+id+"/wait", url.Values{"condition": {condition}}, nil)
	if err != nil {
		return nil, err
	}
	ch := make(chan WaitResult, 1)
	go func() {
		defer resp.Body.Close()
		var r struct {
			StatusCode int
			Error      *struct{ Message string }
		}
		err := json.NewDecoder(resp.Body).Decode(&r)
		if err == nil && r.Error != nil && r.Error.Message != "" {
			err = fmt.Errorf("docker: wait: %s", r.Error.Message)
		}
		ch <- WaitResult{StatusCode: r.StatusCode, Err: err}
	}()
	return ch, nil
}

// ContainerList lists containers (stopped ones too when all) carrying
// every given label ("key" or "key=value").
func (c *Client) ContainerList(ctx context.Context, all bool, labels ...string) ([]ContainerSummary, error) {
	q := url.Values{}
	if all {
		q.Set("all", "1")
	}
	if len(labels) > 0 {
		f, _ := json.Marshal(map[string][]string{"label": labels})
		q.Set("filters", string(f))
	}
	var out []ContainerSummary
	return out, c.call(ctx, http.MethodGet, "/containers/json", q, nil, &out)
}

// ContainerLogs returns the last tail lines (0: all) of the container's
// stdout and stderr, interleaved as written.
func (c *Client) ContainerLogs(ctx context.Context, id string, tail int) (string, error) {
	q := url.Values{"stdout": {"1"}, "stderr": {"1"}, "tail": {"all"}}
	if tail > 0 {
		q.Set("tail", strconv.Itoa(tail))
	}
	resp, err := c.do(ctx, http.MethodGet, "/containers/"+id+"/logs", q, nil)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	var b strings.Builder
	if resp.Header.Get("Content-Type") == "application/vnd.docker.raw-stream" {
		_, err = io.Copy(&b, io.LimitReader(resp.Body, 1<<20))
		return b.String(), err
	}
	err = demux(&b, io.LimitReader(resp.Body, 1<<20))
	return b.String(), err
}

// demux copies the payloads of the engine's multiplexed stream (an 8-byte
// header per frame: stream, 3 zero bytes, big-endian length) to w.
func demux(w io.Writer, r io.Reader) error {
	var h [8]byte
	for {
		if _, err := io.ReadFull(r, h[:]); err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				return nil
			}
			return err
		}
		n := int64(h[4])<<24 | int64(h[5])<<16 | int64(h[6])<<8 | int64(h[7])
		if _, err := io.CopyN(w, r, n); err != nil {
			if err == io.EOF {
				return nil
			}
			return err
		}
	}
}

// ContainerMemory returns the container's memory use in bytes as its
// cgroup counts it, page cache excluded (what `docker stats` shows).
func (c *Client) ContainerMemory(ctx context.Context, id string) (uint64, error) {
	var s struct {
		MemoryStats struct {
			Usage uint64            `json:"usage"`
			Stats map[string]uint64 `json:"stats"`
		} `json:"memory_stats"`
	}
	q := url.Values{"stream": {"false"}, "one-shot": {"true"}}
	if err := c.call(ctx, http.MethodGet, "/containers/"+id+"/stats", q, nil, &s); err != nil {
		return 0, err
	}
	u := s.MemoryStats.Usage
	for _, k := range []string{"total_inactive_file", "inactive_file"} { // cgroup v1, v2
		if v, ok := s.MemoryStats.Stats[k]; ok && v < u {
			return u - v, nil
		}
	}
	return u, nil
}
