package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"github.com/gohands/gohands/internal/procgroup"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"
	"github.com/google/uuid"
)

// maxBashChunk is the size at which command output is split into several
// BashOutput events, the reference's.
const maxBashChunk = 1 << 20

// maxBashEvents bounds the bash events kept; the oldest go first.
const maxBashEvents = 10000

// bashEvent is a BashCommand, BashOutput or BashError; one struct keeps
// the search simple. Members that are not of the event's kind are
// omitted when encoding.
type bashEvent struct {
	ID        string  `json:"id"`
	Timestamp string  `json:"timestamp"`
	Command   string  `json:"command,omitempty"`
	Cwd       *string `json:"cwd,omitempty"`
	Timeout   int     `json:"timeout,omitempty"`
	CommandID string  `json:"command_id,omitempty"`
	Order     int     `json:"order"`
	ExitCode  *int    `json:"exit_code"`
	Stdout    *string `json:"stdout"`
	Stderr    *string `json:"stderr"`
	Code      string  `json:"code,omitempty"`
	Detail    string  `json:"detail,omitempty"`
	Kind      string  `json:"kind"`
}

// MarshalJSON writes the members of the event's kind, nulls included, as
// the reference does.
func (e *bashEvent) MarshalJSON() ([]byte, error) {
	switch e.Kind {
	case "BashCommand":
		return json.Marshal(struct {
			ID        string  `json:"id"`
			Timestamp string  `json:"timestamp"`
			Command   string  `json:"command"`
			Cwd       *string `json:"cwd"`
			Timeout   int     `json:"timeout"`
			Kind      string  `json:"kind"`
		}{e.ID, e.Timestamp, e.Command, e.Cwd, e.Timeout, e.Kind})
	case "BashOutput":
		return json.Marshal(struct {
			ID        string  `json:"id"`
			Timestamp string  `json:"timestamp"`
			CommandID string  `json:"command_id"`
			Order     int     `json:"order"`
			ExitCode  *int    `json:"exit_code"`
			Stdout    *string `json:"stdout"`
			Stderr    *string `json:"stderr"`
			Kind      string  `json:"kind"`
		}{e.ID, e.Timestamp, e.CommandID, e.Order, e.ExitCode, e.Stdout, e.Stderr, e.Kind})
	default:
		return json.Marshal(struct {
			ID        string `json:"id"`
			Timestamp string `json:"timestamp"`
			Code      string `json:"code"`
			Detail    string `json:"detail"`
			Kind      string `json:"kind"`
		}{e.ID, e.Timestamp, e.Code, e.Detail, e.Kind})
	}
}

// bashService runs commands outside any conversation and keeps their
// events in memory.
type bashService struct {
	log *slog.Logger
	dir string

	mu      sync.Mutex
	events  []*bashEvent
	subs    []*subscriber
	running map[string]context.CancelCauseFunc // by command id, to stop one
	wg      sync.WaitGroup
	ctx     context.Context
	cancel  context.CancelFunc
}

func newBashService(dir string, log *slog.Logger) *bashService {
	ctx, cancel := context.WithCancel(context.Background())
	return &bashService{log: log, dir: dir, ctx: ctx, cancel: cancel}
}

func (b *bashService) close() {
	b.cancel()
	b.wg.Wait()
}

func (b *bashService) add(e *bashEvent) {
	data, _ := json.Marshal(e)
	b.mu.Lock()
	if len(b.events) >= maxBashEvents {
		b.events = slices.Delete(b.events, 0, len(b.events)-maxBashEvents+1)
	}
	b.events = append(b.events, e)
	subs := slices.Clone(b.subs)
	b.mu.Unlock()
	for _, s := range subs {
		s.send(data)
	}
}

func hexUUID() string { return strings.ReplaceAll(uuid.NewString(), "-", "") }

// start starts a command and returns its BashCommand.
func (b *bashService) start(req *bashRequest, defaultCwd string) (*bashEvent, <-chan struct{}) {
	timeout := 300
	if req.Timeout != nil {
		timeout = *req.Timeout
	}
	cmd := &bashEvent{ID: hexUUID(), Timestamp: utcNow(), Command: req.Command, Cwd: req.Cwd, Timeout: timeout, Kind: "BashCommand"}
	// Registered before the command is announced, so a stop that follows
	// the answer finds it.
	ctx, stop := context.WithCancelCause(b.ctx)
	b.mu.Lock()
	if b.running == nil {
		b.running = map[string]context.CancelCauseFunc{}
	}
	b.running[cmd.ID] = stop
	b.mu.Unlock()
	b.add(cmd)
	done := make(chan struct{})
	b.wg.Go(func() {
		defer close(done)
		defer func() {
			b.mu.Lock()
			delete(b.running, cmd.ID)
			b.mu.Unlock()
			stop(nil)
		}()
		b.execute(ctx, cmd, defaultCwd)
	})
	return cmd, done
}

