package workspace

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"mime/multipart"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/event"
)

// Remote is the workspace of an agent server (gohands serve or the
// reference's openhands-agent-server), reached over its HTTP API. It
// encodes as the reference's RemoteWorkspace.
//
// Use it through a pointer; it makes its HTTP client on first use.
type Remote struct {
	// WorkingDir is the directory on the server relative paths are
	// resolved against (and where a conversation's agent works).
	WorkingDir string `json:"working_dir"`
	// Host is the server's base URL, e.g. http://127.0.0.1:8000. A
	// trailing slash is ignored.
	Host string `json:"host"`
	// APIKey, if set, is sent as X-Session-API-Key.
	APIKey string `json:"api_key,omitempty"`
	// ReadTimeout bounds each HTTP request, in seconds (0: 600).
	ReadTimeout float64 `json:"read_timeout,omitempty"`
	// MaxConnections bounds the connections to the server (nil: no bound).
	MaxConnections *int `json:"max_connections,omitempty"`

	// HTTPClient, if set, is used instead of a client of the workspace's
	// own (its Timeout is left as it is).
	HTTPClient *http.Client `json:"-"`

	mu     sync.Mutex
	client *http.Client
}

func init() { event.RegisterKind[Remote]("RemoteWorkspace") }

var _ Workspace = (*Remote)(nil)

// Errors of a remote workspace's API calls, matched by errors.Is on an
// *APIError.
var (
	ErrUnauthorized = errors.New("agent server refused the session key")
	ErrNotFound     = errors.New("not found on the agent server")
)

// APIError is an agent server's answer with an error status.
type APIError struct {
	Method, Path string
	Status       int
	// Detail is the answer's "detail", or its body cut short.
	Detail string
}

func (e *APIError) Error() string {
	return fmt.Sprintf("agent server: %s %s: %d %s: %s", e.Method, e.Path, e.Status, http.StatusText(e.Status), e.Detail)
}

// Is makes 401 match ErrUnauthorized and 404 ErrNotFound.
func (e *APIError) Is(target error) bool {
	return target == ErrUnauthorized && e.Status == http.StatusUnauthorized ||
		target == ErrNotFound && e.Status == http.StatusNotFound
}

// BaseURL is Host without its trailing slash.
func (w *Remote) BaseURL() string { return strings.TrimRight(w.Host, "/") }

// Client returns the HTTP client requests go through.
func (w *Remote) Client() *http.Client {
	if w.HTTPClient != nil {
		return w.HTTPClient
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.client == nil {
		t := http.DefaultTransport.(*http.Transport).Clone()
		if w.MaxConnections != nil && *w.MaxConnections > 0 {
			t.MaxConnsPerHost = *w.MaxConnections
		}
		t.MaxIdleConnsPerHost = 16
		timeout := 600 * time.Second
		if w.ReadTimeout > 0 {
			timeout = time.Duration(w.ReadTimeout * float64(time.Second))
		}
		w.client = &http.Client{Transport: t, Timeout: timeout}
	}
	return w.client
}

// Request sends an API request: body, if not nil, is encoded as JSON, and
// a 2xx answer is decoded into out if out is not nil. An error status is
// an *APIError; an unreachable server or an answer that is not the JSON
// expected is an error saying so.
func (w *Remote) Request(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("agent server: %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(b)
	}
	resp, err := w.send(ctx, method, path, query, rd, "application/json")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return fmt.Errorf("agent server: %s %s: reading the answer: %w", method, path, err)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("agent server: %s %s: bad answer %q: %w", method, path, cut(data), err)
	}
	return nil
}

// send sends a request and returns a 2xx answer, whose body the caller
// closes.
func (w *Remote) send(ctx context.Context, method, path string, query url.Values, body io.Reader, ctype string) (*http.Response, error) {
	u := w.BaseURL() + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	req, err := http.NewRequestWithContext(ctx, method, u, body)
	if err != nil {
		return nil, fmt.Errorf("agent server: %w", err)
	}
	if body != nil {
		req.Header.Set("Content-Type", ctype)
	}
	req.Header.Set("Accept", "application/json")
	if w.APIKey != "" {
		req.Header.Set("X-Session-API-Key", w.APIKey)
	}
	resp, err := w.Client().Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("agent server at %s unreachable: %w", w.BaseURL(), err)
	}
	if resp.StatusCode/100 == 2 {
		return resp, nil
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	e := &APIError{Method: method, Path: path, Status: resp.StatusCode, Detail: cut(data)}
	var d struct {
		Detail    json.RawMessage `json:"detail"`
		Exception string          `json:"exception"`
	}
	if json.Unmarshal(data, &d) == nil && len(d.Detail) > 0 {
		var s string
		if json.Unmarshal(d.Detail, &s) == nil {
			e.Detail = s
		} else {
			e.Detail = string(d.Detail)
		}
		// The reference answers a 5xx with the detail "Internal Server
		// Error" and the cause in exception.
		if d.Exception != "" {
			e.Detail += ": " + cut([]byte(d.Exception))
		}
	}
	return nil, e
}

// cut shortens an answer for an error message.
func cut(b []byte) string {
	const n = 200
	if len(b) > n {
		return string(b[:n]) + "…"
	}
	return string(b)
}

// Alive returns nil if the server answers /health.
func (w *Remote) Alive(ctx context.Context) error {
	return w.Request(ctx, http.MethodGet, "/health", nil, nil, nil)
}

// path resolves p against the working directory, with slashes.
func (w *Remote) path(p string) string { return join(w.WorkingDir, filepath.ToSlash(p), true) }

// bashOutput is the part of a BashOutput event Execute reads.
type bashOutput struct {
	Order    int     `json:"order"`
	ExitCode *int    `json:"exit_code"`
	Stdout   *string `json:"stdout"`
	Stderr   *string `json:"stderr"`
}

