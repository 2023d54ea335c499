package server

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/secret"
)

// The MCP routes (the reference's /api/mcp): test one candidate server
// before it is saved, and authorize one behind OAuth 2. Nothing here
// writes the settings: the caller saves the server, with the oauth_state
// a probe returns as its auth.state, through /api/settings/mcp.

const (
	mcpDefaultProbeName = "test-server"
	mcpOAuthJobTTL      = 15 * time.Minute
	// mcpOAuthConsentWait bounds how long a job waits for the user's
	// consent (the callback).
	mcpOAuthConsentWait = 10 * time.Minute
)

func (s *Server) mcpRoutes() []*route {
	const t = "MCP"
	return []*route{
		{method: "POST", path: "/api/mcp/test", summary: "Connect to a candidate MCP server, list its tools and optionally call one (ok false when it fails; nothing is saved)", tag: t, body: mcpTestRequest{}, resp: mcpTestResponse{}, errors: []int{422}, h: s.handleMCPTest},
		{method: "POST", path: "/api/mcp/oauth/start", summary: "Start authorizing an OAuth MCP server: the authorization URL to open", tag: t, body: mcpTestRequest{}, resp: mcpOAuthStart{}, errors: []int{400, 422}, h: s.handleMCPOAuthStart},
		{method: "GET", path: "/api/mcp/oauth/status/{job_id}", summary: "The state of an MCP OAuth authorization", tag: t, query: &mcpJobPath{}, resp: mcpOAuthStatus{}, errors: []int{404}, h: s.handleMCPOAuthStatus},
		{method: "POST", path: "/api/mcp/oauth/callback/{job_id}", summary: "Hand over the callback URL the browser was redirected to", tag: t, query: &mcpJobPath{}, body: mcpOAuthCallback{}, resp: mcpOAuthStatus{}, errors: []int{400, 404, 409, 422}, h: s.handleMCPOAuthCallback},
	}
}

type mcpJobPath struct {
	JobID string `path:"job_id"`
}

// mcpTestRequest is the reference's MCPTestRequest.
type mcpTestRequest struct {
	Name     string          `json:"name,omitempty" minLength:"1" maxLength:"128"`
	Server   map[string]any  `json:"server" required:"true"`
	Timeout  *float64        `json:"timeout,omitempty"`
	ToolCall *mcpToolCallReq `json:"tool_call,omitempty"`
}

type mcpToolCallReq struct {
	Name      string         `json:"name" required:"true" minLength:"1"`
	Arguments map[string]any `json:"arguments,omitempty"`
}

type mcpToolResult struct {
	IsError bool   `json:"is_error"`
	Text    string `json:"text"`
}

// mcpTestResponse is MCPTestSuccess or MCPTestFailure (ok tells which).
type mcpTestResponse struct {
	OK         bool            `json:"ok"`
	Tools      []string        `json:"tools,omitempty"`
	ToolResult *mcpToolResult  `json:"tool_result,omitempty"`
	OAuthState json.RawMessage `json:"oauth_state,omitempty"`
	Error      string          `json:"error,omitempty"`
	ErrorKind  string          `json:"error_kind,omitempty" enum:"timeout,connection,unknown"`
}

type mcpOAuthStart struct {
	OK               bool   `json:"ok"`
	JobID            string `json:"job_id,omitempty"`
	AuthorizationURL string `json:"authorization_url,omitempty"`
	Error            string `json:"error,omitempty"`
	ErrorKind        string `json:"error_kind,omitempty"`
}

type mcpOAuthStatus struct {
	OK               bool            `json:"ok"`
	Status           string          `json:"status" enum:"pending,authorizing,succeeded,failed"`
	JobID            string          `json:"job_id"`
	AuthorizationURL string          `json:"authorization_url,omitempty"`
	CallbackReady    bool            `json:"callback_ready"`
	Tools            []string        `json:"tools,omitempty"`
	ToolResult       *mcpToolResult  `json:"tool_result,omitempty"`
	OAuthState       json.RawMessage `json:"oauth_state,omitempty"`
	Error            string          `json:"error,omitempty"`
	ErrorKind        string          `json:"error_kind,omitempty"`
}

type mcpOAuthCallback struct {
	CallbackURL string `json:"callback_url" required:"true" minLength:"1"`
}

