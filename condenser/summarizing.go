package condenser

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// Defaults of LLMSummarizing (the reference's).
const (
	DefaultMaxSize                        = 240
	DefaultKeepFirst                      = 2
	DefaultMinimumProgress                = 0.1
	DefaultHardContextResetMaxRetries     = 5
	DefaultHardContextResetContextScaling = 0.8
)

// LLMSummarizing forgets a middle stretch of the view when it grows too
// long and replaces it with a summary written by an LLM (kind
// LLMSummarizingCondenser). It condenses when
//
//   - the view has an unhandled CondensationRequest (a hard requirement),
//   - the view's tokens exceed the smaller of MaxTokens and the agent
//     model's context window (hard), or
//   - the view has more than MaxSize events (soft: if nothing can be
//     forgotten yet, the view is left alone).
//
// The first KeepFirst events are always kept, and cuts never separate a
// tool call from its result. When a hard requirement cannot be met by a
// normal condensation, the whole view is summarised (a hard context
// reset), with event texts shortened on each failed attempt.
//
// Make one with NewLLMSummarizing or decode one; the zero value lacks the
// defaults.
type LLMSummarizing struct {
	// LLM configures the summarising model (the reference gives it usage id
	// "condenser").
	LLM llm.Config `json:"llm"`
	// MaxSize is the number of events above which the view is condensed.
	MaxSize int `json:"max_size"`
	// MaxTokens, if positive, caps the view's tokens below the agent
	// model's context window.
	MaxTokens int `json:"max_tokens,omitempty"`
	// KeepFirst is how many events at the start are never forgotten.
	KeepFirst int `json:"keep_first"`
	// MinimumProgress is the smallest fraction of the view a condensation
	// may forget.
	MinimumProgress                float64 `json:"minimum_progress"`
	HardContextResetMaxRetries     int     `json:"hard_context_reset_max_retries"`
	HardContextResetContextScaling float64 `json:"hard_context_reset_context_scaling"`

	// Model, if set, writes the summaries instead of an LLM made from the
	// LLM config (tests pass a scripted one).
	Model llm.Model `json:"-"`
	// Counter estimates tokens; nil means CharCounter.
	Counter TokenCounter `json:"-"`
	// Logger receives warnings about failed summaries; nil means
	// slog.Default().
	Logger *slog.Logger `json:"-"`
}

// NewLLMSummarizing returns a condenser with the reference's defaults,
// summarising with model (configured by cfg, used when model is nil).
func NewLLMSummarizing(cfg llm.Config, model llm.Model) *LLMSummarizing {
	c := &LLMSummarizing{LLM: cfg, Model: model}
	c.SetDefaults()
	return c
}

// SetDefaults implements event.Defaulter.
func (c *LLMSummarizing) SetDefaults() {
	c.MaxSize = DefaultMaxSize
	c.KeepFirst = DefaultKeepFirst
	c.MinimumProgress = DefaultMinimumProgress
	c.HardContextResetMaxRetries = DefaultHardContextResetMaxRetries
	c.HardContextResetContextScaling = DefaultHardContextResetContextScaling
}

// Validate checks the configuration as the reference does.
func (c *LLMSummarizing) Validate() error {
	switch {
	case c.MaxSize <= 0:
		return fmt.Errorf("condenser: max_size %d: must be positive", c.MaxSize)
	case c.KeepFirst < 0:
		return fmt.Errorf("condenser: keep_first %d: must not be negative", c.KeepFirst)
	case c.MaxSize/2-c.KeepFirst-1 <= 0:
		return fmt.Errorf("condenser: max_size %d is too small for keep_first %d: max_size/2 - keep_first - 1 must be positive", c.MaxSize, c.KeepFirst)
	case c.MaxTokens < 0:
		return fmt.Errorf("condenser: max_tokens %d: must be positive", c.MaxTokens)
	case c.MinimumProgress < 0 || c.MinimumProgress > 1:
		return fmt.Errorf("condenser: minimum_progress %v: must be between 0 and 1", c.MinimumProgress)
	case c.HardContextResetMaxRetries < 0:
		return fmt.Errorf("condenser: hard_context_reset_max_retries %d: must not be negative", c.HardContextResetMaxRetries)
	case c.HardContextResetContextScaling <= 0 || c.HardContextResetContextScaling >= 1:
		return fmt.Errorf("condenser: hard_context_reset_context_scaling %v: must be between 0 and 1", c.HardContextResetContextScaling)
	}
	return nil
}

