package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/tool"
)

// keepArgumentsOnce replaces the large arguments of a's call by the ones
// its action stands for (event.ActionArguments), so that the stores keep
// them once, in the action (event.CompactArguments). Only when they say
// the same: every argument the model gave, with the same value.
func keepArgumentsOnce(a *event.ActionEvent) {
	args, err := event.ActionArguments(a)
	if err != nil {
		return
	}
	var given, derived map[string]any
	if json.Unmarshal([]byte(a.ToolCall.Arguments), &given) != nil || json.Unmarshal([]byte(args), &derived) != nil {
		return
	}
	for k, v := range given {
		// The model's risk and summary are the event's, and kept there
		// when the agent honours them.
		if k == tool.MetaSecurityRisk || k == tool.MetaSummary {
			continue
		}
		if !reflect.DeepEqual(derived[k], v) {
			return
		}
	}
	a.ToolCall.Arguments = args
}

// MaxToolArgumentBytes bounds the arguments of one tool call. A larger
// call is answered with an error the model sees, and only the size of its
// arguments is stored.
const MaxToolArgumentBytes = 1 << 20

// ErrNoUserMessage is returned by a step of a conversation that holds no
// user message: there is nothing to ask the model yet.
var ErrNoUserMessage = errors.New("agent: the conversation has no user message: send the task first")

// nudgeText is sent to the model, as an environment message, when it
// replied with neither text nor a tool call.
const nudgeText = "Your last reply had no message and no tool call. Continue the task with a tool call, or reply with a message if you are done or need the user."

// msgCache keeps the messages of a prefix of the view, so that a step
// projects only the events added since the previous one. Only Step uses
// it (Ask projects on its own, as it may run concurrently).
type msgCache struct {
	events []event.Event   // the prefix projected
	msgs   []event.Message // its messages
	// ordered is where checking the order of tool results resumes: msgs
	// before it passed (see toolResultsInOrder).
	ordered int
}

// messages returns the model's input for view, reusing the projection of
// the part of view seen by the previous step.
func (r *runner) messages(view []event.Event) []event.Message {
	c := &r.msgs
	// The session's view only grows, or is replaced when condensed: the
	// same array holds the same prefix, which need not be compared.
	if len(c.events) > len(view) || !sameArray(c.events, view[:len(c.events)]) && !slices.Equal(c.events, view[:len(c.events)]) {
		*c = msgCache{} // the view was condensed
	}
	// Only a prefix ending where no later event can join the last message
	// is cached: later actions of one response join their batch, and
	// consecutive user messages are merged.
	k := len(view)
	for k > len(c.events) && !closesMessage(view[k-1]) {
		k--
	}
	if k > len(c.events) {
		c.msgs = append(c.msgs, event.LLMMessages(view[len(c.events):k])...)
		c.events = view[:k:k]
	}
	msgs := append(slices.Clip(c.msgs), event.LLMMessages(view[k:])...)
	if !toolResultsInOrder(msgs, c.ordered) {
		return orderToolResults(msgs)
	}
	// The results of every call before the last assistant message with
	// calls in c.msgs are in place before it: they stay so.
	for i := len(c.msgs) - 1; i > c.ordered; i-- {
		if c.msgs[i].Role == event.RoleAssistant && len(c.msgs[i].ToolCalls) > 0 {
			c.ordered = i
			break
		}
	}
	return msgs
}

// sameArray reports whether a and b are the same elements of one array.
func sameArray[S ~[]E, E any](a, b S) bool {
	return len(a) == len(b) && (len(a) == 0 || &a[0] == &b[0])
}

// closesMessage reports whether no event after e can be joined to the
// message e ends.
func closesMessage(e event.Event) bool {
	switch e := e.(type) {
	case *event.ObservationEvent, *event.AgentErrorEvent, *event.UserRejectObservation, *event.SystemPromptEvent:
		return true
	case *event.MessageEvent:
		return e.LLMMessage.Role != event.RoleUser
	}
	return false
}

