package llm

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"math/rand/v2"
	"net"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/telemetry"
)

// Model is anything that completes a conversation: an *LLM, a Router or a
// Fallback chain. Callers that only complete hold a Model.
type Model interface {
	Completion(ctx context.Context, messages []event.Message, tools []ToolSpec, opts *CallOptions) (*Response, error)
}

// Options configures New. A nil *Options is valid.
type Options struct {
	// HTTPClient sends the requests; nil means a client of our own (never
	// http.DefaultClient, which other code may have changed). Its Timeout
	// should be 0: the config's per-call timeout is applied through the
	// context.
	HTTPClient *http.Client
	// Provider overrides the provider registered for the endpoint's API.
	Provider Provider
	// Logger receives retry and error logs; nil means slog.Default().
	Logger *slog.Logger
	// OnRetry, if set, is called before each retry with the attempt that
	// failed (from 1), the wait before the next one and the error (the
	// reference's retry_listener).
	OnRetry func(attempt int, wait time.Duration, err error)
	// Retryable, if set, is asked about each failure the LLM would retry
	// and can refuse: an interactive program fails at once on errors a
	// person must fix (connection refused, an unknown host), which
	// retrying only hides.
	Retryable func(err error) bool
	// AllowShortContextWindow accepts models whose context window is
	// below MinContextWindow (the reference's ALLOW_SHORT_CONTEXT_WINDOWS,
	// which we take as an option rather than from the environment).
	AllowShortContextWindow bool
	// MaxReplyBytes bounds the size of one reply (its HTTP body, streamed
	// or not); 0 means DefaultMaxReplyBytes. A larger reply fails with
	// ErrReplyTooLarge.
	MaxReplyBytes int64
}

// MinContextWindow is the smallest context window an agent can work in.
const MinContextWindow = 16384

// ErrContextWindowTooSmall is returned by New for a model whose known
// context window is below MinContextWindow.
var ErrContextWindowTooSmall = errors.New("llm: context window too small")

// LLM is a configured model: it resolves the provider once, retries
// transient failures and accounts cost and tokens. It is safe for
// concurrent use.
type LLM struct {
	cfg      Config
	ep       Endpoint
	features Features
	provider Provider
	lent     bool // provider came from Options, not the registry
	hc       *http.Client
	maxReply int64 // Options.MaxReplyBytes, defaulted
	log      *slog.Logger
	onRetry  func(int, time.Duration, error)
	retry    func(error) bool

	mu        sync.Mutex
	metrics   Metrics
	fallbacks map[string]*LLM // fallback_strategy's, by profile name

	cache MessageCache // the previous request's encoded messages
}

var _ Model = (*LLM)(nil)

// New returns the LLM described by cfg. It fails when the config is invalid
// or no provider is registered for the model's wire API (import the
// provider package, or llm/providers for all of them).
func New(cfg Config, opts *Options) (*LLM, error) {
	if opts == nil {
		opts = &Options{}
	}
	cfg = cfg.Normalize()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	ep, err := Resolve(&cfg)
	if err != nil {
		return nil, err
	}
	p := opts.Provider
	if p == nil {
		var ok bool
		if p, ok = providerFor(ep.API); !ok {
			return nil, fmt.Errorf("llm: model %q needs the %s provider: import its package (github.com/gohands/gohands/llm/providers registers all)", cfg.Model, ep.API)
		}
	}
	l := &LLM{
		cfg:      cfg,
		ep:       ep,
		features: FeaturesOf(&cfg),
		provider: p,
		lent:     opts.Provider != nil,
		hc:       opts.HTTPClient,
		log:      opts.Logger,
		onRetry:  opts.OnRetry,
		retry:    opts.Retryable,
		metrics:  Metrics{ModelName: cfg.Model, enc: &metricsEnc{}},
	}
	if w := l.features.ContextWindow; w > 0 && w < MinContextWindow && !opts.AllowShortContextWindow {
		return nil, fmt.Errorf("%w: model %q has a context window of %d tokens; agents need at least %d (raise max_input_tokens, e.g. the server's context size for local models, or set Options.AllowShortContextWindow)",
			ErrContextWindowTooSmall, cfg.Model, w, MinContextWindow)
	}
	if l.hc == nil {
		l.hc = defaultHTTPClient
	}
	l.maxReply = cmp.Or(opts.MaxReplyBytes, DefaultMaxReplyBytes)
	l.hc = limitClient(l.hc, l.maxReply)
	if l.log == nil {
		l.log = slog.Default()
	}
	return l, nil
}

