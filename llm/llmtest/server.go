package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// Wire is one of the wire formats a Server speaks.
type Wire string

// The wire formats.
const (
	// WireChat is OpenAI Chat Completions: POST /v1/chat/completions or
	// /chat/completions.
	WireChat Wire = "chat"
	// WireResponses is the OpenAI Responses API: POST /v1/responses or
	// /responses.
	WireResponses Wire = "responses"
	// WireAnthropic is the Anthropic Messages API: POST /v1/messages.
	WireAnthropic Wire = "anthropic"
	// WireGemini is the Gemini API: POST
	// /v1beta/models/{model}:generateContent and
	// :streamGenerateContent?alt=sse.
	WireGemini Wire = "gemini"
	// WireBedrock is AWS Bedrock's Converse API: POST
	// /model/{modelId}/converse, and /converse-stream answered as an AWS
	// event stream.
	WireBedrock Wire = "bedrock"
	// WireVertexGemini is Gemini on Vertex AI: POST
	// /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent
	// and :streamGenerateContent?alt=sse.
	WireVertexGemini Wire = "vertex-gemini"
	// WireVertexAnthropic is Claude on Vertex AI: POST
	// /v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict
	// and :streamRawPredict, Anthropic Messages bodies with
	// anthropic_version instead of model.
	WireVertexAnthropic Wire = "vertex-anthropic"
)

// allWires are the formats of New and NewResponder.
var allWires = []Wire{WireChat, WireResponses, WireAnthropic, WireGemini, WireBedrock, WireVertexGemini, WireVertexAnthropic}

// Request is a request as a Server received it.
type Request struct {
	// Wire is the format the request was served in.
	Wire   Wire
	Method string
	Path   string
	// EscapedPath is the path as sent, percent-encoding kept (a Bedrock
	// model id's ":" is %3A).
	EscapedPath string
	Query       url.Values
	Header      http.Header
	// Body is the decoded JSON body (nil if it was not a JSON object).
	Body map[string]any
	// RawBody is the body as sent.
	RawBody []byte
	// Stream reports whether the client asked for a streamed reply.
	Stream bool
}

// Decode decodes the request body into v.
func (r Request) Decode(v any) error { return json.Unmarshal(r.RawBody, v) }

// Server is a scripted fake LLM server. It answers each request with the
// next Reply of its script, in the wire format of the endpoint called, and
// records every request. It is safe for concurrent use.
type Server struct {
	// URL is the server's base URL, without a trailing slash, e.g.
	// http://127.0.0.1:41234. Clients add their own path prefix (the
	// OpenAI SDK wants URL+"/v1"; Anthropic and Gemini SDKs take URL).
	URL string

	t     testing.TB
	wires []Wire
	srv   *httptest.Server

	respond  Responder // chooses replies instead of script when set
	noRecord bool

	mu       sync.Mutex
	script   []Reply
	next     int
	count    int // requests received
	requests []Request
}

// NewChat starts a server speaking OpenAI Chat Completions, answering from
// replies. It is closed when the test ends. Errors in the script or in a
// request fail t; t may be nil outside tests (in examples), in which case
// they are logged and the caller must Close the server.
func NewChat(t testing.TB, replies ...Reply) *Server {
	return start(t, []Wire{WireChat}, replies)
}

// NewResponses starts a server speaking the OpenAI Responses API.
func NewResponses(t testing.TB, replies ...Reply) *Server {
	return start(t, []Wire{WireResponses}, replies)
}

// NewAnthropic starts a server speaking the Anthropic Messages API.
func NewAnthropic(t testing.TB, replies ...Reply) *Server {
	return start(t, []Wire{WireAnthropic}, replies)
}

// NewGemini starts a server speaking the Gemini API.
func NewGemini(t testing.TB, replies ...Reply) *Server {
	return start(t, []Wire{WireGemini}, replies)
}

// NewBedrock starts a server speaking AWS Bedrock's Converse API.
func NewBedrock(t testing.TB, replies ...Reply) *Server {
	return start(t, []Wire{WireBedrock}, replies)
}

// NewVertex starts a server speaking Vertex AI's Gemini and Anthropic
// endpoints.
func NewVertex(t testing.TB, replies ...Reply) *Server {
	return start(t, []Wire{WireVertexGemini, WireVertexAnthropic}, replies)
}

// New starts a server speaking every wire format, each at its own paths,
// answering from one shared script. Use it when the provider under test
// is chosen at run time (a router, a fallback chain).
func New(t testing.TB, replies ...Reply) *Server {
	return start(t, allWires, replies)
}

func start(t testing.TB, wires []Wire, replies []Reply) *Server {
	s := &Server{t: t, wires: wires, script: append([]Reply(nil), replies...)}
	s.listen(nil)
	return s
}