// execute runs cmd with /bin/sh in its own process group, emitting
// BashOutput chunks and a last one with the exit code (-1 on timeout).
func (b *bashService) execute(ctx context.Context, cmd *bashEvent, defaultCwd string) {
	ctx, cancel := context.WithTimeout(ctx, time.Duration(max(cmd.Timeout, 1))*time.Second)
	defer cancel()
	c := exec.Command("/bin/sh", "-c", cmd.Command)
	c.Dir = defaultCwd
	if cmd.Cwd != nil && *cmd.Cwd != "" {
		c.Dir = *cmd.Cwd
	}
	procgroup.Own(c)
	c.Stdin = nil
	var mu sync.Mutex
	order := 0
	var out, errb bytes.Buffer
	emit := func(final bool, code *int) {
		// Called with mu held.
		for out.Len() > maxBashChunk || errb.Len() > maxBashChunk || final {
			ev := &bashEvent{ID: hexUUID(), Timestamp: utcNow(), CommandID: cmd.ID, Order: order, Kind: "BashOutput"}
			if n := min(out.Len(), maxBashChunk); n > 0 {
				s := string(out.Next(n))
				ev.Stdout = &s
			}
			if n := min(errb.Len(), maxBashChunk); n > 0 {
				s := string(errb.Next(n))
				ev.Stderr = &s
			}
			last := final && out.Len() == 0 && errb.Len() == 0
			if last {
				ev.ExitCode = code
			}
			order++
			b.add(ev)
			if last {
				return
			}
		}
	}
	pipe := func(dst *bytes.Buffer) io.Writer {
		return writerFunc(func(p []byte) (int, error) {
			mu.Lock()
			defer mu.Unlock()
			dst.Write(p)
			emit(false, nil)
			return len(p), nil
		})
	}
	c.Stdout, c.Stderr = pipe(&out), pipe(&errb)
	code := -1
	if err := c.Start(); err != nil {
		mu.Lock()
		errb.WriteString(err.Error())
		emit(true, &code)
		mu.Unlock()
		return
	}
	waitErr := make(chan error, 1)
	go func() { waitErr <- c.Wait() }()
	var err error
	select {
	case err = <-waitErr:
		if err == nil {
			code = 0
		} else if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
			code = ee.ExitCode()
		}
	case <-ctx.Done():
		procgroup.Terminate(c)
		select {
		case <-waitErr:
		case <-time.After(2 * time.Second):
			procgroup.Kill(c)
			<-waitErr
		}
		code = -1
	}
	mu.Lock()
	emit(true, &code)
	mu.Unlock()
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(p []byte) (int, error) { return f(p) }

func (s *Server) handleBashStart(w http.ResponseWriter, r *http.Request) {
	var req bashRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	cmd, _ := s.bash.start(&req, s.workingDir())
	writeJSON(w, http.StatusOK, cmd)
}

// workingDir is where bash commands without a cwd run: the server's
// workspace directory if it exists, else the current directory.
func (s *Server) workingDir() string {
	if fi, err := os.Stat(s.opts.WorkspacePath); err == nil && fi.IsDir() {
		return s.opts.WorkspacePath
	}
	return ""
}

func (s *Server) handleBashExecute(w http.ResponseWriter, r *http.Request) {
	var req bashRequest
	if err := s.readBody(w, r, &req, false); err != nil {
		writeErr(w, err)
		return
	}
	cmd, done := s.bash.start(&req, s.workingDir())
	select {
	case <-done:
	case <-r.Context().Done():
		return
	}
	s.bash.mu.Lock()
	var last *bashEvent
	for _, e := range s.bash.events {
		if e.Kind == "BashOutput" && e.CommandID == cmd.ID {
			last = e
		}
	}
	s.bash.mu.Unlock()
	writeJSON(w, http.StatusOK, last)
}

// bashSearchQuery are the filters of the bash event search.
type bashSearchQuery struct {
	KindEq       string  `query:"kind__eq" enum:"BashCommand,BashOutput"`
	CommandIDEq  string  `query:"command_id__eq"`
	TimestampGTE string  `query:"timestamp__gte" format:"date-time"`
	TimestampLT  string  `query:"timestamp__lt" format:"date-time"`
	OrderGT      *int    `query:"order__gt"`
	SortOrder    *string `query:"sort_order" enum:"TIMESTAMP,TIMESTAMP_DESC"`
	PageID       string  `query:"page_id"`
	Limit        *int    `query:"limit" minimum:"1" maximum:"100"`
}

// utcFilter normalises an ISO time to the bash events' format.
func utcFilter(v, name string) (string, error) {
	if v == "" {
		return "", nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
		if t, err := time.Parse(layout, v); err == nil {
			return t.UTC().Format("2006-01-02T15:04:05.000000Z"), nil
		}
	}
	return "", &invalidError{loc: []any{"query", name}, typ: "datetime_parsing", msg: "Input should be a valid datetime"}
}