// HandlesRequests implements Condenser: true.
func (c *LLMSummarizing) HandlesRequests() bool { return true }

// reasons are why a view needs condensing.
type reasons struct {
	request, tokens, events bool
	cap, total              int // token cap and count, when tokens
}

func (r reasons) any() bool  { return r.request || r.tokens || r.events }
func (r reasons) hard() bool { return r.request || r.tokens }

func (c *LLMSummarizing) counter() TokenCounter {
	if c.Counter != nil {
		return c.Counter
	}
	return CharCounter{}
}

// tokenCap returns the smaller of MaxTokens and the agent model's context
// window, 0 when neither is known.
func (c *LLMSummarizing) tokenCap(agentLLM llm.Model) int {
	limit := c.MaxTokens
	if f, ok := agentLLM.(interface{ Features() llm.Features }); ok {
		if w := f.Features().ContextWindow; w > 0 && (limit == 0 || w < limit) {
			limit = w
		}
	}
	return limit
}

func (c *LLMSummarizing) reasons(view *View, agentLLM llm.Model) reasons {
	r := reasons{request: view.UnhandledRequest, events: view.Len() > c.MaxSize}
	if r.cap = c.tokenCap(agentLLM); r.cap > 0 {
		r.total = viewTokens(c.counter(), view.Events)
		r.tokens = r.total > r.cap
	}
	return r
}

// Condense implements Condenser.
func (c *LLMSummarizing) Condense(ctx context.Context, view *View, agentLLM llm.Model) (*event.Condensation, error) {
	r := c.reasons(view, agentLLM)
	if !r.any() {
		return nil, nil
	}
	if c.Model == nil {
		m, err := c.summarizer(agentLLM)
		if err != nil {
			return nil, fmt.Errorf("condenser: %w", err)
		}
		cc := *c // c is shared configuration: fill in a copy
		cc.Model = m
		c = &cc
	}
	cond, err := c.condense(ctx, view, r)
	if err == nil {
		return cond, nil
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	if !r.hard() {
		c.logger().Debug("condenser: soft condensation skipped", "err", err)
		return nil, nil
	}
	if cond := c.hardReset(ctx, view); cond != nil {
		return cond, nil
	}
	if ctx.Err() != nil {
		return nil, context.Cause(ctx)
	}
	return nil, fmt.Errorf("%w: %w (hard context reset failed too)", ErrNoCondensation, err)
}

// summarizer makes the model that writes summaries from the LLM config.
// When the config names the agent's model it is derived from the agent's
// LLM (same provider and client, metrics of its own), borrowing the
// agent's credentials where it has none: presets derive the condenser's
// config from the agent's, and a stored config carries no keys.
func (c *LLMSummarizing) summarizer(agentLLM llm.Model) (llm.Model, error) {
	a, ok := agentLLM.(*llm.LLM)
	if !ok || a.Config().Model != c.LLM.Model {
		return llm.New(c.LLM, nil)
	}
	cfg, ac := c.LLM, a.Config()
	if cfg.APIKey.IsZero() && cfg.AWSAccessKeyID.IsZero() {
		cfg.APIKey, cfg.AWSAccessKeyID, cfg.AWSSecretAccessKey, cfg.AWSSessionToken = ac.APIKey, ac.AWSAccessKeyID, ac.AWSSecretAccessKey, ac.AWSSessionToken
		if cfg.BaseURL == "" {
			cfg.BaseURL = ac.BaseURL
		}
	}
	return a.Derive(cfg)
}

func (c *LLMSummarizing) logger() *slog.Logger {
	if c.Logger != nil {
		return c.Logger
	}
	return slog.Default()
}

// forgetRange returns the part of view to forget, [start, end), by the
// reference's rules: keep as many tail events as the strictest reason
// allows, and move both ends to the next cut point.
func (c *LLMSummarizing) forgetRange(view *View, r reasons) (start, end int, err error) {
	n := view.Len()
	tail := n
	if r.request {
		tail = min(tail, n/2-c.KeepFirst-1)
	}
	if r.events {
		tail = min(tail, c.MaxSize/2-c.KeepFirst-1)
	}
	if r.tokens {
		tail = min(tail, c.tailForReduction(view.Events, r.total-r.cap/2))
	}
	idx := ManipulationIndices(view.Events)
	// A leading system prompt is never forgotten, even with KeepFirst 0:
	// the condensed view must still open with it.
	head := c.KeepFirst
	if i := slices.IndexFunc(view.Events, isSystemPrompt); i >= 0 {
		head = max(head, i+1)
	}
	start, ok1 := nextIndex(idx, head)
	end, ok2 := nextIndex(idx, n-tail) // a negative tail finds no index, as in the reference
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("%w: no cut point in the view", ErrNoCondensation)
	}
	if end <= start {
		return 0, 0, fmt.Errorf("%w: nothing to forget between the kept head and tail (a tool loop may span the view)", ErrNoCondensation)
	}
	if float64(end-start) < float64(n)*c.MinimumProgress {
		return 0, 0, fmt.Errorf("%w: forgetting %d of %d events is below the minimum progress %v", ErrNoCondensation, end-start, n, c.MinimumProgress)
	}
	return start, end, nil
}