// Derive returns an LLM for cfg that shares l's provider, HTTP client,
// logger and retry listener but keeps metrics of its own: a sub-agent's
// copy of its parent's model, say, whose costs are accounted apart.
func (l *LLM) Derive(cfg Config) (*LLM, error) {
	// A provider of the registry is looked up again: cfg may be another
	// provider's model (switching from OpenAI to Anthropic); one given in
	// Options (a test's fake) is lent as it is.
	var p Provider
	if l.lent {
		p = l.provider
	}
	return New(cfg, &Options{Provider: p, HTTPClient: l.hc, MaxReplyBytes: l.maxReply, Logger: l.log, OnRetry: l.onRetry, Retryable: l.retry, AllowShortContextWindow: true})
}

// Config returns the LLM's normalised config.
func (l *LLM) Config() Config { return l.cfg }

// Endpoint returns where the LLM sends its requests.
func (l *LLM) Endpoint() Endpoint { return l.ep }

// Features returns the model's resolved capabilities.
func (l *LLM) Features() Features { return l.features }

// UsageID returns the config's usage id, the key of its metrics.
func (l *LLM) UsageID() string { return l.cfg.UsageID }

// Metrics returns a copy of the metrics accumulated so far.
func (l *LLM) Metrics() Metrics {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.metrics.Clone()
}

// RestoreMetrics replaces the accumulated metrics, e.g. with those
// persisted by a conversation being resumed.
func (l *LLM) RestoreMetrics(m Metrics) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.metrics = m.Clone()
	if l.metrics.enc == nil { // else shared with m's copies: the cache compares entries, under its lock
		l.metrics.enc = &metricsEnc{}
	}
}

// Completion sends messages and the tools the model may call and returns
// the assistant's reply. With opts.OnDelta set (and opts.NoStream unset)
// the reply is streamed to OnDelta as it arrives. Transient failures are
// retried as the config says; the error after the last attempt matches one
// of the Err* kinds. With native tool calling off, an invalid textual call
// yields a *FunctionCallError whose message is meant for the model.
//
// With a fallback_strategy, a call that still fails with a transient error
// after its retries is tried on each fallback profile in turn.
func (l *LLM) Completion(ctx context.Context, messages []event.Message, tools []ToolSpec, opts *CallOptions) (*Response, error) {
	resp, err := l.completion(ctx, messages, tools, opts)
	if err != nil && l.cfg.FallbackStrategy != nil && retryable(err) && ctx.Err() == nil {
		return l.fallback(ctx, messages, tools, opts, err)
	}
	return resp, err
}

func (l *LLM) completion(ctx context.Context, messages []event.Message, tools []ToolSpec, opts *CallOptions) (*Response, error) {
	if opts == nil {
		opts = &CallOptions{}
	}
	if len(messages) == 0 {
		return nil, fmt.Errorf("%w: no messages to send", ErrBadRequest)
	}
	cfg := l.cfg
	if l.wantsInlineImages() {
		var err error
		if messages, err = l.inlineImages(ctx, messages); err != nil {
			return nil, err
		}
	}
	original := messages
	cached := cfg.CachingPrompt && l.features.PromptCache
	if cached {
		messages = markCachePoints(messages)
	}
	req := &Request{
		Endpoint:        l.ep,
		Config:          &cfg,
		Features:        l.features,
		Messages:        messages,
		Tools:           tools,
		MaxOutputTokens: EffectiveMaxOutputTokens(&cfg, l.features),
		ConversationID:  opts.ConversationID,
		HTTPClient:      l.hc,
		Cache:           &l.cache,
	}
	if l.features.StopWords && !cfg.DisableStopWord {
		req.Stop = slices.Clone(opts.Stop)
	}
	if opts.OnDelta != nil && !opts.NoStream {
		req.OnDelta = opts.OnDelta
	}
	mock, err := l.prepareMockTools(req)
	if err != nil {
		return nil, err
	}

	ctx, span := telemetry.StartOp(ctx, telemetry.KindModelCall, "chat", cfg.Model)
	var tr *callTrace
	if span.Recording() {
		tr = &callTrace{}
		span.SetString(telemetry.AttrOperation, "chat")
		span.SetString(telemetry.AttrSystem, l.ep.Provider)
		span.SetString(telemetry.AttrRequestModel, cfg.Model)
		if opts.ConversationID != "" {
			span.SetString(telemetry.AttrConversationID, opts.ConversationID)
		}
	}
	start := time.Now()
	resp, err := l.send(ctx, req, tr)
	if err != nil && cached && mock == nil && cacheTooSmall(err) {
		// Vertex refuses cache markers on a prefix shorter than its
		// minimum; the same call without them goes through.
		req.Messages = original
		resp, err = l.send(ctx, req, tr)
	}
	if err != nil {
		l.logCompletion(req, nil, err, time.Since(start))
		if tr != nil {
			span.SetInt(telemetry.AttrRetries, int64(tr.retries))
			span.End(err)
		}
		return nil, err
	}
	l.record(resp)
	if tr != nil {
		tr.end(span, resp, start)
	}
	l.logCompletion(req, resp, nil, resp.Latency)
	if mock != nil {
		return mock.parse(resp)
	}
	return resp, nil
}