// Step implements conversation.Runner.
func (r *runner) Step(ctx context.Context) error {
	pending, err := r.sess.Pending()
	if err != nil {
		return err
	}
	if len(pending) > 0 {
		return r.execute(ctx, pending, nil)
	}
	if skip, err := r.skipBlockedMessage(); skip || err != nil {
		return err
	}
	view, err := r.sess.View()
	if err != nil {
		return err
	}
	if r.cond != nil {
		// The session's view has condensations applied but drops
		// requests: the flag tells the condenser it must act.
		cview := &condenser.View{Events: view, ConversationID: r.sess.ID()}
		if r.condRequests {
			if cview.UnhandledRequest, err = r.sess.State().CondensationPending(); err != nil {
				return err
			}
		}
		cctx, span := telemetry.Start(ctx, telemetry.KindCondensation, "condense")
		cond, err := r.cond.Condense(cctx, cview, r.model)
		if span.Recording() {
			span.SetString(telemetry.AttrCondensed, strconv.FormatBool(cond != nil))
			span.End(err)
		}
		if err != nil {
			return fmt.Errorf("agent: condense: %w", err)
		}
		if cond != nil {
			return r.sess.Emit(cond)
		}
	}
	opts := &llm.CallOptions{ConversationID: r.sess.ID()}
	r.itemID = ""
	if r.a.LLM.Stream {
		// Token deltas reach live subscribers (a terminal, a WebSocket)
		// as they arrive; the reply is stored whole when it is complete.
		opts.OnDelta = r.publishDelta
		r.itemID, r.streamAttempt = event.NewID(), 1
	}
	msgs, blind := r.withImageRefs(r.messages(view))
	if !slices.ContainsFunc(msgs, func(m event.Message) bool { return m.Role == event.RoleUser }) {
		// A conversation created without its task (a process killed before
		// storing it): the model would answer the system prompt alone.
		return ErrNoUserMessage
	}
	if blind {
		return r.cannotSee(ctx)
	}
	resp, err := r.model.Completion(ctx, msgs, r.specs, opts)
	// The call's cost is saved before anything is made of its reply.
	if serr := r.saveStats(); serr != nil {
		if err == nil {
			return serr
		}
		r.sess.Logger().Warn("agent: saving the LLM metrics", "err", serr)
	}
	if err != nil {
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if errors.Is(err, llm.ErrFunctionCall) || errors.Is(err, llm.ErrReplyTooLarge) || errors.Is(err, llm.ErrContentPolicy) {
			// The model is told and tries again, but not forever: a model
			// that only ever answers this way would run to the step limit.
			if r.unusable++; r.unusable >= maxUnusable {
				r.unusable = 0
				return fmt.Errorf("agent: %d replies in a row could not be used; the last: %w", maxUnusable, err)
			}
		}
		switch {
		case r.condRequests && (errors.Is(err, llm.ErrContextWindowExceeded) || errors.Is(err, llm.ErrMalformedHistory)):
			// The condenser shortens the view at the next step.
			r.sess.Logger().Warn("agent: asking for a condensation", "err", err)
			return r.sess.Emit(&event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)})
		case errors.Is(err, llm.ErrFunctionCall):
			// The model wrote a tool call we could not parse: tell it.
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(err.Error())})
		case errors.Is(err, llm.ErrReplyTooLarge):
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(
				"Your last reply was dropped: " + err.Error() + ". Keep each reply and each tool call's arguments small; write large content to files in several steps.")})
		case errors.Is(err, llm.ErrContentPolicy):
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(
				"Your last reply was blocked by the provider's content policy. Rephrase it and continue.")})
		}
		return fmt.Errorf("agent: %w", err) // err says "llm: …" itself
	}
	r.unusable = 0
	msg := resp.Message
	switch {
	case len(msg.ToolCalls) > 0:
		return r.toolCalls(ctx, resp)
	case strings.TrimSpace(event.TextOf(msg.Content)) != "":
		err := r.sess.Emit(&event.MessageEvent{Base: r.replyBase(), LLMMessage: msg, LLMResponseID: resp.ID,
			CriticResult: r.criticResult(ctx, true)})
		if err != nil {
			return err
		}
		return r.finish(ctx)
	default:
		// Reasoning only, or nothing: keep what there is and nudge.
		return r.sess.EmitAll(
			&event.MessageEvent{Base: r.replyBase(), LLMMessage: msg, LLMResponseID: resp.ID},
			&event.MessageEvent{Base: event.NewBase(event.SourceEnvironment), LLMMessage: event.UserMessage(nudgeText)},
		)
	}
}

// maxUnusable is how many unusable replies in a row (see runner.unusable)
// end a run with an error.
const maxUnusable = 3

// finish ends the run: status finished, metrics saved.
//
// Stop hooks run first: one that blocks keeps the agent running, told why
// in a user-role message whose source is the environment, as the
// reference's (a reference client shows it as the environment's, not as
// something the user typed).
func (r *runner) finish(ctx context.Context) error { return r.end(ctx, true) }

// end is finish, with the critic's refinement only if judge is set.
func (r *runner) end(ctx context.Context, judge bool) error {
	if r.hooks != nil {
		out := r.hooks.Stop(ctx, "agent_finished")
		if err := r.emitHookEvents(out); err != nil {
			return err
		}
		if out.Blocked {
			return r.sess.Emit(&event.MessageEvent{Base: event.NewBase(event.SourceEnvironment), LLMMessage: event.UserMessage(out.StopFeedback())})
		}
	}
	// A critic below its threshold gives the agent one more iteration.
	if judge {
		if m, err := r.refinement(ctx); err != nil || m != nil {
			if err != nil {
				return err
			}
			return r.sess.Emit(m)
		}
	}
	return errors.Join(r.sess.SetStatus(conversation.StatusFinished), r.saveStats())
}