func (s *Server) listen(l net.Listener) {
	s.srv = httptest.NewUnstartedServer(http.HandlerFunc(s.serve))
	if l != nil {
		s.srv.Listener.Close()
		s.srv.Listener = l
	}
	s.srv.Start()
	s.URL = s.srv.URL
	if s.t != nil {
		s.t.Cleanup(s.Close)
	}
}

// Responder chooses the reply to a request. An error answers the request
// with HTTP 400 in the provider's error format and fails the test.
type Responder func(Request) (Reply, error)

// ResponderOptions configures NewResponder. The zero value is ready to use.
type ResponderOptions struct {
	// Listener is where the server listens; a loopback port of the
	// system's choosing when nil.
	Listener net.Listener
	// NoRecord makes the server keep no requests (Requests returns none),
	// for long runs and benchmarks.
	NoRecord bool
}

// NewResponder starts a server speaking every wire format that answers
// each request with what respond returns, for replies that depend on the
// request rather than on arrival order: a Playbook's Respond, typically.
// opts may be nil.
func NewResponder(t testing.TB, respond Responder, opts *ResponderOptions) *Server {
	if opts == nil {
		opts = &ResponderOptions{}
	}
	s := &Server{t: t, wires: allWires, respond: respond, noRecord: opts.NoRecord}
	s.listen(opts.Listener)
	return s
}

// errorf fails the test, or without one, logs.
func (s *Server) errorf(format string, args ...any) {
	if s.t == nil {
		log.Printf(format, args...)
		return
	}
	s.t.Errorf(format, args...)
}

// Close shuts the server down. It is called when the test ends; calling
// it earlier is allowed.
func (s *Server) Close() {
	// Requests held by a Delay end when their client goes away; closing
	// client connections first lets Close return promptly.
	s.srv.CloseClientConnections()
	s.srv.Close()
}

// Client returns an HTTP client for the server, one that is closed with
// it.
func (s *Server) Client() *http.Client { return s.srv.Client() }

// Add appends replies to the script.
func (s *Server) Add(replies ...Reply) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.script = append(s.script, replies...)
}

// Remaining returns how many replies of the script have not been used.
func (s *Server) Remaining() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.script) - s.next
}

// Requests returns the requests received so far, in order. Requests that
// matched no endpoint are included.
func (s *Server) Requests() []Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Request(nil), s.requests...)
}

// LastRequest returns the latest request, or the zero Request if there
// was none.
func (s *Server) LastRequest() Request {
	reqs := s.Requests()
	if len(reqs) == 0 {
		return Request{}
	}
	return reqs[len(reqs)-1]
}

// route returns the wire format and the model named in the path (Gemini,
// Bedrock and Vertex) for a request path as sent (escaped), or "" if the
// server does not serve it.
func (s *Server) route(method, escaped string) (w Wire, model string, stream bool) {
	if method != http.MethodPost {
		return "", "", false
	}
	path, err := url.PathUnescape(escaped)
	if err != nil {
		return "", "", false
	}
	switch path {
	case "/v1/chat/completions", "/chat/completions":
		w = WireChat
	case "/v1/responses", "/responses":
		w = WireResponses
	case "/v1/messages":
		w = WireAnthropic
	default:
		if rest, ok := strings.CutPrefix(escaped, "/model/"); ok {
			// The model id is one segment, escaped: an ARN's "/" is %2F.
			label, verb, ok := strings.Cut(rest, "/")
			id, err := url.PathUnescape(label)
			if !ok || err != nil || (verb != "converse" && verb != "converse-stream") {
				return "", "", false
			}
			w, model, stream = WireBedrock, id, verb == "converse-stream"
			break
		}
		if rest, ok := strings.CutPrefix(path, "/v1/projects/"); ok {
			// {project}/locations/{location}/publishers/{publisher}/models/{model}:{verb}
			parts := strings.Split(rest, "/")
			if len(parts) != 7 || parts[1] != "locations" || parts[3] != "publishers" || parts[5] != "models" {
				return "", "", false
			}
			m, verb, _ := strings.Cut(parts[6], ":")
			switch {
			case parts[4] == "google" && (verb == "generateContent" || verb == "streamGenerateContent"):
				w, model, stream = WireVertexGemini, m, verb == "streamGenerateContent"
			case parts[4] == "anthropic" && (verb == "rawPredict" || verb == "streamRawPredict"):
				w, model, stream = WireVertexAnthropic, m, verb == "streamRawPredict"
			default:
				return "", "", false
			}
			break
		}
		rest, ok := strings.CutPrefix(path, "/v1beta/models/")
		if !ok {
			return "", "", false
		}
		m, verb, ok := strings.Cut(rest, ":")
		if !ok || (verb != "generateContent" && verb != "streamGenerateContent") {
			return "", "", false
		}
		w, model, stream = WireGemini, m, verb == "streamGenerateContent"
	}
	if slices.Contains(s.wires, w) {
		return w, model, stream
	}
	return "", "", false
}