// callTrace is what a traced call learns while sending: retries and when
// the first streamed token came.
type callTrace struct {
	retries int
	first   time.Time
}

// end sets the attributes of a successful call and ends its span.
func (tr *callTrace) end(span telemetry.Span, resp *Response, start time.Time) {
	u := &resp.Usage
	span.SetString(telemetry.AttrResponseModel, resp.Model)
	span.SetString(telemetry.AttrResponseID, resp.ID)
	span.SetInt(telemetry.AttrInputTokens, int64(u.PromptTokens))
	span.SetInt(telemetry.AttrOutputTokens, int64(u.CompletionTokens))
	span.SetInt(telemetry.AttrCacheRead, int64(u.CacheReadTokens))
	span.SetInt(telemetry.AttrCacheWrite, int64(u.CacheWriteTokens))
	span.SetInt(telemetry.AttrReasoning, int64(u.ReasoningTokens))
	span.SetFloat(telemetry.AttrCost, resp.Cost)
	span.SetInt(telemetry.AttrRetries, int64(tr.retries))
	if !tr.first.IsZero() {
		span.SetFloat(telemetry.AttrTimeToFirst, tr.first.Sub(start).Seconds())
	}
	span.End(nil)
}

// send calls the provider, retrying transient failures. A non-nil tr
// counts the retries and notes the first streamed delta.
func (l *LLM) send(ctx context.Context, req *Request, tr *callTrace) (*Response, error) {
	attempts := max(l.cfg.NumRetries, 1)
	maxWait := seconds(l.cfg.RetryMaxWait)
	onDelta := req.OnDelta
	restart := false // the last attempt stalled after streaming
	for attempt := 1; ; attempt++ {
		if restart {
			if err := onDelta(Delta{Restart: true}); err != nil {
				return nil, err
			}
		}
		streamed := false
		if f := req.OnDelta; f != nil {
			r := *req
			r.OnDelta = func(d Delta) error {
				if !streamed && tr != nil && tr.first.IsZero() {
					tr.first = time.Now()
				}
				streamed = true
				return f(d)
			}
			req = &r
		}
		start := time.Now()
		resp, err := l.attempt(ctx, req)
		if err == nil {
			resp.Latency = time.Since(start)
			return resp, nil
		}
		if ctx.Err() != nil {
			return nil, fmt.Errorf("llm: %w", context.Cause(ctx))
		}
		if Unreachable(err) {
			return nil, fmt.Errorf("%w (%s)", err, unreachableHint(err))
		}
		// A reply already streamed in part cannot be taken back, so it is
		// not retried: the provider's answer (an error event after the
		// text, say) stands. A stream that stalled is the exception, as in
		// the reference: nothing was answered, and a stall mid-reply is
		// what stream_idle_timeout is for. The caller is told to drop what
		// it has (Delta.Restart); the retry's reply is the one returned.
		stalled := errors.Is(err, errStreamIdle)
		if attempt >= attempts || !retryable(err) || streamed && !stalled || l.retry != nil && !l.retry(err) {
			if ra, ok := RetryAfter(err); ok && ra > maxWait && attempt > 1 {
				return nil, fmt.Errorf("%w (gave up after %d attempts: the provider asked to wait %v, more than retry_max_wait %v)", err, attempt, ra, maxWait)
			}
			return nil, err
		}
		// Every wait, the provider's Retry-After included, is capped by
		// retry_max_wait: a hostile or confused server must not stall a
		// run for hours.
		wait := l.backoff(attempt)
		attrs := []slog.Attr{slog.String("model", l.cfg.Model), slog.Int("attempt", attempt)}
		if ra, ok := RetryAfter(err); ok && ra > wait {
			wait = ra
			if ra > maxWait {
				wait = maxWait
				attrs = append(attrs, slog.Duration("retry_after", ra), slog.String("capped_by", "retry_max_wait"))
			}
		}
		if l.onRetry != nil {
			l.onRetry(attempt, wait, err)
		}
		if tr != nil {
			tr.retries++
		}
		attrs = append(attrs, slog.Duration("wait", wait), slog.Any("error", err))
		l.log.LogAttrs(ctx, slog.LevelWarn, "llm call failed, retrying", attrs...)
		if errors.Is(err, ErrNoResponse) && req.Config.Temperature != nil && *req.Config.Temperature == 0 {
			// The reference's remedy for empty replies: a little randomness.
			c := *req.Config
			one := 1.0
			c.Temperature = &one
			r := *req
			r.Config = &c
			req = &r
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("llm: %w (last error: %w)", context.Cause(ctx), err)
		case <-t.C:
		}
		restart = streamed && stalled
	}
}

