// Package sandbox is the agent server of `gohands serve --runtime docker`:
// each conversation runs in its own container (package workspace/docker),
// and this server routes the conversation's REST calls and sockets there.
// Users of one server cannot see each other's files or processes.
//
// A conversation's files live on this machine under Options.Dir/<id>
// (workspace/ mounted at /workspace, state/ at /var/lib/gohands), so a
// container stopped when idle is replaced by a new one on the next request
// and the conversation carries on. A container that ends unexpectedly fails
// its conversation: every later call gets 502 with the reason, the others
// are untouched. Close stops every container; so does this process's
// death (see workspace/docker).
//
// The server answers /health, /alive, /ready and /server_info itself,
// creates conversations (POST /api/conversations), and lists them (search,
// count, batch get) from the containers and the last state seen of stopped
// ones. The workspace routes (/api/bash, /api/file, /api/git) have no
// conversation to go to and answer 400.
package sandbox

import (
	"bytes"
	"context"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/workspace/docker"
)

// DefaultIdleStop is how long a conversation's container may stay unused
// before it is stopped.
const DefaultIdleStop = 10 * time.Minute

// Options configure a Server. Dir is required.
type Options struct {
	// Dir holds each conversation's workspace and state, in Dir/<id>.
	Dir string
	// Container is the template of every conversation's container:
	// image, limits, network, environment, labels. Volumes are added to
	// the conversation's own. Nil means the defaults of workspace/docker.
	Container *docker.Options
	// SessionAPIKeys are the keys clients must send (X-Session-API-Key,
	// or session_api_key on sockets); none means no authentication.
	SessionAPIKeys []string
	// IdleStop stops a container unused for this long whose conversation
	// is not running (zero: DefaultIdleStop; negative: never).
	IdleStop time.Duration
	// Logger gets the containers' life cycle; nil discards.
	Logger *slog.Logger
}

// Server routes each conversation to its own container.
type Server struct {
	opts    Options
	log     *slog.Logger
	mux     *http.ServeMux
	started time.Time

	mu      sync.Mutex
	boxes   map[string]*box
	closing bool

	stopJanitor chan struct{}
	janitorDone chan struct{}
}

// box is one conversation and its container.
type box struct {
	id  string
	dir string

	mu       sync.Mutex // held while starting or stopping the container
	c        *docker.Container
	failed   error     // the container ended unexpectedly
	info     []byte    // the conversation's info when last seen
	active   int       // requests and sockets in flight
	lastUsed time.Time // when the last one ended
}

// New returns a Server, recognising the conversations already in opts.Dir.
func New(opts *Options) (*Server, error) {
	if opts == nil || opts.Dir == "" {
		return nil, errors.New("sandbox: Options.Dir is required")
	}
	s := &Server{opts: *opts, log: opts.Logger, boxes: map[string]*box{}, started: time.Now(),
		stopJanitor: make(chan struct{}), janitorDone: make(chan struct{})}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.opts.IdleStop == 0 {
		s.opts.IdleStop = DefaultIdleStop
	}
	if err := os.MkdirAll(opts.Dir, 0o700); err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	ents, err := os.ReadDir(opts.Dir)
	if err != nil {
		return nil, fmt.Errorf("sandbox: %w", err)
	}
	for _, e := range ents {
		if u, err := uuid.Parse(e.Name()); err == nil && e.IsDir() && u.String() == e.Name() {
			b := &box{id: e.Name(), dir: filepath.Join(opts.Dir, e.Name()), lastUsed: time.Now()}
			b.info, _ = os.ReadFile(filepath.Join(b.dir, "info.json"))
			s.boxes[b.id] = b
		}
	}
	s.mux = http.NewServeMux()
	ok := func(status string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			writeJSON(w, http.StatusOK, map[string]string{"status": status})
		}
	}
	s.mux.HandleFunc("GET /alive", ok("ok"))
	s.mux.HandleFunc("GET /health", ok("ok"))
	s.mux.HandleFunc("GET /ready", ok("ready"))
	s.mux.HandleFunc("GET /server_info", s.handleInfo)
	s.mux.HandleFunc("GET /{$}", s.handleInfo)
	s.mux.Handle("POST /api/conversations", s.auth(http.HandlerFunc(s.handleCreate)))
	s.mux.Handle("GET /api/conversations", s.auth(http.HandlerFunc(s.handleBatch)))
	s.mux.Handle("GET /api/conversations/search", s.auth(http.HandlerFunc(s.handleSearch)))
	s.mux.Handle("GET /api/conversations/count", s.auth(http.HandlerFunc(s.handleCount)))
	s.mux.Handle("DELETE /api/conversations/{id}", s.auth(http.HandlerFunc(s.handleDelete)))
	s.mux.Handle("/api/conversations/{id}/", s.auth(http.HandlerFunc(s.handleProxy)))
	s.mux.Handle("/api/conversations/{id}", s.auth(http.HandlerFunc(s.handleProxy)))
	// Sockets authenticate in the conversation's server, which accepts
	// the same keys (the query parameter, the header or a first frame).
	s.mux.HandleFunc("GET /sockets/events/{id}", s.handleProxy)
	noWorkspace := func(w http.ResponseWriter, r *http.Request) {
		writeDetail(w, http.StatusBadRequest, "this server runs each conversation in its own container: use the conversation's tools, there is no shared workspace")
	}
	for _, p := range []string{"/api/bash/", "/api/file/", "/api/git/", "/sockets/bash-events"} {
		s.mux.Handle(p, s.auth(http.HandlerFunc(noWorkspace)))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { writeDetail(w, http.StatusNotFound, "Not Found") })
	go s.janitor()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func (s *Server) authorized(key string) bool {
	if len(s.opts.SessionAPIKeys) == 0 {
		return true
	}
	for _, k := range s.opts.SessionAPIKeys {
		if subtle.ConstantTimeCompare([]byte(k), []byte(key)) == 1 {
			return true
		}
	}
	return false
}