// tailForReduction returns how many events at the end of
// events[KeepFirst:] may be kept when reduction tokens must go: the rest
// minus its shortest prefix whose tokens (counted on top of the kept head)
// exceed reduction.
func (c *LLMSummarizing) tailForReduction(events []event.Event, reduction int) int {
	keep := min(c.KeepFirst, len(events))
	base, rest := events[:keep], events[keep:]
	if len(rest) == 0 {
		return 0
	}
	if reduction <= 0 {
		return len(rest)
	}
	tc := c.counter()
	baseTokens := 0
	if len(base) > 0 {
		baseTokens = viewTokens(tc, base)
	}
	tokens := func(k int) int {
		return viewTokens(tc, append(base[:len(base):len(base)], rest[:k]...)) - baseTokens
	}
	if tokens(len(rest)) <= reduction {
		return 0
	}
	k := sort.Search(len(rest), func(k int) bool { return tokens(k) > reduction })
	return len(rest) - k
}

func isSystemPrompt(e event.Event) bool {
	_, ok := e.(*event.SystemPromptEvent)
	return ok
}

func (c *LLMSummarizing) condense(ctx context.Context, view *View, r reasons) (*event.Condensation, error) {
	start, end, err := c.forgetRange(view, r)
	if err != nil {
		return nil, err
	}
	return c.summarize(ctx, view.ConversationID, view.Events[start:end], start, 0)
}

// hardReset summarises the whole view (after a leading system prompt,
// which the model always needs), shortening each event's text on every
// failed attempt. It returns nil when every attempt failed.
func (c *LLMSummarizing) hardReset(ctx context.Context, view *View) *event.Condensation {
	events, offset := view.Events, 0
	if len(events) > 0 {
		if _, ok := events[0].(*event.SystemPromptEvent); ok {
			events, offset = events[1:], 1
		}
	}
	if len(events) == 0 {
		return nil
	}
	limit := 0
	for range c.HardContextResetMaxRetries {
		cond, err := c.summarize(ctx, view.ConversationID, events, offset, limit)
		if err == nil {
			return cond
		}
		if ctx.Err() != nil {
			return nil
		}
		if limit == 0 {
			for _, e := range events {
				limit = max(limit, len(describe(e)))
			}
		}
		limit = int(float64(limit) * c.HardContextResetContextScaling)
		c.logger().Warn("condenser: hard context reset failed; shortening events", "err", err, "max_event_chars", limit)
	}
	c.logger().Error("condenser: hard context reset failed after every attempt", "attempts", c.HardContextResetMaxRetries)
	return nil
}

