package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/google/uuid"

	"github.com/gohands/gohands/conversation"
)

var ok = successResponse{Success: true}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var b []byte
	switch v := v.(type) {
	case []byte:
		b = v
	case json.RawMessage:
		b = v
	default:
		var err error
		if b, err = json.Marshal(v); err != nil {
			writeInternal(w, err)
			return
		}
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}

func writeDetail(w http.ResponseWriter, status int, detail string) {
	writeJSON(w, status, errorDetail{Detail: detail})
}

func writeInternal(w http.ResponseWriter, err error) {
	b, _ := json.Marshal(map[string]string{"detail": "Internal Server Error", "exception": err.Error()})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusInternalServerError)
	w.Write(b)
}

// writeInvalid answers 422 with one validation error.
func writeInvalid(w http.ResponseWriter, typ, msg string, loc ...any) {
	writeJSON(w, http.StatusUnprocessableEntity, validationErrors{Detail: []validationError{{Type: typ, Loc: loc, Msg: msg}}})
}

// invalidError is a request that fails validation; handlers answer it with
// 422.
type invalidError struct {
	loc []any
	typ string
	msg string
}

func (e *invalidError) Error() string { return fmt.Sprintf("%v: %s", e.loc, e.msg) }

func invalid(msg string, loc ...any) error {
	return &invalidError{loc: loc, typ: "value_error", msg: msg}
}

// writeErr answers err: a validation error with 422, an httpError with its
// status, an unknown conversation as its route says, anything else (and an
// internalError) with 500.
func writeErr(w http.ResponseWriter, err error) {
	var ie *invalidError
	var he *httpError
	var me *missingError
	var le *launchError
	switch {
	case errors.As(err, &le):
		writeJSON(w, http.StatusUnprocessableEntity, map[string]any{"detail": le.detail})
	case errors.As(err, &me) && me.status == http.StatusOK:
		writeJSON(w, http.StatusOK, successResponse{Success: false})
	case me != nil:
		writeDetail(w, me.status, me.Error())
	case errors.Is(err, errNotFound):
		writeDetail(w, http.StatusNotFound, "Conversation not found")
	case errors.Is(err, conversation.ErrLocked):
		writeDetail(w, errHeldElsewhere.status, errHeldElsewhere.detail)
	case errors.As(err, &ie):
		writeInvalid(w, ie.typ, ie.msg, ie.loc...)
	case errors.As(err, &he):
		if he.retryAfter > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(he.retryAfter))
		}
		if he.status >= 500 {
			writeJSON(w, he.status, serverErrorBody(he.status, he.detail))
			return
		}
		writeDetail(w, he.status, he.detail)
	default:
		writeInternal(w, err)
	}
}

// httpError is an error with its HTTP status and detail.
type httpError struct {
	status int
	detail string
	// retryAfter, in seconds, is sent as Retry-After when set.
	retryAfter int
}

func (e *httpError) Error() string { return e.detail }

func statusErr(status int, format string, args ...any) error {
	return &httpError{status: status, detail: fmt.Sprintf(format, args...)}
}

// readBody reads a JSON request body into v, which may ignore unknown
// keys. An empty body is an error unless allowEmpty.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request, v any, allowEmpty bool) error {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.opts.MaxRequestBytes))
	if err != nil {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return statusErr(http.StatusRequestEntityTooLarge, "Request body larger than %d bytes", mb.Limit)
		}
		return invalid("could not read the body: "+err.Error(), "body")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return &invalidError{loc: []any{"body"}, typ: "missing", msg: "Field required"}
	}
	if u, ok := v.(interface{ decode([]byte) error }); ok {
		return u.decode(body)
	}
	if err := json.Unmarshal(body, v); err != nil {
		return jsonInvalid(err)
	}
	return missingRequired(body, v)
}

// jsonInvalid turns a JSON decoding error into a validation error.
func jsonInvalid(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		loc := []any{"body"}
		for p := range strings.SplitSeq(te.Field, ".") {
			if p != "" {
				loc = append(loc, p)
			}
		}
		return &invalidError{loc: loc, typ: "type_error", msg: fmt.Sprintf("Input should be of type %s", te.Type)}
	}
	var ie *invalidError
	if errors.As(err, &ie) {
		return ie
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return &invalidError{loc: []any{"body", se.Offset}, typ: "json_invalid", msg: "JSON decode error: " + se.Error()}
	}
	return &invalidError{loc: []any{"body"}, typ: "value_error", msg: err.Error()}
}