// mcpProbe is a validated request: the server to connect to, by name.
type mcpProbe struct {
	name     string
	spec     mcp.Server
	timeout  time.Duration
	toolCall *mcpToolCallReq
}

// readMCPProbe reads and validates a test request as the reference does:
// the server is given as its settings form (transport) or its REST form
// (type, with "shttp" for streamable HTTP).
func (s *Server) readMCPProbe(w http.ResponseWriter, r *http.Request) (*mcpProbe, error) {
	var req mcpTestRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		return nil, err
	}
	if req.Server == nil {
		return nil, &invalidError{loc: []any{"body", "server"}, typ: "missing", msg: "Field required"}
	}
	if _, ok := req.Server["authentication"]; ok {
		return nil, invalid("OAuth authentication metadata belongs under auth.authentication.", "body")
	}
	p := &mcpProbe{name: strings.TrimSpace(req.Name), timeout: 15 * time.Second, toolCall: req.ToolCall}
	if p.name == "" {
		p.name = mcpDefaultProbeName
	}
	if len(req.Name) > 128 {
		return nil, invalid("name: at most 128 characters", "body", "name")
	}
	if req.Timeout != nil {
		if *req.Timeout <= 0 || *req.Timeout > 120 {
			return nil, invalid("timeout must be greater than 0 and at most 120", "body", "timeout")
		}
		p.timeout = time.Duration(*req.Timeout * float64(time.Second))
	}
	if p.toolCall != nil && p.toolCall.Name == "" {
		return nil, invalid("tool_call.name must not be empty", "body", "tool_call", "name")
	}
	srv := req.Server
	if _, ok := srv["type"]; !ok {
		typ, _ := srv["transport"].(string)
		if typ == "" {
			typ = "http"
			if _, ok := srv["command"]; ok {
				typ = "stdio"
			}
		}
		srv["type"] = typ
	}
	delete(srv, "transport")
	switch typ, _ := srv["type"].(string); typ {
	case "stdio":
		if c, _ := srv["command"].(string); c == "" {
			return nil, &invalidError{loc: []any{"body", "server", "stdio", "command"}, typ: "missing", msg: "Field required"}
		}
	case "http", "shttp", "streamable-http", "sse":
		if u, _ := srv["url"].(string); u == "" {
			return nil, &invalidError{loc: []any{"body", "server", typ, "url"}, typ: "missing", msg: "Field required"}
		}
	default:
		return nil, invalid(fmt.Sprintf("server type %q is not one of stdio, http, shttp, streamable-http, sse", typ), "body", "server")
	}
	data, _ := json.Marshal(srv)
	if err := json.Unmarshal(data, &p.spec); err != nil {
		return nil, invalid("server: "+err.Error(), "body", "server")
	}
	if err := p.spec.Validate(); err != nil {
		return nil, invalid("server: "+err.Error(), "body", "server")
	}
	if s.cipher != nil {
		// Values round-tripped from the settings may be Fernet tokens.
		open, err := mcp.Config{p.name: p.spec}.MapSecrets(s.cipher.Decrypt)
		if err != nil {
			return nil, invalid("server: a secret cannot be decrypted with this server's key", "body", "server")
		}
		p.spec = open.(mcp.Config)[p.name]
	}
	return p, nil
}

// probe connects to p's server, lists its tools, calls the requested tool
// and disconnects. oauth configures an oauth2 server (nil: its stored
// tokens only).
func (s *Server) probeMCP(ctx context.Context, p *mcpProbe, oauth *mcp.OAuthOptions, connectTimeout time.Duration) mcpTestResponse {
	set, err := mcp.Connect(ctx, mcp.Config{p.name: p.spec}, &mcp.Options{
		Logger:         s.log,
		ConnectTimeout: connectTimeout,
		CallTimeout:    p.timeout,
		OAuth:          oauth,
	})
	// The Set is never nil, and holds what connected even on an error.
	defer func() { set.Close() }()
	if err != nil {
		kind := "connection"
		if errors.Is(err, context.DeadlineExceeded) {
			kind = "timeout"
		}
		msg := err.Error()
		var se *mcp.ServerError
		if errors.As(err, &se) {
			msg = se.Err.Error()
		}
		return mcpTestResponse{Error: msg, ErrorKind: kind}
	}
	resp := mcpTestResponse{OK: true, Tools: []string{}}
	for _, t := range set.Tools() {
		resp.Tools = append(resp.Tools, t.Name())
	}
	if tc := p.toolCall; tc != nil {
		resp.ToolResult = &mcpToolResult{}
		if !slices.Contains(resp.Tools, tc.Name) {
			resp.ToolResult.IsError = true
			resp.ToolResult.Text = fmt.Sprintf("Tool %q not advertised by server (available: %s)", tc.Name, strings.Join(resp.Tools, ", "))
		} else {
			resp.ToolResult.IsError, resp.ToolResult.Text = callProbeTool(ctx, set, p)
		}
	}
	if st := set.OAuthState(p.name); !st.IsZero() {
		resp.OAuthState = s.encodeOAuthState(st)
	}
	return resp
}