// summarize asks the LLM to summarise forgotten, each event's text cut to
// limit characters when limit > 0. convID is the conversation's id, if
// known.
func (c *LLMSummarizing) summarize(ctx context.Context, convID string, forgotten []event.Event, offset, limit int) (*event.Condensation, error) {
	if len(forgotten) == 0 {
		return nil, fmt.Errorf("%w: no events to summarise", ErrNoCondensation)
	}
	// As in the reference, the instructions go in the system message and the
	// events in the user message, so that the Responses API gets them as
	// instructions and input. (Responses calls are always store=false here,
	// which the reference asks for explicitly.) The conversation's id keys
	// the provider's prompt cache, as on the agent's own calls.
	msgs := []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(summaryInstructions)}},
		event.UserMessage(summaryEvents(forgotten, limit)),
	}
	resp, err := c.Model.Completion(ctx, msgs, nil, &llm.CallOptions{ConversationID: convID, NoStream: true})
	if err != nil {
		return nil, fmt.Errorf("%w: summary LLM call failed: %w", ErrNoCondensation, err)
	}
	if resp == nil {
		return nil, fmt.Errorf("%w: summary LLM gave no response", ErrNoCondensation)
	}
	cond := &event.Condensation{
		Base:              event.NewBase(event.SourceEnvironment),
		ForgottenEventIDs: make(event.List[string], 0, len(forgotten)),
		SummaryOffset:     &offset,
		LLMResponseID:     resp.ID,
	}
	if cs := resp.Message.Content; len(cs) > 0 && cs[0].Type == event.ContentText {
		s := cs[0].Text
		cond.Summary = &s
	}
	for _, e := range forgotten {
		cond.ForgottenEventIDs = append(cond.ForgottenEventIDs, e.EventBase().ID)
	}
	return cond, nil
}

// summaryInstructions is our own wording of what the summary must keep.
const summaryInstructions = `You keep the running memory of a software agent whose older events are being dropped from its context.
Write a summary of the events below that lets the agent continue the task without them. Earlier summaries may be among the events: fold them in, do not lose what they say.

Use these sections, leaving out any that would be empty:
USER_CONTEXT: what the user asked for, with requirements and constraints
TASK_TRACKING: every tracked task with its exact id and status (required if any event tracks tasks)
COMPLETED: what is done, with results
PENDING: what is left to do
CURRENT_STATE: where the work stands now
For coding work also:
CODE_STATE: files, functions and data structures involved
TESTS: failing tests and their errors
CHANGES: edits made
DEPS: dependencies
VERSION_CONTROL_STATUS: branch, commits, pull request

Be precise and brief: names, paths, ids and numbers matter more than prose.`

// summaryEvents renders the events to summarise, each in an <EVENT> block,
// and a closing request.
func summaryEvents(events []event.Event, limit int) string {
	var b strings.Builder
	for _, e := range events {
		s := describe(e)
		if limit > 0 && len(s) > limit {
			s = truncate(s, limit)
		}
		b.WriteString("<EVENT>\n")
		b.WriteString(s)
		b.WriteString("\n</EVENT>\n")
	}
	b.WriteString("\nSummarise these events as the instructions say.")
	return b.String()
}

// previewChars caps each text an event shows in a summary prompt.
const previewChars = 500

// describe renders an event as plain text for a summary prompt.
func describe(e event.Event) string {
	var b strings.Builder
	kind, _ := event.KindOf(e)
	fmt.Fprintf(&b, "%s (%s)", kind, e.EventBase().Source)
	switch e := e.(type) {
	case *event.ActionEvent:
		fmt.Fprintf(&b, " tool %s", e.ToolName)
		if t := event.TextOf(e.Thought); t != "" {
			fmt.Fprintf(&b, "\nthought: %s", preview(t))
		}
		fmt.Fprintf(&b, "\narguments: %s", preview(e.ToolCall.Arguments))
	case *event.CondensationSummaryEvent:
		fmt.Fprintf(&b, "\nprevious summary: %s", preview(e.Summary))
	default:
		if m, ok := event.LLMMessage(e); ok {
			fmt.Fprintf(&b, " %s", m.Role)
			if m.Name != "" {
				fmt.Fprintf(&b, " tool %s", m.Name)
			}
			fmt.Fprintf(&b, "\n%s", preview(event.TextOf(m.Content)))
		}
	}
	return b.String()
}

func preview(s string) string { return truncate(s, previewChars) }

// truncate cuts s to about n bytes on a rune boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	const mark = "...[truncated]"
	cut := max(n-len(mark), 0)
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + mark
}

var _ Condenser = (*LLMSummarizing)(nil)