func (s *Server) serve(rw http.ResponseWriter, r *http.Request) {
	raw, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(rw, "llmtest: reading body: "+err.Error(), http.StatusBadRequest)
		return
	}
	wire, model, stream := s.route(r.Method, r.URL.EscapedPath())
	rec := Request{
		Wire:        wire,
		Method:      r.Method,
		Path:        r.URL.Path,
		EscapedPath: r.URL.EscapedPath(),
		Query:       r.URL.Query(),
		Header:      r.Header.Clone(),
		RawBody:     raw,
	}
	if err := json.Unmarshal(raw, &rec.Body); err != nil {
		rec.Body = nil
	}
	switch wire {
	case WireGemini, WireVertexGemini, WireBedrock:
	case WireVertexAnthropic:
		// streamRawPredict takes "stream": true as well.
		body, _ := rec.Body["stream"].(bool)
		stream = stream && body
	default:
		stream, _ = rec.Body["stream"].(bool)
	}
	rec.Stream = stream

	s.mu.Lock()
	s.count++
	n := s.count
	if !s.noRecord {
		s.requests = append(s.requests, rec)
	}
	var reply Reply
	exhausted := s.respond == nil && s.next >= len(s.script)
	if wire != "" && !exhausted && s.respond == nil {
		reply = s.script[s.next]
		s.next++
	}
	s.mu.Unlock()

	if wire == "" {
		s.errorf("llmtest: request #%d %s %s: no such endpoint on this server (serves %v)", n, r.Method, r.URL.Path, s.wires)
		http.Error(rw, fmt.Sprintf("llmtest: no endpoint %s %s", r.Method, r.URL.Path), http.StatusNotFound)
		return
	}
	if exhausted {
		msg := fmt.Sprintf("llmtest: script exhausted: request #%d (%s %s) has no scripted reply", n, r.Method, r.URL.Path)
		s.errorf("%s", msg)
		// 400 is not retried by clients, so the test fails fast.
		writeFailure(rw, wire, &Failure{Status: http.StatusBadRequest, Message: msg})
		return
	}
	if rec.Body == nil {
		s.errorf("llmtest: request #%d %s %s: body is not a JSON object: %q", n, r.Method, r.URL.Path, raw)
		writeFailure(rw, wire, &Failure{Status: http.StatusBadRequest, Message: "llmtest: body is not a JSON object"})
		return
	}
	if s.respond != nil {
		if reply, err = s.respond(rec); err != nil {
			msg := fmt.Sprintf("llmtest: request #%d (%s %s): %v", n, r.Method, r.URL.Path, err)
			s.errorf("%s", msg)
			writeFailure(rw, wire, &Failure{Status: http.StatusBadRequest, Message: msg})
			return
		}
	}

	if reply.Delay > 0 {
		timer := time.NewTimer(reply.Delay)
		select {
		case <-timer.C:
		case <-r.Context().Done():
			timer.Stop()
			return
		}
	}
	if reply.Disconnect {
		hangUp(rw)
		return
	}
	if reply.Fail != nil && !(reply.Fail.MidStream && rec.Stream) {
		writeFailure(rw, wire, reply.Fail)
		return
	}
	if model == "" {
		model, _ = rec.Body["model"].(string)
	}
	t := &turn{Reply: reply, n: n, model: model, req: &rec, ctx: r.Context()}
	var werr error
	switch wire {
	case WireChat:
		werr = s.writeChat(rw, t)
	case WireResponses:
		werr = s.writeResponses(rw, t)
	case WireAnthropic:
		werr = s.writeAnthropic(rw, t)
	case WireGemini, WireVertexGemini:
		werr = s.writeGemini(rw, t)
	case WireVertexAnthropic:
		werr = s.writeAnthropic(rw, t)
	case WireBedrock:
		werr = s.writeBedrock(rw, t)
	}
	// A client that goes away mid-reply (a cancelled stream, a timeout)
	// is not the script's fault.
	var cw clientWriteError
	if werr != nil && !errors.As(werr, &cw) {
		s.errorf("llmtest: request #%d: %v", n, werr)
	}
}

// clientWriteError is a failure to write to the client.
type clientWriteError struct{ err error }

func (e clientWriteError) Error() string { return "writing the reply: " + e.err.Error() }
func (e clientWriteError) Unwrap() error { return e.err }

// turn is a reply being rendered for one request.
type turn struct {
	Reply
	n     int    // 1-based request number, used in made-up ids
	model string // model named by the request
	req   *Request
	ctx   context.Context
}

// id returns the reply's id, or a made-up one with the given prefix.
func (t *turn) id(prefix string) string {
	if t.ID != "" {
		return t.ID
	}
	return fmt.Sprintf("%s%d", prefix, t.n)
}

