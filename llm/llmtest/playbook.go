package llmtest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"strings"
	"time"
)

// A Playbook answers requests by rules instead of in script order, so that
// many conversations can share one server, at any concurrency, and side
// calls (a title, a side question) get their own answers wherever they fall.
//
// The first rule whose patterns all match the request answers it. Within a
// rule, the reply is chosen by the conversation's position: the number of
// assistant turns already in the request (0 for the first call, 1 after the
// model has answered once, and so on). A request no rule matches, or one
// past the end of its rule's replies, is answered with an error and fails
// the test.
//
// Playbooks are read from JSON (see ParsePlaybook), so programs in other
// languages can script the model through cmd/llmtest.
type Playbook struct {
	Rules []Rule
}

// Rule is one entry of a Playbook. Empty patterns match anything.
type Rule struct {
	// Name identifies the rule in errors.
	Name string `json:"name,omitempty"`
	// System is a regular expression the system prompt must match.
	System string `json:"system,omitempty"`
	// FirstUser is a regular expression the text of the first user
	// message must match: it identifies a conversation by its task.
	FirstUser string `json:"first_user,omitempty"`
	// LastUser is a regular expression the text of the last user message
	// must match: it identifies a side question asked at the end.
	LastUser string `json:"last_user,omitempty"`
	// Replies are the model's turns, by position in the conversation.
	Replies []Reply `json:"-"`
	// Loop makes positions past the end of Replies start over at the
	// first reply instead of failing.
	Loop bool `json:"loop,omitempty"`

	system, firstUser, lastUser *regexp.Regexp
}

// fileReply is a Reply in a playbook file.
type fileReply struct {
	ID           string         `json:"id,omitempty"`
	Text         string         `json:"text,omitempty"`
	ToolCalls    []fileToolCall `json:"tool_calls,omitempty"`
	Reasoning    string         `json:"reasoning,omitempty"`
	Usage        *fileUsage     `json:"usage,omitempty"`
	FinishReason string         `json:"finish_reason,omitempty"`
	DelayMS      int            `json:"delay_ms,omitempty"`
	ChunkDelayMS int            `json:"chunk_delay_ms,omitempty"`
	Fail         *fileFailure   `json:"fail,omitempty"`
	Disconnect   bool           `json:"disconnect,omitempty"`
}

type fileToolCall struct {
	ID   string `json:"id,omitempty"`
	Name string `json:"name"`
	// Arguments is a JSON object, or a string holding the JSON text as
	// sent (which may be malformed on purpose).
	Arguments json.RawMessage `json:"arguments,omitempty"`
}

type fileUsage struct {
	PromptTokens     int `json:"prompt_tokens,omitempty"`
	CompletionTokens int `json:"completion_tokens,omitempty"`
}

type fileFailure struct {
	Status     int    `json:"status"`
	Message    string `json:"message,omitempty"`
	RetryAfter string `json:"retry_after,omitempty"`
}

func (f fileReply) reply() (Reply, error) {
	r := Reply{
		ID: f.ID, Text: f.Text, Reasoning: f.Reasoning, FinishReason: f.FinishReason,
		Delay:      time.Duration(f.DelayMS) * time.Millisecond,
		ChunkDelay: time.Duration(f.ChunkDelayMS) * time.Millisecond,
		Disconnect: f.Disconnect,
	}
	if f.Usage != nil {
		r.Usage = Usage{PromptTokens: f.Usage.PromptTokens, CompletionTokens: f.Usage.CompletionTokens}
	}
	if f.Fail != nil {
		r.Fail = &Failure{Status: f.Fail.Status, Message: f.Fail.Message, RetryAfter: f.Fail.RetryAfter}
	}
	for _, c := range f.ToolCalls {
		if c.Name == "" {
			return Reply{}, fmt.Errorf("tool call without a name")
		}
		args := string(bytes.TrimSpace(c.Arguments))
		if strings.HasPrefix(args, `"`) {
			if err := json.Unmarshal(c.Arguments, &args); err != nil {
				return Reply{}, fmt.Errorf("tool call %s: arguments: %w", c.Name, err)
			}
		}
		r.ToolCalls = append(r.ToolCalls, ToolCall{ID: c.ID, Name: c.Name, Arguments: args})
	}
	return r, nil
}