// decodeQuery fills the fields of the struct *v tagged `query:"name"` from
// the URL query: strings, ints, bools and their pointers, and []string for
// repeated parameters. The same tags describe the parameters in
// /openapi.json, so the document and the parsing cannot disagree.
func decodeQuery(r *http.Request, v any) error {
	q := r.URL.Query()
	rv := reflect.ValueOf(v).Elem()
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		// A path parameter is checked against its documented pattern,
		// so the handler need not.
		if name := f.Tag.Get("path"); name != "" && f.Type.Kind() == reflect.String {
			v := r.PathValue(name)
			if pat := f.Tag.Get("pattern"); pat != "" && !patternRe(pat).MatchString(v) {
				return &invalidError{loc: []any{"path", name}, typ: "string_pattern_mismatch", msg: "String should match pattern '" + pat + "'"}
			}
			rv.Field(i).SetString(v)
			continue
		}
		name := f.Tag.Get("query")
		if name == "" {
			continue
		}
		vals, present := q[name]
		if !present || len(vals) == 0 {
			if f.Tag.Get("required") == "true" {
				return &invalidError{loc: []any{"query", name}, typ: "missing", msg: "Field required"}
			}
			continue
		}
		// What the document promises is what is accepted: its enums and
		// bounds are checked here, for every route, as Pydantic does.
		if enum := f.Tag.Get("enum"); enum != "" {
			for _, v := range vals {
				if !slices.Contains(strings.Split(enum, ","), v) {
					return &invalidError{loc: []any{"query", name}, typ: "enum", msg: "Input should be " + strings.ReplaceAll(enum, ",", ", ")}
				}
			}
		}
		if f.Tag.Get("required") == "true" && vals[len(vals)-1] == "" {
			return &invalidError{loc: []any{"query", name}, typ: "string_too_short", msg: "String should have at least 1 character"}
		}
		fv := rv.Field(i)
		t := f.Type
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.String {
			fv.Set(reflect.ValueOf(vals))
			continue
		}
		raw := vals[len(vals)-1] // a repeated scalar: the last, as FastAPI reads it
		if t.Kind() == reflect.Pointer {
			p := reflect.New(t.Elem())
			fv.Set(p)
			fv, t = p.Elem(), t.Elem()
		}
		switch t.Kind() {
		case reflect.String:
			fv.SetString(raw)
		case reflect.Int, reflect.Int64:
			n, err := strconv.ParseInt(strings.TrimSpace(raw), 10, 64)
			if err != nil {
				return &invalidError{loc: []any{"query", name}, typ: "int_parsing", msg: "Input should be a valid integer, unable to parse string as an integer"}
			}
			for _, bound := range []struct {
				tag, typ string
				fail     func(limit int64) bool
				msg      string
			}{{"minimum", "greater_than_equal", func(l int64) bool { return n < l }, "greater than or equal to"}, {"maximum", "less_than_equal", func(l int64) bool { return n > l }, "less than or equal to"}} {
				if l, err := strconv.ParseInt(f.Tag.Get(bound.tag), 10, 64); err == nil && bound.fail(l) {
					return &invalidError{loc: []any{"query", name}, typ: bound.typ, msg: fmt.Sprintf("Input should be %s %d", bound.msg, l)}
				}
			}
			fv.SetInt(n)
		case reflect.Bool:
			b, ok := parseBool(raw)
			if !ok {
				return &invalidError{loc: []any{"query", name}, typ: "bool_parsing", msg: "Input should be a valid boolean, unable to interpret input"}
			}
			fv.SetBool(b)
		}
	}
	return nil
}

var patterns sync.Map // pattern -> *regexp.Regexp

// patternRe compiles a pattern of a struct tag once.
func patternRe(pat string) *regexp.Regexp {
	if re, ok := patterns.Load(pat); ok {
		return re.(*regexp.Regexp)
	}
	re, _ := patterns.LoadOrStore(pat, regexp.MustCompile(pat))
	return re.(*regexp.Regexp)
}

// parseBool accepts what pydantic accepts for a boolean.
func parseBool(s string) (bool, bool) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "1", "true", "t", "yes", "y", "on":
		return true, true
	case "0", "false", "f", "no", "n", "off":
		return false, true
	}
	return false, false
}

// conversationID parses the {conversation_id} path parameter: a UUID,
// dashed or hex. It returns the dashed form.
func conversationID(r *http.Request) (string, error) {
	id, err := parseUUID(r.PathValue("conversation_id"))
	if err != nil {
		return "", &invalidError{loc: []any{"path", "conversation_id"}, typ: "uuid_parsing", msg: "Input should be a valid UUID"}
	}
	return id, nil
}

// parseUUID parses a UUID, dashed or hex, and returns the dashed form.
func parseUUID(s string) (string, error) {
	if len(s) != 32 && len(s) != 36 {
		return "", fmt.Errorf("invalid UUID %q", s)
	}
	u, err := uuid.Parse(s)
	if err != nil {
		return "", err
	}
	return u.String(), nil
}

// hexID is the conversation id as the reference writes it in meta.json and
// page ids: 32 hex digits.
func hexID(id string) string { return strings.ReplaceAll(id, "-", "") }

// limitParam checks a page size: 1..100.
func limitParam(n *int, def int) (int, error) {
	if n == nil {
		return def, nil
	}
	if *n < 1 || *n > 100 {
		return 0, &invalidError{loc: []any{"query", "limit"}, typ: "less_than_equal", msg: "Input should be between 1 and 100"}
	}
	return *n, nil
}