// toolCalls turns a reply's tool calls into ActionEvents, then asks for
// confirmation or executes them.
//
// Unlike the reference, every ActionEvent of the reply is emitted first,
// and the errors of invalid calls are emitted with the results, in call
// order: the model's reply stays one assistant message followed by its
// results. Calls after a valid finish call are dropped before any event
// is written (the reference writes them and leaves them pending).
func (r *runner) toolCalls(ctx context.Context, resp *llm.Response) error {
	msg := resp.Message
	r.uniqueCallIDs(msg.ToolCalls)
	honourRisk := r.analyzer() != nil
	var (
		actions []event.Event
		valid   []*event.ActionEvent
		errs    = make(map[string]*event.AgentErrorEvent)
	)
	for i, tc := range msg.ToolCalls {
		base := event.NewBase(event.SourceAgent)
		if i == 0 {
			base = r.replyBase()
		}
		ae := &event.ActionEvent{
			Base:          base,
			ToolName:      tc.Name,
			ToolCallID:    tc.ID,
			ToolCall:      tc,
			LLMResponseID: resp.ID,
			SecurityRisk:  event.RiskUnknown,
			Thought:       event.List[event.Content]{},
		}
		if i == 0 {
			for _, c := range msg.Content {
				if c.Type == event.ContentText {
					ae.Thought = append(ae.Thought, c)
				}
			}
			ae.ReasoningContent = msg.ReasoningContent
			ae.ThinkingBlocks = msg.ThinkingBlocks
			ae.ResponsesItem = msg.ResponsesItem
		}
		if n := len(tc.Arguments); n > MaxToolArgumentBytes {
			// Stored and sent back with every later request, such an
			// argument would cost its size many times over: only its
			// size is kept.
			b, _ := event.MarshalJSON(map[string]any{"_openhands_oversized_arguments": true, "bytes": n})
			ae.ToolCall.Arguments = string(b)
			actions = append(actions, ae)
			errs[ae.ID] = &event.AgentErrorEvent{
				Base:     event.NewBase(event.SourceAgent),
				ToolName: tc.Name, ToolCallID: tc.ID,
				Error: fmt.Sprintf("The arguments of this call are %d bytes, more than the limit of %d bytes, and were dropped. "+
					"Write large content in several smaller calls (for example create the file, then append to it).", n, MaxToolArgumentBytes),
				Classification: event.AgentActionError,
			}
			continue
		}
		call, err := tool.PrepareCall(r.tools, tc.Name, tc.Arguments, honourRisk)
		if err != nil {
			var ce *tool.CallError
			name := tc.Name
			if errors.As(err, &ce) {
				name = ce.ToolName
				if ce.Unparseable {
					b, _ := event.MarshalJSON(map[string]any{"_openhands_malformed_tool_call": true, "error": ce.Err.Error()})
					ae.ToolCall.Arguments = string(b)
				}
			}
			ae.ToolName = name
			actions = append(actions, ae)
			errs[ae.ID] = &event.AgentErrorEvent{
				Base:     event.NewBase(event.SourceAgent),
				ToolName: name, ToolCallID: tc.ID, Error: err.Error(),
				Classification: event.AgentActionError,
			}
			continue
		}
		ae.ToolName, ae.Action = call.Name, call.Action
		ae.ToolCall.Name, ae.ToolCall.Arguments = call.Name, call.Arguments
		ae.SecurityRisk, ae.Summary = call.SecurityRisk, call.Summary
		ae.CriticResult = r.criticResult(ctx, call.Name == FinishToolName)
		if len(ae.ToolCall.Arguments) >= event.LargeArgumentBytes {
			keepArgumentsOnce(ae)
		}
		actions = append(actions, ae)
		valid = append(valid, ae)
		if call.Name == FinishToolName {
			if n := len(msg.ToolCalls) - i - 1; n > 0 {
				r.sess.Logger().Info("dropped tool calls after finish", "count", n)
			}
			break
		}
	}
	// The analyzer's ratings, if any, are recorded just before the
	// actions, so the actions of a reply stay together and the pending
	// ones last.
	decided := make(map[string]event.Event, len(errs))
	for id, e := range errs {
		decided[id] = e
	}
	// The PreToolUse hooks judge the actions as they are stored, their
	// runs stored before the actions, as in the reference: also those
	// that then wait for confirmation.
	actions, err := r.hookActions(ctx, actions, decided)
	if err != nil {
		return err
	}
	confirm, rec := r.needsConfirmation(ctx, valid, decided)
	if rec != nil {
		actions = append([]event.Event{rec}, actions...)
	}
	if err := r.sess.EmitAll(actions...); err != nil {
		return err
	}
	if confirm {
		// The invalid calls and those a hook blocked are answered now;
		// the others wait.
		var out []event.Event
		for _, a := range actions {
			if e, ok := decided[a.EventBase().ID]; ok {
				out = append(out, e)
			}
		}
		if len(out) > 0 {
			if err := r.sess.EmitAll(out...); err != nil {
				return err
			}
		}
		return r.sess.SetStatus(conversation.StatusWaitingForConfirmation)
	}
	batch := make([]*event.ActionEvent, 0, len(actions))
	for _, a := range actions {
		if a, ok := a.(*event.ActionEvent); ok {
			batch = append(batch, a)
		}
	}
	return r.execute(ctx, batch, decided)
}