// ParsePlaybook reads a playbook from JSON:
//
//	{"rules": [
//	  {"name": "title", "system": "titles? for", "replies": [{"text": "Echo test"}]},
//	  {"name": "echo", "first_user": "#echo", "replies": [
//	    {"tool_calls": [{"name": "terminal", "arguments": {"command": "echo hi"}}]},
//	    {"tool_calls": [{"name": "finish", "arguments": {"message": "done"}}]}]}]}
//
// A reply has text, tool_calls (name, arguments as an object or as a JSON
// string), reasoning, usage (prompt_tokens, completion_tokens),
// finish_reason, delay_ms, chunk_delay_ms, fail (status, message,
// retry_after) and disconnect, as Reply does. Unknown keys are errors, so
// a misspelt key does not silently change the script.
func ParsePlaybook(data []byte) (*Playbook, error) {
	type plainRule Rule // Rule's keys; its Replies are read in their file form
	var f struct {
		Rules []struct {
			plainRule
			Replies []fileReply `json:"replies"`
		} `json:"rules"`
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return nil, fmt.Errorf("llmtest: playbook: %w", err)
	}
	p := &Playbook{}
	for i, rj := range f.Rules {
		r := Rule(rj.plainRule)
		if r.Name == "" {
			r.Name = fmt.Sprintf("#%d", i)
		}
		for j, fr := range rj.Replies {
			reply, err := fr.reply()
			if err != nil {
				return nil, fmt.Errorf("llmtest: playbook: rule %s: reply %d: %w", r.Name, j, err)
			}
			r.Replies = append(r.Replies, reply)
		}
		p.Rules = append(p.Rules, r)
	}
	return NewPlaybook(p.Rules...)
}

// NewPlaybook returns a playbook of the given rules, checking their
// patterns.
func NewPlaybook(rules ...Rule) (*Playbook, error) {
	p := &Playbook{Rules: rules}
	if err := p.compile(); err != nil {
		return nil, err
	}
	return p, nil
}

// ReadPlaybook reads a playbook file.
func ReadPlaybook(path string) (*Playbook, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("llmtest: %w", err)
	}
	return ParsePlaybook(b)
}

func (p *Playbook) compile() error {
	for i := range p.Rules {
		r := &p.Rules[i]
		if len(r.Replies) == 0 {
			return fmt.Errorf("llmtest: playbook: rule %s has no replies", r.Name)
		}
		for _, c := range []struct {
			src string
			re  **regexp.Regexp
		}{{r.System, &r.system}, {r.FirstUser, &r.firstUser}, {r.LastUser, &r.lastUser}} {
			if c.src == "" {
				*c.re = nil
				continue
			}
			re, err := regexp.Compile(c.src)
			if err != nil {
				return fmt.Errorf("llmtest: playbook: rule %s: %w", r.Name, err)
			}
			*c.re = re
		}
	}
	return nil
}

// Respond returns the reply to req. It is a Responder.
func (p *Playbook) Respond(req Request) (Reply, error) {
	if !p.compiled() {
		return Reply{}, fmt.Errorf("llmtest: playbook not built by NewPlaybook or ParsePlaybook")
	}
	c := summarize(req)
	for i := range p.Rules {
		r := &p.Rules[i]
		if !matches(r.system, c.system) || !matches(r.firstUser, c.firstUser()) || !matches(r.lastUser, c.lastUser()) {
			continue
		}
		n := c.assistantTurns
		if n >= len(r.Replies) {
			if !r.Loop {
				return Reply{}, fmt.Errorf("playbook rule %s has %d replies; the request is at assistant turn %d", r.Name, len(r.Replies), n)
			}
			n %= len(r.Replies)
		}
		return r.Replies[n], nil
	}
	return Reply{}, fmt.Errorf("no playbook rule matches the request (system %.60q, first user %.60q, last user %.60q)",
		c.system, c.firstUser(), c.lastUser())
}

