package mcp

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Kinds of MCP tools, actions and observations, as the reference names
// them.
const (
	ToolKind        = "MCPToolDefinition"
	ActionKind      = "MCPToolAction"
	ObservationKind = "MCPToolObservation"
)

func init() {
	event.RegisterKind[Action](ActionKind)
	event.RegisterKind[Observation](ObservationKind)
}

// Action is a call of an MCP tool: the arguments, kept as the model wrote
// them (nulls removed) so the server receives them in the same order.
type Action struct {
	Data json.RawMessage `json:"data"`
}

// MarshalJSON implements json.Marshaler: absent data encodes as {}.
func (a Action) MarshalJSON() ([]byte, error) {
	data := a.Data
	if len(bytes.TrimSpace(data)) == 0 {
		data = json.RawMessage("{}")
	}
	return event.MarshalJSON(struct {
		Data json.RawMessage `json:"data"`
	}{data})
}

// Observation is an MCP tool's result.
type Observation struct {
	event.ObservationBase
	// ToolName is the MCP tool's name on its server.
	ToolName string `json:"tool_name"`
}

// Tool is one tool of an MCP server, as a tool.Tool.
type Tool struct {
	name   string // the name the model calls it by
	srv    *server
	mcp    *sdk.Tool
	schema map[string]any
	ann    *event.ToolAnnotations
	meta   json.RawMessage
}

var _ tool.Tool = (*Tool)(nil)

func newTool(srv *server, t *sdk.Tool) (*Tool, error) {
	raw, err := json.Marshal(t.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	full, err := tool.DecodeSchema(raw)
	if err != nil {
		return nil, fmt.Errorf("tool %q: input schema: %w", t.Name, err)
	}
	schema := tool.Simplify(full)
	if schema["type"] == nil {
		schema["type"] = "object"
	}
	if _, ok := schema["properties"]; !ok {
		schema["properties"] = tool.Properties{}
	}
	mt := &Tool{name: t.Name, srv: srv, mcp: t, schema: schema}
	if a := t.Annotations; a != nil {
		ann := tool.DefaultAnnotations()
		ann.Title = a.Title
		ann.ReadOnlyHint = a.ReadOnlyHint
		ann.IdempotentHint = a.IdempotentHint
		if a.DestructiveHint != nil {
			ann.DestructiveHint = *a.DestructiveHint
		}
		if a.OpenWorldHint != nil {
			ann.OpenWorldHint = *a.OpenWorldHint
		}
		mt.ann = &ann
	}
	if len(t.Meta) > 0 {
		if mt.meta, err = event.MarshalJSON(map[string]any(t.Meta)); err != nil {
			return nil, fmt.Errorf("tool %q: _meta: %w", t.Name, err)
		}
	}
	return mt, nil
}

// Name implements tool.Tool. It is the MCP tool's name unless that name
// was taken, see Set.Renamed.
func (t *Tool) Name() string { return t.name }

// MCPName returns the tool's name on its server.
func (t *Tool) MCPName() string { return t.mcp.Name }

// Server returns the name of the tool's server.
func (t *Tool) Server() string { return t.srv.name }

// Description implements tool.Tool.
func (t *Tool) Description() string {
	if t.mcp.Description == "" {
		return "No description provided"
	}
	return t.mcp.Description
}

// Annotations implements tool.Tool. The result is a copy.
func (t *Tool) Annotations() *event.ToolAnnotations {
	if t.ann == nil {
		return nil
	}
	a := *t.ann
	return &a
}

// Definition implements tool.Tool.
//
// The reference also serialises the MCP tool itself (an "mcp_tool" field);
// event.ToolDefinition has no such field, so it is not written. Unlike the
// reference, whose conversion loses them, the server's annotations are
// kept.
func (t *Tool) Definition() event.ToolDefinition {
	// As for every other tool: the annotations' title, else the name (the
	// reference writes the name).
	title := t.name
	if t.ann != nil && t.ann.Title != "" {
		title = t.ann.Title
	}
	return event.ToolDefinition{
		Description:     t.Description(),
		ActionType:      ActionKind,
		ObservationType: ObservationKind,
		Annotations:     t.Annotations(),
		Meta:            t.meta,
		Kind:            ToolKind,
		Title:           title,
	}
}

// InputSchema implements tool.Tool: the server's input schema, simplified
// with tool.Simplify (property order kept).
func (t *Tool) InputSchema() map[string]any {
	s, _ := tool.DecodeSchema(mustJSON(t.schema))
	return s
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // schemas are decoded JSON: they always encode
	}
	return b
}

// ParseAction implements tool.Tool: null arguments are dropped (as the
// reference does) and the rest is validated against the input schema.
func (t *Tool) ParseAction(args json.RawMessage) (event.Action, error) {
	if len(bytes.TrimSpace(args)) == 0 {
		args = json.RawMessage("{}")
	}
	clean, err := dropNulls(args)
	if err != nil {
		return nil, &tool.FieldError{Msg: fmt.Sprintf("arguments must be a JSON object: %v", err)}
	}
	if err := tool.Validate(t.schema, clean); err != nil {
		return nil, err
	}
	return &Action{Data: clean}, nil
}