// Execute starts command on the server and polls its output until it
// exits. The server ends it at the timeout (rounded up to whole seconds);
// if the server says nothing for a few seconds more, Execute gives up
// with exit code -1.
func (w *Remote) Execute(ctx context.Context, command string, opts *ExecOptions) (*CommandResult, error) {
	timeout := opts.timeout()
	secs := int(math.Ceil(timeout.Seconds()))
	req := protocol.BashRequest{Command: command, Timeout: &secs}
	if c := opts.cwd(); c != "" {
		cwd := w.path(c)
		req.Cwd = &cwd
	} else if w.WorkingDir != "" {
		wd := w.WorkingDir
		req.Cwd = &wd
	}
	var started struct {
		ID string `json:"id"`
	}
	// The server's clock for the timeout starts after this one: an exit
	// code of -1 reported once timeout has passed here is the timeout.
	begin := time.Now()
	if err := w.Request(ctx, http.MethodPost, "/api/bash/start_bash_command", nil, req, &started); err != nil {
		return nil, err
	}
	if started.ID == "" {
		return nil, errors.New("agent server: start_bash_command answered without a command id")
	}
	res := &CommandResult{Command: command, ExitCode: -1}
	var stdout, stderr strings.Builder
	deadline := time.Now().Add(time.Duration(secs)*time.Second + 5*time.Second)
	last, wait := -1, time.Millisecond
	for {
		q := url.Values{"command_id__eq": {started.ID}, "kind__eq": {"BashOutput"}, "sort_order": {"TIMESTAMP"}, "limit": {"100"}}
		if last >= 0 {
			q.Set("order__gt", strconv.Itoa(last))
		}
		var page struct {
			Items []bashOutput `json:"items"`
		}
		if err := w.Request(ctx, http.MethodGet, "/api/bash/bash_events/search", q, nil, &page); err != nil {
			return nil, err
		}
		for _, o := range page.Items {
			if o.Order <= last {
				continue
			}
			last = o.Order
			if o.Stdout != nil {
				stdout.WriteString(*o.Stdout)
			}
			if o.Stderr != nil {
				stderr.WriteString(*o.Stderr)
			}
			if o.ExitCode != nil {
				res.ExitCode = *o.ExitCode
				res.Stdout, res.Stderr = stdout.String(), stderr.String()
				res.TimeoutOccurred = res.ExitCode == -1 && time.Since(begin) >= timeout
				if res.TimeoutOccurred {
					res.Stderr += fmt.Sprintf("Command timed out after %v", timeout)
				}
				return res, nil
			}
		}
		if len(page.Items) > 0 {
			wait = time.Millisecond
			continue
		}
		if time.Now().After(deadline) {
			res.Stdout, res.Stderr, res.TimeoutOccurred = stdout.String(), stderr.String()+fmt.Sprintf("Command timed out after %v", timeout), true
			return res, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(wait):
		}
		wait = min(2*wait, 100*time.Millisecond)
	}
}

// Upload sends the local file src to dst on the server.
func (w *Remote) Upload(ctx context.Context, src, dst string) error {
	f, err := os.Open(src)
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil {
		return fmt.Errorf("workspace: %w", err)
	} else if !fi.Mode().IsRegular() {
		return fmt.Errorf("workspace: %s is not a file", src)
	}
	pr, pw := io.Pipe()
	mw := multipart.NewWriter(pw)
	go func() {
		part, err := mw.CreateFormFile("file", filepath.Base(src))
		if err == nil {
			_, err = io.Copy(part, f)
		}
		if err == nil {
			err = mw.Close()
		}
		pw.CloseWithError(err)
	}()
	resp, err := w.send(ctx, http.MethodPost, "/api/file/upload", url.Values{"path": {w.path(dst)}}, pr, mw.FormDataContentType())
	pr.CloseWithError(io.ErrClosedPipe) // ends the writer if send failed early
	if err != nil {
		return err
	}
	resp.Body.Close()
	return nil
}

// Download fetches src from the server into the local file dst.
func (w *Remote) Download(ctx context.Context, src, dst string) error {
	resp, err := w.send(ctx, http.MethodGet, "/api/file/download", url.Values{"path": {w.path(src)}}, nil, "")
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	tmp, err := os.CreateTemp(filepath.Dir(dst), ".download-*")
	if err != nil {
		return fmt.Errorf("workspace: %w", err)
	}
	_, err = io.Copy(tmp, resp.Body)
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp.Name(), dst)
	}
	if err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("workspace: download %s: %w", src, err)
	}
	return nil
}

// GitChanges asks the server for the changes of the repository holding dir.
func (w *Remote) GitChanges(ctx context.Context, dir string) ([]GitChange, error) {
	var ch []GitChange
	if err := w.Request(ctx, http.MethodGet, "/api/git/changes", url.Values{"path": {w.path(dir)}}, nil, &ch); err != nil {
		return nil, err
	}
	if ch == nil {
		ch = []GitChange{}
	}
	return ch, nil
}

// GitDiff asks the server for file at HEAD and on disk.
func (w *Remote) GitDiff(ctx context.Context, file string) (*GitDiff, error) {
	var d GitDiff
	if err := w.Request(ctx, http.MethodGet, "/api/git/diff", url.Values{"path": {w.path(file)}}, nil, &d); err != nil {
		return nil, err
	}
	return &d, nil
}

// Close closes the idle connections of the workspace's own client.
func (w *Remote) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.client != nil {
		w.client.CloseIdleConnections()
	}
	return nil
}

// AgentServer returns w: the agent server conversations in this workspace
// run on. A workspace that starts a server of its own (a container)
// returns that server's Remote.
func (w *Remote) AgentServer() *Remote { return w }
