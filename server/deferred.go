package server

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
)

// Deferred init (the reference's deferred_init): a server of a warm pool
// starts dormant, before it knows its user, and POST /api/init later
// brings the user's configuration (session keys, secret key, directories,
// webhooks, CORS origins, environment); only then does the real server
// start. While dormant, /alive and /health answer, GET /api/init tells the
// state, and every other route answers 503. POST /api/init needs
// X-Init-API-Key equal to the dormant server's secret key (when it has
// one). A server started normally answers /api/init with the reference's
// 404.
//
// Of the reference's InitRequest, web_url and telemetry are accepted and
// have no effect here.

// Deferred is a dormant server, waiting for POST /api/init.
type Deferred struct {
	base Options

	mu    sync.Mutex
	state string // dormant, initializing, ready
	err   *string
	srv   *Server
}

// NewDeferred returns a dormant server whose configuration POST /api/init
// completes over base.
func NewDeferred(base *Options) *Deferred {
	d := &Deferred{state: "dormant"}
	if base != nil {
		d.base = *base
	}
	return d
}

// initStatus is GET /api/init's answer.
type initStatus struct {
	State string  `json:"state" enum:"dormant,initializing,ready"`
	Error *string `json:"error"`
}

// initRequest is the configuration POST /api/init delivers; keys absent
// keep the dormant server's.
type initRequest struct {
	SessionAPIKeys           []string          `json:"session_api_keys"`
	SecretKey                *string           `json:"secret_key"`
	PreviousSecretKeys       []string          `json:"previous_secret_keys"`
	ConversationsPath        *string           `json:"conversations_path"`
	BashEventsDir            *string           `json:"bash_events_dir"`
	ConversationWorktreeRoot *string           `json:"conversation_worktree_root"`
	Webhooks                 []WebhookSpec     `json:"webhooks"`
	WebURL                   *string           `json:"web_url"`
	AllowCORSOrigins         []string          `json:"allow_cors_origins"`
	MaxConcurrentRuns        *int              `json:"max_concurrent_runs"`
	Env                      map[string]string `json:"env"`
	Telemetry                json.RawMessage   `json:"telemetry"`
}

const notDeferred = "server is not running with deferred_init=True; the /api/init endpoint is not available"

// handleInitNotDeferred answers /api/init on a server started normally.
func (s *Server) handleInitNotDeferred(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && malformedJSON(w, r) {
		return
	}
	if r.Method == http.MethodPost && !initKeyOK(s.opts.SecretKey, r) {
		writeDetail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	writeDetail(w, http.StatusNotFound, notDeferred)
}

// initKeyOK checks X-Init-API-Key against the secret key, if any.
func initKeyOK(secretKey string, r *http.Request) bool {
	if secretKey == "" {
		return true
	}
	return subtle.ConstantTimeCompare([]byte(r.Header.Get("X-Init-API-Key")), []byte(secretKey)) == 1
}

// ServeHTTP implements http.Handler.
func (d *Deferred) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	d.mu.Lock()
	srv, state := d.srv, d.state
	d.mu.Unlock()
	if r.URL.Path == "/api/init" {
		switch r.Method {
		case http.MethodGet:
			d.mu.Lock()
			st := initStatus{State: d.state, Error: d.err}
			d.mu.Unlock()
			writeJSON(w, http.StatusOK, st)
		case http.MethodPost:
			d.initialize(w, r)
		default:
			w.Header().Set("Allow", "GET, POST")
			writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		}
		return
	}
	if srv != nil {
		srv.ServeHTTP(w, r)
		return
	}
	switch r.URL.Path {
	case "/alive", "/health":
		writeJSON(w, http.StatusOK, statusResponse{Status: "ok"})
		return
	}
	writeDetail(w, http.StatusServiceUnavailable, fmt.Sprintf("server is in deferred-init state '%s'; call POST /api/init first", state))
}