// analyzer returns the conversation's security analyzer bound to its
// workspace and secret names (see security.Binder), or nil.
func (r *runner) analyzer() security.Analyzer {
	an := r.sess.Fields().SecurityAnalyzer
	if an == nil {
		return nil
	}
	b := security.Binding{WorkDir: r.sess.WorkingDir()}
	if r.sess.Secrets() != nil {
		b.SecretNames = r.sess.Secrets().Names()
	}
	return security.Bind(an, b)
}

// needsConfirmation applies the confirmation policy to the valid actions
// of a reply that are not decided (a hook blocked none of them). When an
// analyzer rated them, it also returns the SecurityAnalysisEvent
// recording the ratings of all the valid actions.
//
// The reference asks to confirm an action a hook blocked too, and
// answers it with the hook's rejection once confirmed; here it is
// answered at once and asks nothing.
func (r *runner) needsConfirmation(ctx context.Context, valid []*event.ActionEvent, decided map[string]event.Event) (bool, *event.SecurityAnalysisEvent) {
	if len(valid) == 0 {
		return false, nil
	}
	if len(valid) == 1 && (valid[0].ToolName == FinishToolName || valid[0].ToolName == "think") {
		return false, nil
	}
	policy := r.sess.Fields().Policy()
	risks := make([]event.SecurityRisk, len(valid))
	for i := range risks {
		risks[i] = event.RiskUnknown
	}
	an := r.analyzer()
	var failed *string
	if an != nil {
		got, err := security.Rate(ctx, an, valid)
		if err != nil || len(got) != len(valid) {
			r.sess.Logger().Warn("security analyzer failed; treating actions as high risk", "err", err)
			msg := fmt.Sprintf("the analyzer rated %d of %d actions", len(got), len(valid))
			if err != nil {
				msg = err.Error()
			}
			failed = &msg
			for i := range risks {
				risks[i] = event.RiskHigh
			}
		} else {
			copy(risks, got)
		}
	}
	confirm := false
	for i, a := range valid {
		confirm = confirm || decided[a.ID] == nil && policy.ShouldConfirm(risks[i])
	}
	if an == nil || !r.sess.RecordsSecurityAnalysis() {
		return confirm, nil
	}
	rec := &event.SecurityAnalysisEvent{
		Base:  event.NewBase(event.SourceEnvironment),
		Risks: make(event.ActionRisks, len(valid)),
	}
	rec.Analyzer, _ = event.KindOf(r.sess.Fields().SecurityAnalyzer)
	rec.Policy, _ = event.KindOf(policy)
	for i, a := range valid {
		rec.Risks[i] = event.ActionRisk{ActionID: a.ID, Risk: risks[i]}
		if failed != nil {
			detail, err := event.MarshalJSON(map[string]string{"error": *failed})
			if err != nil {
				return confirm, nil
			}
			rec.Details = append(rec.Details, event.ActionDetail{ActionID: a.ID, Detail: detail})
		}
	}
	return confirm, rec
}

// replyBase is the base of the first event stored from a model reply: it
// takes the id its streamed deltas announced (once).
func (r *runner) replyBase() event.Base {
	b := event.NewBase(event.SourceAgent)
	if r.itemID != "" {
		b.ID, r.itemID = r.itemID, ""
	}
	return b
}

// publishDelta publishes the text and reasoning of a streamed fragment as
// a StreamingDeltaEvent; tool call fragments are not published.
func (r *runner) publishDelta(d llm.Delta) error {
	if d.Restart {
		r.streamAttempt++
	}
	if d.Text == "" && d.Reasoning == "" {
		return nil
	}
	e := &event.StreamingDeltaEvent{Base: event.NewBase(event.SourceAgent), ItemID: r.itemID, Attempt: r.streamAttempt}
	if d.Text != "" {
		e.Content = &d.Text
	}
	if d.Reasoning != "" {
		e.ReasoningContent = &d.Reasoning
	}
	r.sess.Publish(e)
	return nil
}
