package server

import (
	"errors"
	"net/http"

	"github.com/gohands/gohands/conversation"
)

// none is the query or body of a route that has none.
type none struct{}

// request is one call of a route adapted by handle: its decoded query and
// body, and its conversation when the handler asks for it. The handler
// asks after its own checks of the request, so a bad request is refused
// before the conversation is looked up (the order the routes have always
// answered in).
type request[Q, B any] struct {
	r       *http.Request
	query   Q
	body    B
	s       *Server
	missing int
}

// handleOpts says how handle decodes and answers; nil is the defaults.
type handleOpts struct {
	// missing is the status of an unknown conversation: 404 when zero.
	// 200 answers {"success": false}, as the reference's PATCH does.
	missing int
	// emptyBody accepts a request without a body (B's zero value).
	emptyBody bool
}

// bodyOptional are the options of a route whose body may be left out.
var bodyOptional = &handleOpts{emptyBody: true}

// reply is a handler's answer with a status other than 200.
type reply struct {
	status int
	body   any
}

// handle adapts h to an http.HandlerFunc. It decodes the query into Q
// (fields tagged `query`) and the JSON body into B (none: no body read),
// calls h, and writes h's answer as JSON (raw when []byte; a reply carries
// its status) or h's error with writeErr.
func handle[Q, B any](s *Server, o *handleOpts, h func(*request[Q, B]) (any, error)) http.HandlerFunc {
	var opts handleOpts
	if o != nil {
		opts = *o
	}
	if opts.missing == 0 {
		opts.missing = http.StatusNotFound
	}
	_, noBody := any((*B)(nil)).(*none)
	return func(w http.ResponseWriter, r *http.Request) {
		in := &request[Q, B]{r: r, s: s, missing: opts.missing}
		if err := decodeQuery(r, &in.query); err != nil {
			writeErr(w, err)
			return
		}
		if !noBody {
			if err := s.readBody(w, r, &in.body, opts.emptyBody); err != nil {
				writeErr(w, err)
				return
			}
		}
		v, err := h(in)
		if err != nil {
			writeErr(w, err)
			return
		}
		status := http.StatusOK
		if rp, ok := v.(reply); ok {
			status, v = rp.status, rp.body
		}
		writeJSON(w, status, v)
	}
}

// find resolves the {conversation_id} of the request. An unknown or
// deleted conversation is a *missingError.
func (in *request[Q, B]) find() (*conv, error) {
	id, err := conversationID(in.r)
	if err != nil {
		return nil, err
	}
	c, err := in.s.lookupErr(id)
	if err != nil {
		return nil, err
	}
	if c == nil || c.isGone() {
		return nil, &missingError{status: in.missing, id: id}
	}
	return c, nil
}

// load is find that also loads the conversation and holds it loaded until
// the request ends.
func (in *request[Q, B]) load() (*conv, *conversation.LocalConversation, error) {
	c, err := in.find()
	if err != nil {
		return nil, nil, err
	}
	lc, err := c.hold(in.r.Context())
	if errors.Is(err, errNotFound) {
		err = &missingError{status: in.missing, id: c.id}
	}
	if err != nil {
		return nil, nil, err
	}
	return c, lc, nil
}

// missingError is an unknown conversation; writeErr answers it with
// status and the reference's detail, or {"success": false} for 200.
type missingError struct {
	status int
	id     string
}

func (e *missingError) Error() string { return "Conversation not found: " + e.id }

// internalError is an error answered with 500 whatever it wraps (it
// hides its cause from writeErr's checks; the body still names it).
type internalError struct{ err error }

func (e *internalError) Error() string { return e.err.Error() }