// callID returns the id of tool call i, or a made-up one.
func (t *turn) callID(prefix string, i int) string {
	if id := t.ToolCalls[i].ID; id != "" {
		return id
	}
	return fmt.Sprintf("%s%d_%d", prefix, t.n, i)
}

// hangUp closes the client connection without writing a response.
func hangUp(rw http.ResponseWriter) {
	conn, _, err := http.NewResponseController(rw).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler)
	}
	conn.Close()
}

// marshal encodes v as JSON. Maps put their "type" key first, as the
// providers do, and the other keys in sorted order.
func marshal(v any) ([]byte, error) {
	m, ok := v.(map[string]any)
	if !ok {
		return json.Marshal(v)
	}
	keys := slices.Sorted(maps.Keys(m))
	if i := slices.Index(keys, "type"); i > 0 {
		keys = append([]string{"type"}, slices.Delete(keys, i, i+1)...)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshal(m[k])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// writeJSON writes v as a JSON response with the given status.
func writeJSON(rw http.ResponseWriter, status int, v any) error {
	b, err := marshal(v)
	if err != nil {
		return err
	}
	rw.Header().Set("Content-Type", "application/json")
	rw.WriteHeader(status)
	if _, err := rw.Write(b); err != nil {
		return clientWriteError{err}
	}
	return nil
}

// sse writes a server-sent event stream.
type sse struct {
	rw    http.ResponseWriter
	rc    *http.ResponseController
	sep   string // event terminator
	ctx   context.Context
	delay time.Duration // before each event after the first
	sent  int
	err   error
	// cutAfter and malformed are the turn's CutAfter and MalformedStream.
	cutAfter  int
	malformed bool
	// stallAfter is the turn's StallAfter.
	stallAfter int
}

func newSSE(rw http.ResponseWriter, sep string, t *turn) *sse {
	rw.Header().Set("Content-Type", "text/event-stream")
	rw.Header().Set("Cache-Control", "no-cache")
	rw.WriteHeader(http.StatusOK)
	return newStream(rw, sep, t)
}

// newStream returns the pacing of a streamed turn, its headers written.
func newStream(rw http.ResponseWriter, sep string, t *turn) *sse {
	return &sse{rw: rw, rc: http.NewResponseController(rw), sep: sep, ctx: t.ctx, delay: t.ChunkDelay, cutAfter: t.CutAfter, malformed: t.MalformedStream, stallAfter: t.StallAfter}
}

// pace counts an event about to be written and holds it back as the turn
// says: ChunkDelay, StallAfter (false: the client went away) and CutAfter
// (the connection is dropped).
func (e *sse) pace() bool {
	if e.sent++; e.sent > 1 && e.delay > 0 {
		t := time.NewTimer(e.delay)
		select {
		case <-t.C:
		case <-e.ctx.Done():
			t.Stop()
			e.err = clientWriteError{e.ctx.Err()}
			return false
		}
	}
	if e.stallAfter > 0 && e.sent > e.stallAfter {
		<-e.ctx.Done()
		e.err = clientWriteError{e.ctx.Err()}
		return false
	}
	if e.cutAfter > 0 && e.sent > e.cutAfter {
		// Drops the connection: net/http aborts the response without
		// ending it.
		panic(http.ErrAbortHandler)
	}
	return true
}

// event writes one event: an "event:" line if name is set, then one
// "data:" line with v as JSON (or v itself if it is a string).
func (e *sse) event(name string, v any) {
	if e.err != nil {
		return
	}
	if !e.pace() {
		return
	}
	var data []byte
	if s, ok := v.(string); ok {
		data = []byte(s)
	} else if data, e.err = marshal(v); e.err != nil {
		return
	}
	if e.malformed && e.sent == 1 {
		data = []byte(`{"type": "message_start", "trunc`)
	}
	var b bytes.Buffer
	if name != "" {
		b.WriteString("event: " + name + "\n")
	}
	b.WriteString("data: ")
	b.Write(data)
	b.WriteString(e.sep)
	if _, err := e.rw.Write(b.Bytes()); err != nil {
		e.err = clientWriteError{err}
		return
	}
	if err := e.rc.Flush(); err != nil {
		e.err = clientWriteError{err}
	}
}

// chunks splits s into small pieces, as a model streams it: words for
// text, short runs of bytes (on rune boundaries) for anything else.
func chunks(s string, max int) []string {
	var out []string
	for len(s) > 0 {
		n := min(max, len(s))
		if i := strings.IndexByte(s[:n], ' '); i >= 0 && i+1 < n {
			n = i + 1
		}
		for n < len(s) && !utf8Start(s[n]) {
			n++
		}
		out = append(out, s[:n])
		s = s[n:]
	}
	return out
}

func utf8Start(b byte) bool { return b&0xC0 != 0x80 }