// compiled reports whether the patterns of p have been compiled (a
// Playbook built in Go rather than parsed has not been).
func (p *Playbook) compiled() bool {
	for _, r := range p.Rules {
		if (r.System != "" && r.system == nil) || (r.FirstUser != "" && r.firstUser == nil) || (r.LastUser != "" && r.lastUser == nil) {
			return false
		}
	}
	return true
}

func matches(re *regexp.Regexp, s string) bool { return re == nil || re.MatchString(s) }

// conversationSummary is what rules match on.
type conversationSummary struct {
	system         string
	users          []string
	assistantTurns int
}

func (c *conversationSummary) firstUser() string {
	if len(c.users) == 0 {
		return ""
	}
	return c.users[0]
}

func (c *conversationSummary) lastUser() string {
	if len(c.users) == 0 {
		return ""
	}
	return c.users[len(c.users)-1]
}

// summarize reads the system prompt, the user texts and the number of
// assistant turns from a request of any wire format.
func summarize(req Request) conversationSummary {
	var c conversationSummary
	b := req.Body
	switch req.Wire {
	case WireChat:
		for _, m := range list(b["messages"]) {
			m, _ := m.(map[string]any)
			switch m["role"] {
			case "system", "developer":
				c.system += textOf(m["content"])
			case "user":
				c.users = append(c.users, textOf(m["content"]))
			case "assistant":
				c.assistantTurns++
			}
		}
	case WireResponses:
		c.system = textOf(b["instructions"])
		prevAssistant := false
		for _, it := range list(b["input"]) {
			it, _ := it.(map[string]any)
			role, _ := it["role"].(string)
			typ, _ := it["type"].(string)
			assistant := role == "assistant" || typ == "function_call" || typ == "reasoning"
			switch {
			case role == "system" || role == "developer":
				c.system += textOf(it["content"])
			case role == "user":
				c.users = append(c.users, textOf(it["content"]))
			case assistant && !prevAssistant:
				c.assistantTurns++
			}
			// A turn's output items (reasoning, message, calls) are
			// adjacent; tool outputs end it.
			if assistant || typ == "function_call_output" || role == "user" {
				prevAssistant = assistant
			}
		}
		if s, ok := b["input"].(string); ok {
			c.users = append(c.users, s)
		}
	case WireAnthropic:
		c.system = textOf(b["system"])
		for _, m := range list(b["messages"]) {
			m, _ := m.(map[string]any)
			switch m["role"] {
			case "user":
				if t := textOf(m["content"]); t != "" {
					c.users = append(c.users, t)
				}
			case "assistant":
				c.assistantTurns++
			}
		}
	case WireGemini:
		if si, ok := b["systemInstruction"].(map[string]any); ok {
			c.system = textOf(si["parts"])
		}
		for _, m := range list(b["contents"]) {
			m, _ := m.(map[string]any)
			switch m["role"] {
			case "user":
				if t := textOf(m["parts"]); t != "" {
					c.users = append(c.users, t)
				}
			case "model":
				c.assistantTurns++
			}
		}
	}
	return c
}

func list(v any) []any { l, _ := v.([]any); return l }

// textOf returns the text of a message content in any of the formats'
// shapes: a string, or a list of parts with "text" fields.
func textOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var b strings.Builder
		for _, p := range v {
			if p, ok := p.(map[string]any); ok {
				if t, ok := p["text"].(string); ok {
					if b.Len() > 0 {
						b.WriteByte('\n')
					}
					b.WriteString(t)
				}
			}
		}
		return b.String()
	}
	return ""
}