// callProbeTool calls p's tool_call; a failure is the result's text.
func callProbeTool(ctx context.Context, set *mcp.Set, p *mcpProbe) (isError bool, text string) {
	tc := p.toolCall
	text, isError, err := set.Call(ctx, p.name, tc.Name, tc.Arguments)
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return true, fmt.Sprintf("Tool %q call timed out after %v seconds", tc.Name, p.timeout.Seconds())
	case err != nil:
		return true, err.Error()
	}
	return isError, text
}

// encodeOAuthState writes st for a response: its secrets as Fernet tokens
// of the server's key when it has one (as the settings hold them), else in
// clear (the caller saves them).
func (s *Server) encodeOAuthState(st *mcp.OAuthState) json.RawMessage {
	f := func(v secret.String) (secret.String, error) { return v.Expose(), nil }
	if s.cipher != nil {
		f = s.cipher.Encrypt
	}
	srv := mcp.Server{URL: "http://x", Auth: &mcp.Auth{Strategy: mcp.AuthOAuth2, State: st}}
	m, err := mcp.Config{"x": srv}.MapSecrets(f)
	if err != nil {
		s.log.Error("mcp: encrypting the OAuth state failed", "err", err)
		return nil
	}
	data, err := json.Marshal(m.(mcp.Config)["x"].Auth.State)
	if err != nil {
		return nil
	}
	return data
}

func (s *Server) handleMCPTest(w http.ResponseWriter, r *http.Request) {
	p, err := s.readMCPProbe(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), p.timeout+p.timeout+5*time.Second)
	defer cancel()
	writeJSON(w, http.StatusOK, s.probeMCP(ctx, p, nil, p.timeout))
}

// mcpOAuthJob is one authorization in progress: a probe whose OAuth flow
// waits for the user's consent, delivered by the browser's redirect to
// the job's loopback callback listener (or handed over by the callback
// route when the browser cannot reach it).
type mcpOAuthJob struct {
	id       string
	created  time.Time
	callback string // the redirect URL: http://localhost:PORT/callback
	cancel   context.CancelFunc

	ready    chan struct{} // closed when the URL is known or the job ended
	readyOne sync.Once
	code     chan url.Values // the callback's query, once
	done     chan struct{}

	mu        sync.Mutex
	status    string
	authURL   string
	gotCall   bool
	result    *mcpTestResponse
	listening bool
}

type mcpOAuthJobs struct {
	mu   sync.Mutex
	jobs map[string]*mcpOAuthJob
}

func (j *mcpOAuthJob) statusResponse() mcpOAuthStatus {
	j.mu.Lock()
	defer j.mu.Unlock()
	st := mcpOAuthStatus{OK: true, Status: j.status, JobID: j.id, AuthorizationURL: j.authURL, CallbackReady: j.listening}
	if r := j.result; r != nil {
		st.OK = r.OK
		st.Tools, st.ToolResult, st.OAuthState = r.Tools, r.ToolResult, r.OAuthState
		st.Error, st.ErrorKind = r.Error, r.ErrorKind
	}
	return st
}

func (s *Server) mcpJob(id string) *mcpOAuthJob {
	s.mcpJobs.mu.Lock()
	defer s.mcpJobs.mu.Unlock()
	s.sweepMCPJobsLocked()
	return s.mcpJobs.jobs[id]
}