// attempt makes one provider call under the per-call timeout and turns
// transport failures into APIErrors.
func (l *LLM) attempt(ctx context.Context, req *Request) (*Response, error) {
	actx, cancel := ctx, context.CancelFunc(func() {})
	if d := l.cfg.timeout(); d > 0 {
		actx, cancel = context.WithTimeout(ctx, d)
	}
	defer cancel()
	actx, cancelIdle := context.WithCancelCause(actx)
	defer cancelIdle(nil)
	resp, err := l.provider.Complete(actx, withIdleTimeout(req, cancelIdle))
	if err != nil {
		if ctx.Err() == nil && context.Cause(actx) == errStreamIdle {
			return nil, &APIError{Kind: ErrTimeout, Message: fmt.Sprintf("the stream sent nothing for %v (stream_idle_timeout)", seconds(*req.Config.StreamIdleTimeout)), Err: errors.Join(errStreamIdle, err)}
		}
		return nil, classifyTransport(ctx, err)
	}
	if resp == nil {
		return nil, &APIError{Kind: ErrNoResponse}
	}
	return resp, nil
}

// classifyTransport gives errors that did not come from an HTTP answer a
// kind: timeouts and dropped connections are retryable, anything else (a
// conversion failure, say) is returned as it is.
func classifyTransport(parent context.Context, err error) error {
	var api *APIError
	if errors.As(err, &api) {
		return err
	}
	if parent.Err() != nil {
		return err
	}
	var ne net.Error
	switch {
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		return &APIError{Kind: ErrTimeout, Err: err}
	case errors.As(err, &ne), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, net.ErrClosed):
		return &APIError{Kind: ErrConnection, Err: err}
	}
	return err
}

// backoff is the wait before attempt n+1: RetryMultiplier·2^(n-1) seconds
// with up to 25% random jitter so many clients do not retry in step,
// clamped to [RetryMinWait, RetryMaxWait] (jitter included).
func (l *LLM) backoff(n int) time.Duration {
	c := l.cfg
	s := c.RetryMultiplier * math.Pow(2, float64(n-1))
	s *= 1 + 0.25*rand.Float64()
	return seconds(min(max(s, c.RetryMinWait), c.RetryMaxWait))
}

// seconds converts a configured number of seconds to a duration; negative
// and NaN values mean none.
func seconds(s float64) time.Duration {
	if !(s > 0) {
		return 0
	}
	if s >= math.MaxInt64/float64(time.Second) {
		return math.MaxInt64
	}
	return time.Duration(s * float64(time.Second))
}

// record fills the LLM's part of the response (usage bookkeeping, cost) and
// adds it to the metrics.
func (l *LLM) record(resp *Response) {
	u := &resp.Usage
	u.Model = l.cfg.Model
	u.ContextWindow = l.features.ContextWindow
	u.PerTurnToken = u.PromptTokens + u.CompletionTokens
	u.ResponseID = resp.ID
	if resp.Cost == 0 {
		if p, ok := PriceOf(&l.cfg); ok {
			resp.Cost = p.Cost(*u)
		}
	}
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	l.metrics.AddLatency(l.cfg.Model, resp.Latency, resp.ID)
	l.metrics.AddCost(l.cfg.Model, resp.Cost, now)
	if u.PromptTokens > 0 || u.CompletionTokens > 0 {
		l.metrics.AddTokenUsage(*u)
	}
}

// markCachePoints returns a copy of messages with prompt-cache breakpoints
// where the reference puts them: after the first block of the system
// message (the static part of the prompt) and after the last block of the
// last user or tool message (the end of the growing history).
func markCachePoints(messages []event.Message) []event.Message {
	out := slices.Clone(messages)
	mark := func(i, block int) {
		m := out[i]
		m.Content = slices.Clone(m.Content)
		m.Content[block].CachePrompt = true
		out[i] = m
	}
	if len(out) > 0 && out[0].Role == event.RoleSystem && len(out[0].Content) > 0 {
		mark(0, 0)
	}
	for i := len(out) - 1; i >= 0; i-- {
		if r := out[i].Role; r == event.RoleUser || r == event.RoleTool {
			if n := len(out[i].Content); n > 0 {
				mark(i, n-1)
			}
			break
		}
	}
	return out
}

// cacheTooSmall reports whether the provider refused a prompt-cache marker
// because the cached prefix is below its minimum size.
func cacheTooSmall(err error) bool {
	var e *APIError
	return errors.As(err, &e) && e.Kind == ErrBadRequest && matches(e.Message, "minimum token count to start caching")
}