func (s *Server) handleBashSearch(w http.ResponseWriter, r *http.Request) {
	var q bashSearchQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	limit, err := limitParam(q.Limit, 100)
	if err != nil {
		writeErr(w, err)
		return
	}
	gte, err := utcFilter(q.TimestampGTE, "timestamp__gte")
	if err != nil {
		writeErr(w, err)
		return
	}
	lt, err := utcFilter(q.TimestampLT, "timestamp__lt")
	if err != nil {
		writeErr(w, err)
		return
	}
	cmdID := ""
	if q.CommandIDEq != "" {
		u, err := uuid.Parse(q.CommandIDEq)
		if err != nil {
			writeErr(w, &invalidError{loc: []any{"query", "command_id__eq"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"})
			return
		}
		cmdID = strings.ReplaceAll(u.String(), "-", "")
	}
	s.bash.mu.Lock()
	var match []*bashEvent
	for _, e := range s.bash.events {
		switch {
		case q.KindEq != "" && e.Kind != q.KindEq,
			cmdID != "" && e.CommandID != cmdID,
			gte != "" && e.Timestamp < gte,
			lt != "" && e.Timestamp >= lt,
			q.OrderGT != nil && (e.Kind != "BashOutput" || e.Order <= *q.OrderGT):
			continue
		}
		match = append(match, e)
	}
	s.bash.mu.Unlock()
	if deref(q.SortOrder) == "TIMESTAMP_DESC" {
		slices.Reverse(match)
	}
	start := 0
	if q.PageID != "" {
		start = slices.IndexFunc(match, func(e *bashEvent) bool { return e.ID == q.PageID })
		if start < 0 {
			start = len(match)
		}
	}
	end := min(start+limit, len(match))
	page := struct {
		Items      []*bashEvent `json:"items"`
		NextPageID *string      `json:"next_page_id"`
	}{Items: match[start:end]}
	if page.Items == nil {
		page.Items = []*bashEvent{}
	}
	if end < len(match) {
		page.NextPageID = &match[end].ID
	}
	writeJSON(w, http.StatusOK, page)
}

func (s *Server) handleBashGet(w http.ResponseWriter, r *http.Request) {
	id := r.PathValue("event_id")
	s.bash.mu.Lock()
	i := slices.IndexFunc(s.bash.events, func(e *bashEvent) bool { return e.ID == id })
	var e *bashEvent
	if i >= 0 {
		e = s.bash.events[i]
	}
	s.bash.mu.Unlock()
	if e == nil {
		writeDetail(w, http.StatusNotFound, "Not Found")
		return
	}
	writeJSON(w, http.StatusOK, e)
}

func (s *Server) handleBashClear(w http.ResponseWriter, r *http.Request) {
	s.bash.mu.Lock()
	n := len(s.bash.events)
	s.bash.events = nil
	s.bash.mu.Unlock()
	writeJSON(w, http.StatusOK, clearedResponse{ClearedCount: n})
}

func (s *Server) handleBashSocket(w http.ResponseWriter, r *http.Request) {
	var q socketQuery
	if err := decodeQuery(r, &q); err != nil {
		writeErr(w, err)
		return
	}
	conn := s.acceptSocket(w, r, q.SessionAPIKey)
	if conn == nil {
		return
	}
	defer conn.CloseNow()
	b := s.bash
	sub := newSubscriber(s.opts.SubscriberBuffer)
	b.mu.Lock()
	var history []*bashEvent
	if q.ResendMode == "all" || q.ResendAll {
		history = slices.Clone(b.events)
	}
	b.subs = append(b.subs, sub)
	b.mu.Unlock()
	defer func() {
		b.mu.Lock()
		b.subs = slices.DeleteFunc(b.subs, func(x *subscriber) bool { return x == sub })
		b.mu.Unlock()
		sub.close()
	}()
	ctx, cancel := context.WithCancel(r.Context())
	defer cancel()
	go func() {
		defer cancel()
		for {
			typ, data, err := conn.Read(ctx)
			if err != nil {
				return
			}
			var req bashRequest
			if typ != websocket.MessageText || json.Unmarshal(data, &req) != nil || req.Command == "" {
				continue
			}
			b.start(&req, s.workingDir())
		}
	}()
	for _, e := range history {
		data, _ := json.Marshal(e)
		if conn.Write(ctx, websocket.MessageText, data) != nil {
			return
		}
	}
	for {
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusNormalClosure, "")
			return
		case <-sub.done:
			conn.Close(closeTryLater, "subscriber fell behind")
			return
		case data := <-sub.ch:
			if conn.Write(ctx, websocket.MessageText, data) != nil {
				return
			}
		}
	}
}