// malformedJSON answers 422 to a body that is not JSON and reports
// whether it did; the reference parses the body of POST /api/init before
// it checks the init key. The body stays readable.
func malformedJSON(w http.ResponseWriter, r *http.Request) bool {
	body, err := readAllLimited(w, r, DefaultMaxRequestBytes)
	if err != nil {
		writeErr(w, jsonInvalid(err))
		return true
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	if len(bytes.TrimSpace(body)) > 0 && !json.Valid(body) {
		writeErr(w, jsonInvalid(json.Unmarshal(body, new(any))))
		return true
	}
	return false
}

func (d *Deferred) initialize(w http.ResponseWriter, r *http.Request) {
	if malformedJSON(w, r) {
		return
	}
	if !initKeyOK(d.base.SecretKey, r) {
		writeDetail(w, http.StatusUnauthorized, "Unauthorized")
		return
	}
	// Without an init key, a web page must not configure the server (see
	// sameOrigin): only a same-origin or non-browser caller may.
	if o := r.Header.Get("Origin"); d.base.SecretKey == "" && (o != "" && !sameOriginAs(o, r) || r.Header.Get("Sec-Fetch-Site") == "cross-site" || r.Header.Get("Sec-Fetch-Site") == "same-site") {
		writeDetail(w, http.StatusForbidden, "cross-origin request refused: without an init key only same-origin callers may initialize the server")
		return
	}
	var req initRequest
	body, err := readAllLimited(w, r, DefaultMaxRequestBytes)
	if err == nil {
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		err = dec.Decode(&req)
	}
	if err != nil {
		writeErr(w, jsonInvalid(err))
		return
	}
	d.mu.Lock()
	if d.state != "dormant" {
		st := d.state
		d.mu.Unlock()
		writeDetail(w, http.StatusBadRequest, "server already in state: "+st)
		return
	}
	if slices.Contains(req.SessionAPIKeys, "") {
		d.mu.Unlock()
		writeDetail(w, http.StatusUnprocessableEntity, "session_api_keys cannot contain empty keys")
		return
	}
	if req.MaxConcurrentRuns != nil && *req.MaxConcurrentRuns < 1 {
		d.mu.Unlock()
		writeInvalid(w, "greater_than_equal", "Input should be greater than or equal to 1", "body", "max_concurrent_runs")
		return
	}
	d.state, d.err = "initializing", nil
	d.mu.Unlock()

	o := d.base
	if req.SessionAPIKeys != nil {
		o.SessionAPIKeys = req.SessionAPIKeys
	}
	switch {
	case req.SecretKey != nil && strings.TrimSpace(*req.SecretKey) != "":
		o.SecretKey = *req.SecretKey
	case len(req.SessionAPIKeys) > 0 && d.base.SecretKey == "":
		o.SecretKey = "" // the first session key, as withDefaults makes it
	}
	if req.PreviousSecretKeys != nil {
		o.PreviousSecretKeys = req.PreviousSecretKeys
	}
	if req.ConversationsPath != nil {
		o.ConversationsPath = *req.ConversationsPath
		if d.base.PersistenceDir == "" {
			o.PersistenceDir = ""
		}
	}
	if req.BashEventsDir != nil {
		o.BashEventsDir = *req.BashEventsDir
	}
	if req.ConversationWorktreeRoot != nil {
		o.ConversationWorktreeRoot = *req.ConversationWorktreeRoot
	}
	if req.Webhooks != nil {
		o.Webhooks = req.Webhooks
	}
	o.AllowCORSOrigins = append(append([]string(nil), o.AllowCORSOrigins...), req.AllowCORSOrigins...)
	if req.MaxConcurrentRuns != nil {
		o.MaxConcurrentRuns = *req.MaxConcurrentRuns
	}
	for k, v := range req.Env {
		os.Setenv(k, v)
	}
	srv, err := New(&o)
	d.mu.Lock()
	defer d.mu.Unlock()
	if err != nil {
		msg := err.Error()
		d.state, d.err = "dormant", &msg
		writeDetail(w, http.StatusInternalServerError, msg)
		return
	}
	d.srv, d.state = srv, "ready"
	srv.log.Info("deferred init: the server is ready")
	writeJSON(w, http.StatusOK, initStatus{State: "ready"})
}

// Drain makes the initialized server refuse new work (see Server.Drain).
func (d *Deferred) Drain() {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.srv != nil {
		d.srv.Drain()
	}
}

// Close closes the server /api/init started, if any.
func (d *Deferred) Close(ctx context.Context) error {
	d.mu.Lock()
	srv := d.srv
	d.mu.Unlock()
	if srv == nil {
		return nil
	}
	return srv.Close(ctx)
}

func readAllLimited(w http.ResponseWriter, r *http.Request, n int64) ([]byte, error) {
	var buf bytes.Buffer
	_, err := buf.ReadFrom(http.MaxBytesReader(w, r.Body, n))
	return buf.Bytes(), err
}