func (s *Server) auth(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r.Header.Get("X-Session-API-Key")) {
			writeDetail(w, http.StatusUnauthorized, "Unauthorized")
			return
		}
		h.ServeHTTP(w, r)
	})
}

func (s *Server) handleInfo(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{
		"uptime": time.Since(s.started).Seconds(), "idle_time": 0.0,
		"title": "gohands agent server (a container per conversation)", "docs": "/docs", "redoc": "/redoc",
	})
}

// lookup returns the conversation id, or nil.
func (s *Server) lookup(id string) *box {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.boxes[id]
}

// containerOptions is the template plus the conversation's mounts and
// the server's keys.
func (s *Server) containerOptions(b *box) *docker.Options {
	var o docker.Options
	if s.opts.Container != nil {
		o = *s.opts.Container
	}
	o.Volumes = append(slices.Clip(o.Volumes), filepath.Join(b.dir, "workspace")+":/workspace", filepath.Join(b.dir, "state")+":/var/lib/gohands")
	o.Env = maps.Clone(o.Env)
	if o.Env == nil {
		o.Env = map[string]string{}
	}
	for i, k := range s.opts.SessionAPIKeys {
		o.Env["OH_SESSION_API_KEYS_"+strconv.Itoa(i+1)] = k
	}
	o.Labels = maps.Clone(o.Labels)
	if o.Labels == nil {
		o.Labels = map[string]string{}
	}
	o.Labels["org.gohands.conversation"] = b.id
	return &o
}

// acquire returns the conversation's running container, starting one when
// it is stopped, and counts a use until release.
func (s *Server) acquire(ctx context.Context, b *box) (*docker.Container, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.failed != nil {
		return nil, b.failed
	}
	if b.c == nil {
		s.mu.Lock()
		closing := s.closing
		s.mu.Unlock()
		if closing {
			return nil, errors.New("the server is shutting down")
		}
		for _, d := range []string{"workspace", "state"} {
			if err := os.MkdirAll(filepath.Join(b.dir, d), 0o755); err != nil {
				return nil, err
			}
		}
		c, err := docker.Start(ctx, s.containerOptions(b))
		if err != nil {
			return nil, err
		}
		s.log.Info("sandbox: container started", "conversation", b.id, "container", c.Name())
		b.c = c
		go s.watch(b, c)
	}
	b.active++
	return b.c, nil
}

func (s *Server) release(b *box) {
	b.mu.Lock()
	b.active--
	b.lastUsed = time.Now()
	b.mu.Unlock()
}