func (s *Server) sweepMCPJobsLocked() {
	for id, j := range s.mcpJobs.jobs {
		if time.Since(j.created) > mcpOAuthJobTTL {
			j.cancel()
			delete(s.mcpJobs.jobs, id)
		}
	}
}

func (s *Server) handleMCPOAuthStart(w http.ResponseWriter, r *http.Request) {
	p, err := s.readMCPProbe(w, r)
	if err != nil {
		writeErr(w, err)
		return
	}
	if p.spec.Auth == nil || p.spec.Auth.Strategy != mcp.AuthOAuth2 {
		writeDetail(w, http.StatusBadRequest, "MCP OAuth start requires auth.strategy='oauth2'")
		return
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		writeErr(w, fmt.Errorf("listening for the OAuth callback: %w", err))
		return
	}
	var idb [16]byte
	rand.Read(idb[:])
	ctx, cancel := context.WithTimeout(context.Background(), mcpOAuthJobTTL)
	go func() {
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	job := &mcpOAuthJob{
		id:        hex.EncodeToString(idb[:]),
		created:   time.Now(),
		callback:  fmt.Sprintf("http://localhost:%d/callback", ln.Addr().(*net.TCPAddr).Port),
		cancel:    cancel,
		ready:     make(chan struct{}),
		code:      make(chan url.Values, 1),
		done:      make(chan struct{}),
		status:    "pending",
		listening: true,
	}
	cb := &http.Server{Handler: http.HandlerFunc(job.serveCallback), ReadHeaderTimeout: 10 * time.Second}
	go cb.Serve(ln)
	s.mcpJobs.mu.Lock()
	if s.mcpJobs.jobs == nil {
		s.mcpJobs.jobs = map[string]*mcpOAuthJob{}
	}
	s.sweepMCPJobsLocked()
	s.mcpJobs.jobs[job.id] = job
	s.mcpJobs.mu.Unlock()

	oauth := &mcp.OAuthOptions{RedirectURL: job.callback, Authorize: job.authorize}
	go func() {
		defer cancel()
		res := s.probeMCP(ctx, p, oauth, mcpOAuthConsentWait)
		// Gracefully: the callback that delivered the code may not have
		// written its answer yet, and a closed connection would read as
		// a failed callback instead of the exchange's own error.
		sctx, scancel := context.WithTimeout(context.Background(), 5*time.Second)
		if cb.Shutdown(sctx) != nil {
			cb.Close()
		}
		scancel()
		job.mu.Lock()
		job.result, job.listening = &res, false
		job.status = "failed"
		if res.OK {
			job.status = "succeeded"
		}
		job.mu.Unlock()
		job.readyOne.Do(func() { close(job.ready) })
		close(job.done)
	}()

	wait := min(max(p.timeout, time.Second), 30*time.Second)
	select {
	case <-job.ready:
	case <-time.After(wait):
	case <-r.Context().Done():
	}
	st := job.statusResponse()
	switch {
	case st.AuthorizationURL != "":
		writeJSON(w, http.StatusOK, mcpOAuthStart{OK: true, JobID: job.id, AuthorizationURL: st.AuthorizationURL})
	case st.Status == "succeeded":
		// No consent needed: the stored tokens were valid or refreshed.
		writeJSON(w, http.StatusOK, mcpOAuthStart{OK: true, JobID: job.id})
	case st.Status == "failed":
		writeJSON(w, http.StatusOK, mcpOAuthStart{JobID: job.id, Error: st.Error, ErrorKind: st.ErrorKind})
	default:
		writeJSON(w, http.StatusOK, mcpOAuthStart{JobID: job.id, Error: "Timed out waiting for OAuth authorization URL", ErrorKind: "timeout"})
	}
}

// authorize is the job's mcp.OAuthOptions.Authorize: it checks that the
// authorization server accepts the request, publishes the URL and waits
// for the callback.
func (j *mcpOAuthJob) authorize(ctx context.Context, authURL string) (url.Values, error) {
	if err := preflightAuthorization(ctx, authURL); err != nil {
		return nil, err
	}
	j.mu.Lock()
	j.authURL, j.status = authURL, "authorizing"
	j.mu.Unlock()
	j.readyOne.Do(func() { close(j.ready) })
	wait := time.NewTimer(mcpOAuthConsentWait)
	defer wait.Stop()
	select {
	case q := <-j.code:
		return q, nil
	case <-wait.C:
		return nil, errors.New("timed out waiting for the OAuth callback")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// preflightAuthorization opens the authorization URL without following
// its redirect: an authorization server that refuses the request (an
// unknown client, a bad redirect URI) says so now rather than to the
// user's browser.
func preflightAuthorization(ctx context.Context, authURL string) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, authURL, nil)
	if err != nil {
		return err
	}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("opening the authorization URL: %w", err)
	}
	resp.Body.Close()
	switch resp.StatusCode {
	case 200, 302, 303, 307, 308:
		return nil
	case 400:
		return errors.New("the authorization server does not know this OAuth client (400 at its authorization endpoint)")
	}
	return fmt.Errorf("unexpected authorization response: %d", resp.StatusCode)
}