// dropNulls removes top-level members whose value is null, keeping the
// order of the others.
func dropNulls(args json.RawMessage) (json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not an object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	first := true
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if string(v) == "null" {
			continue
		}
		if !first {
			out.WriteByte(',')
		}
		first = false
		kb, _ := json.Marshal(k.(string))
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if dec.More() {
		return nil, errors.New("trailing data")
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Execute implements tool.Tool. Everything that goes wrong on the server's
// side (an isError result, a protocol error, a timeout, a crashed server)
// is an error observation; the error result is only for a wrong action
// type.
func (t *Tool) Execute(ctx context.Context, action event.Action) (event.Observation, error) {
	a, ok := action.(*Action)
	if !ok {
		return nil, fmt.Errorf("mcp tool %s: action is %T, want *mcp.Action", t.name, action)
	}
	var args any = map[string]any{}
	if len(bytes.TrimSpace(a.Data)) > 0 {
		data, err := expandSecrets(a.Data, t.srv.opts.Secrets)
		if err != nil {
			return nil, fmt.Errorf("mcp tool %s: %w", t.name, err)
		}
		args = data
	}
	res, err := t.srv.call(ctx, t.mcp.Name, args)
	var o *Observation
	if err != nil {
		o = t.errorObservation(ctx, err)
	} else {
		o = t.observation(res)
	}
	if mask := t.srv.opts.Mask; mask != nil {
		for i, c := range o.Content {
			if c.Type == event.ContentText {
				o.Content[i].Text = mask(c.Text)
			}
		}
	}
	return o, nil
}

func (t *Tool) errorObservation(ctx context.Context, err error) *Observation {
	var msg string
	var crash *crashError
	switch {
	case errors.As(err, &crash):
		msg = crash.Error()
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		msg = fmt.Sprintf("MCP tool '%s' timed out after %s. The server may be stuck or the operation too slow; retry or try another approach.",
			t.mcp.Name, t.srv.callTimeout().Round(time.Millisecond))
	default:
		msg = fmt.Sprintf("Error calling MCP tool %s: %v", t.mcp.Name, err)
	}
	return &Observation{
		ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(msg)}, IsError: true},
		ToolName:        t.mcp.Name,
	}
}

// observation turns a tool result into an observation: a header naming the
// tool (as the reference writes it), then every content block. Unlike the
// reference, which drops them, embedded resources and resource links are
// shown as text (or as images, for image blobs), and structured content is
// shown when there is no other content.
func (t *Tool) observation(res *sdk.CallToolResult) *Observation {
	content := event.List[event.Content]{event.Text(fmt.Sprintf("[Tool '%s' executed.]", t.mcp.Name))}
	for _, c := range res.Content {
		content = append(content, contentOf(c)...)
	}
	if len(res.Content) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			content = append(content, event.Text(string(b)))
		}
	}
	return &Observation{
		ObservationBase: event.ObservationBase{Content: content, IsError: res.IsError},
		ToolName:        t.mcp.Name,
	}
}

func dataURL(mime string, data []byte) string {
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(data)
}

func image(mime string, data []byte) event.Content {
	return event.Content{Type: event.ContentImage, ImageURLs: []string{dataURL(mime, data)}}
}

func contentOf(c sdk.Content) []event.Content {
	switch c := c.(type) {
	case *sdk.TextContent:
		return []event.Content{event.Text(c.Text)}
	case *sdk.ImageContent:
		return []event.Content{image(c.MIMEType, c.Data)}
	case *sdk.AudioContent:
		return []event.Content{event.Text(fmt.Sprintf("[Audio content (%s, %d bytes) not shown]", c.MIMEType, len(c.Data)))}
	case *sdk.ResourceLink:
		var b strings.Builder
		fmt.Fprintf(&b, "[Resource link: %s", c.URI)
		if c.Name != "" {
			fmt.Fprintf(&b, " name=%q", c.Name)
		}
		if c.MIMEType != "" {
			fmt.Fprintf(&b, " type=%s", c.MIMEType)
		}
		if c.Description != "" {
			fmt.Fprintf(&b, " description=%q", c.Description)
		}
		b.WriteString("]")
		return []event.Content{event.Text(b.String())}
	case *sdk.EmbeddedResource:
		r := c.Resource
		if r == nil {
			return nil
		}
		switch {
		case r.Blob == nil:
			return []event.Content{event.Text(fmt.Sprintf("[Resource %s]\n%s", r.URI, r.Text))}
		case strings.HasPrefix(r.MIMEType, "image/"):
			return []event.Content{event.Text(fmt.Sprintf("[Resource %s]", r.URI)), image(r.MIMEType, r.Blob)}
		default:
			return []event.Content{event.Text(fmt.Sprintf("[Resource %s: binary %s, %d bytes, not shown]", r.URI, r.MIMEType, len(r.Blob)))}
		}
	}
	b, _ := json.Marshal(c)
	return []event.Content{event.Text(fmt.Sprintf("[Unsupported content: %s]", b))}
}