// watch fails the conversation when its container ends while in use.
func (s *Server) watch(b *box, c *docker.Container) {
	<-c.Done()
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.c != c {
		return // stopped on purpose
	}
	b.c = nil
	b.failed = fmt.Errorf("conversation %s failed: its container %s ended unexpectedly; its last output:\n%s", b.id, c.Name(), lastLines(c.Output(), 20))
	s.log.Warn("sandbox: container ended unexpectedly", "conversation", b.id, "container", c.Name())
	go c.Close()
}

// stop stops the conversation's container, keeping its info for listings.
// The caller holds b.mu.
func (s *Server) stop(b *box) {
	c := b.c
	if c == nil {
		return
	}
	if info, err := fetch(context.Background(), c, "/api/conversations/"+b.id); err == nil {
		b.info = info
		os.WriteFile(filepath.Join(b.dir, "info.json"), info, 0o600)
	}
	b.c = nil
	if err := c.Close(); err != nil {
		s.log.Warn("sandbox: stopping a container", "conversation", b.id, "err", err)
	}
	s.log.Info("sandbox: container stopped", "conversation", b.id, "container", c.Name())
}

// janitor stops idle containers.
func (s *Server) janitor() {
	defer close(s.janitorDone)
	if s.opts.IdleStop < 0 {
		<-s.stopJanitor
		return
	}
	tick := time.NewTicker(max(s.opts.IdleStop/4, 50*time.Millisecond))
	defer tick.Stop()
	for {
		select {
		case <-s.stopJanitor:
			return
		case <-tick.C:
		}
		s.mu.Lock()
		boxes := slices.Collect(maps.Values(s.boxes))
		s.mu.Unlock()
		for _, b := range boxes {
			b.mu.Lock()
			if b.c != nil && b.active == 0 && time.Since(b.lastUsed) > s.opts.IdleStop {
				if st := status(b, true); st != "running" {
					s.stop(b)
				} else {
					b.lastUsed = time.Now()
				}
			}
			b.mu.Unlock()
		}
	}
}

// status is the conversation's execution status: asked of its container
// when fresh and running, else from the last info seen. The caller holds b.mu.
func status(b *box, fresh bool) string {
	info := b.info
	if fresh && b.c != nil {
		if i, err := fetch(context.Background(), b.c, "/api/conversations/"+b.id); err == nil {
			b.info, info = i, i
		}
	}
	var v struct {
		Status string `json:"execution_status"`
	}
	json.Unmarshal(info, &v)
	return v.Status
}

// Close stops every container, letting each server pause and persist its
// conversation.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	boxes := slices.Collect(maps.Values(s.boxes))
	s.mu.Unlock()
	close(s.stopJanitor)
	<-s.janitorDone
	var wg sync.WaitGroup
	for _, b := range boxes {
		wg.Go(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			s.stop(b)
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (s *Server) handleCreate(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, 64<<20))
	if err != nil {
		writeDetail(w, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	var req map[string]json.RawMessage
	if err := json.Unmarshal(body, &req); err != nil {
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{{"type": "json_invalid", "loc": []any{"body"}, "msg": "JSON decode error: " + err.Error()}}})
		return
	}
	id := uuid.NewString()
	if raw, ok := req["conversation_id"]; ok && string(raw) != "null" {
		var sid string
		u, err := uuid.Parse(strings.Trim(string(raw), `"`))
		if json.Unmarshal(raw, &sid) != nil || err != nil {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{{"type": "uuid_parsing", "loc": []any{"body", "conversation_id"}, "msg": "Input should be a valid UUID"}}})
			return
		}
		id = u.String()
	}
	req["conversation_id"], _ = json.Marshal(id)
	body, _ = json.Marshal(req)

	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		writeDetail(w, http.StatusServiceUnavailable, "the server is shutting down")
		return
	}
	b, existed := s.boxes[id]
	if !existed {
		b = &box{id: id, dir: filepath.Join(s.opts.Dir, id), lastUsed: time.Now()}
		s.boxes[id] = b
	}
	s.mu.Unlock()
	c, err := s.acquire(r.Context(), b)
	if err != nil {
		if !existed {
			s.forget(b)
		}
		s.writeFailure(w, b, err)
		return
	}
	preq, _ := http.NewRequestWithContext(r.Context(), http.MethodPost, c.URL()+"/api/conversations?"+r.URL.RawQuery, bytes.NewReader(body))
	preq.Header.Set("Content-Type", "application/json")
	preq.Header.Set("X-Session-API-Key", c.SessionKey())
	resp, err := http.DefaultClient.Do(preq)
	s.release(b)
	if err != nil {
		if !existed {
			s.forget(b)
		}
		s.writeFailure(w, b, err)
		return
	}
	defer resp.Body.Close()
	out, _ := io.ReadAll(resp.Body)
	switch {
	case resp.StatusCode < 300:
		b.mu.Lock()
		b.info = out
		b.mu.Unlock()
	case !existed:
		s.forget(b)
	}
	w.Header().Set("Content-Type", resp.Header.Get("Content-Type"))
	w.WriteHeader(resp.StatusCode)
	w.Write(out)
}