// serveCallback is the loopback redirect target.
func (j *mcpOAuthJob) serveCallback(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/callback" {
		http.NotFound(w, r)
		return
	}
	q := r.URL.Query()
	j.mu.Lock()
	first := !j.gotCall
	j.gotCall = true
	j.mu.Unlock()
	if !first {
		http.Error(w, "this authorization already got its callback", http.StatusConflict)
		return
	}
	j.code <- q
	w.Header().Set("Content-Type", "text/plain; charset=utf-8")
	if q.Get("error") != "" {
		w.WriteHeader(http.StatusBadRequest)
		fmt.Fprintf(w, "Authorization failed: %s\n", q.Get("error"))
		return
	}
	fmt.Fprintln(w, "Authorization complete. You can close this window.")
}

func (s *Server) handleMCPOAuthStatus(w http.ResponseWriter, r *http.Request) {
	job := s.mcpJob(r.PathValue("job_id"))
	if job == nil {
		writeDetail(w, http.StatusNotFound, "MCP OAuth job not found")
		return
	}
	writeJSON(w, http.StatusOK, job.statusResponse())
}

func (s *Server) handleMCPOAuthCallback(w http.ResponseWriter, r *http.Request) {
	var req mcpOAuthCallback
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	if req.CallbackURL == "" {
		writeErr(w, &invalidError{loc: []any{"body", "callback_url"}, typ: "missing", msg: "Field required"})
		return
	}
	job := s.mcpJob(r.PathValue("job_id"))
	if job == nil {
		writeDetail(w, http.StatusNotFound, "MCP OAuth job not found")
		return
	}
	u, err := url.Parse(req.CallbackURL)
	if err != nil || u.Scheme != "http" || (u.Hostname() != "localhost" && u.Hostname() != "127.0.0.1" && u.Hostname() != "::1") {
		writeDetail(w, http.StatusBadRequest, "Invalid OAuth callback URL")
		return
	}
	job.mu.Lock()
	listening := job.listening
	job.mu.Unlock()
	if !listening {
		writeDetail(w, http.StatusConflict, "OAuth callback is not ready")
		return
	}
	want, _ := url.Parse(job.callback)
	if u.Port() != want.Port() || u.Path != want.Path {
		writeDetail(w, http.StatusBadRequest, "Unexpected OAuth callback URL")
		return
	}
	// The listener is on 127.0.0.1 whatever loopback name the URL uses.
	u.Host = net.JoinHostPort("127.0.0.1", want.Port())
	ctx, cancel := context.WithTimeout(r.Context(), 10*time.Second)
	defer cancel()
	creq, _ := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	resp, err := http.DefaultClient.Do(creq)
	if err != nil {
		st := job.statusResponse()
		st.OK, st.Status, st.Error, st.ErrorKind = false, "failed", "OAuth callback failed: "+err.Error(), "connection"
		writeJSON(w, http.StatusOK, st)
		return
	}
	resp.Body.Close()
	if resp.StatusCode >= 400 {
		st := job.statusResponse()
		st.OK, st.Status, st.Error, st.ErrorKind = false, "failed", fmt.Sprintf("OAuth callback returned HTTP %d", resp.StatusCode), "connection"
		writeJSON(w, http.StatusOK, st)
		return
	}
	select {
	case <-job.done:
	case <-time.After(5 * time.Second):
	case <-r.Context().Done():
	}
	writeJSON(w, http.StatusOK, job.statusResponse())
}