// forget removes a conversation that was never created, with its container
// and directory.
func (s *Server) forget(b *box) {
	b.mu.Lock()
	s.stop(b)
	b.mu.Unlock()
	s.mu.Lock()
	delete(s.boxes, b.id)
	s.mu.Unlock()
	os.RemoveAll(b.dir)
}

func (s *Server) writeFailure(w http.ResponseWriter, b *box, err error) {
	s.log.Warn("sandbox: conversation unavailable", "conversation", b.id, "err", err)
	writeDetail(w, http.StatusBadGateway, err.Error())
}

func (s *Server) handleProxy(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		writeDetail(w, http.StatusNotFound, "Conversation not found: "+id)
		return
	}
	c, err := s.acquire(r.Context(), b)
	if err != nil {
		s.writeFailure(w, b, err)
		return
	}
	defer s.release(b)
	target, _ := url.Parse(c.URL())
	p := &httputil.ReverseProxy{
		Rewrite: func(pr *httputil.ProxyRequest) {
			pr.SetURL(target)
			pr.Out.Host = pr.In.Host // the server checks socket origins against it
			// A REST call was checked here; a socket carries its own key
			// unless this server needs none.
			if !strings.HasPrefix(pr.In.URL.Path, "/sockets/") || len(s.opts.SessionAPIKeys) == 0 {
				pr.Out.Header.Set("X-Session-API-Key", c.SessionKey())
			}
		},
		FlushInterval: -1,
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			select {
			case <-c.Done():
				// Wait for watch to record why.
				for range 50 {
					b.mu.Lock()
					f := b.failed
					b.mu.Unlock()
					if f != nil {
						s.writeFailure(w, b, f)
						return
					}
					time.Sleep(10 * time.Millisecond)
				}
			default:
			}
			s.writeFailure(w, b, fmt.Errorf("conversation %s: its container did not answer: %v", b.id, err))
		},
	}
	p.ServeHTTP(w, r)
}

func (s *Server) handleDelete(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("id")
	b := s.lookup(id)
	if b == nil {
		writeDetail(w, http.StatusBadRequest, "Conversation not found: "+id)
		return
	}
	b.mu.Lock()
	failed := b.failed
	b.mu.Unlock()
	if failed == nil {
		c, err := s.acquire(r.Context(), b)
		if err != nil {
			s.writeFailure(w, b, err)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), http.MethodDelete, c.URL()+"/api/conversations/"+id, nil)
		req.Header.Set("X-Session-API-Key", c.SessionKey())
		resp, err := http.DefaultClient.Do(req)
		s.release(b)
		if err != nil {
			s.writeFailure(w, b, err)
			return
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			writeDetail(w, resp.StatusCode, "the conversation's server refused to delete it")
			return
		}
	}
	s.forget(b)
	writeJSON(w, http.StatusOK, map[string]bool{"success": true})
}

// infos returns the info of every conversation (fresh from running
// containers), as raw JSON, skipping those never seen.
func (s *Server) infos() []json.RawMessage {
	s.mu.Lock()
	boxes := slices.Collect(maps.Values(s.boxes))
	s.mu.Unlock()
	out := make([]json.RawMessage, len(boxes))
	var wg sync.WaitGroup
	for i, b := range boxes {
		wg.Go(func() {
			b.mu.Lock()
			defer b.mu.Unlock()
			status(b, true)
			if len(b.info) > 0 {
				out[i] = withFailure(b.info, b.failed)
			}
		})
	}
	wg.Wait()
	return slices.DeleteFunc(out, func(m json.RawMessage) bool { return m == nil })
}

// withFailure marks a failed conversation's info with execution_status error.
func withFailure(info []byte, failed error) json.RawMessage {
	if failed == nil {
		return info
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(info, &m) != nil {
		return info
	}
	m["execution_status"] = json.RawMessage(`"error"`)
	b, _ := json.Marshal(m)
	return b
}

type summary struct {
	ID        string `json:"id"`
	Status    string `json:"execution_status"`
	CreatedAt string `json:"created_at"`
	UpdatedAt string `json:"updated_at"`
}

// matching returns the infos with the status (all when empty), sorted by order.
func (s *Server) matching(status, order string) ([]json.RawMessage, []summary) {
	all := s.infos()
	var infos []json.RawMessage
	var sums []summary
	for _, raw := range all {
		var sm summary
		json.Unmarshal(raw, &sm)
		if status == "" || sm.Status == status {
			infos = append(infos, raw)
			sums = append(sums, sm)
		}
	}
	idx := make([]int, len(infos))
	for i := range idx {
		idx[i] = i
	}
	key := func(i int) string {
		if strings.HasPrefix(order, "UPDATED_AT") {
			return sums[i].UpdatedAt
		}
		return sums[i].CreatedAt
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		c := strings.Compare(key(a), key(b))
		if order == "" || strings.HasSuffix(order, "_DESC") {
			c = -c
		}
		if c == 0 {
			c = strings.Compare(sums[a].ID, sums[b].ID)
		}
		return c
	})
	sortedInfos, sortedSums := make([]json.RawMessage, len(idx)), make([]summary, len(idx))
	for i, j := range idx {
		sortedInfos[i], sortedSums[i] = infos[j], sums[j]
	}
	return sortedInfos, sortedSums
}

func (s *Server) handleSearch(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 100
	if l := q.Get("limit"); l != "" {
		n, err := strconv.Atoi(l)
		if err != nil || n < 1 || n > 100 {
			writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": []map[string]any{{"type": "int_parsing", "loc": []any{"query", "limit"}, "msg": "limit must be an integer from 1 to 100"}}})
			return
		}
		limit = n
	}
	infos, sums := s.matching(q.Get("status"), q.Get("sort_order"))
	start := 0
	if p := q.Get("page_id"); p != "" {
		start = len(sums)
		for i, sm := range sums {
			if strings.ReplaceAll(sm.ID, "-", "") == strings.ReplaceAll(p, "-", "") {
				start = i
				break
			}
		}
	}
	end := min(start+limit, len(infos))
	page := struct {
		Items      []json.RawMessage `json:"items"`
		NextPageID *string           `json:"next_page_id"`
	}{Items: infos[start:end]}
	if page.Items == nil {
		page.Items = []json.RawMessage{}
	}
	if end < len(sums) {
		next := strings.ReplaceAll(sums[end].ID, "-", "")
		page.NextPageID = &next
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleCount(w http.ResponseWriter, r *http.Request) {
	infos, _ := s.matching(r.URL.Query().Get("status"), "")
	writeJSON(w, http.StatusOK, len(infos))
}

func (s *Server) handleBatch(w http.ResponseWriter, r *http.Request) {
	ids := r.URL.Query()["ids"]
	out := make([]json.RawMessage, len(ids))
	for i, id := range ids {
		out[i] = json.RawMessage("null")
		u, err := uuid.Parse(id)
		if err != nil {
			continue
		}
		if b := s.lookup(u.String()); b != nil {
			b.mu.Lock()
			status(b, true)
			if len(b.info) > 0 {
				out[i] = withFailure(b.info, b.failed)
			}
			b.mu.Unlock()
		}
	}
	writeJSON(w, http.StatusOK, out)
}

// fetch GETs path from the container's server.
func fetch(ctx context.Context, c *docker.Container, path string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.URL()+path, nil)
	req.Header.Set("X-Session-API-Key", c.SessionKey())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("GET %s: %s", path, resp.Status)
	}
	return b, err
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, map[string]string{"detail": detail})
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "  " + strings.Join(lines, "\n  ")
}
