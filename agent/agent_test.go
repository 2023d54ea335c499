package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	_ "github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

func TestTextReplyFinishes(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Text: "Hello there."})
	c, rec := newConv(t, a, nil)
	if err := c.SendMessage(ctx, event.UserMessage("hi")); err != nil {
		t.Fatal(err)
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := c.Status(); got != conversation.StatusFinished {
		t.Fatalf("status %s", got)
	}
	log := logEvents(t, c)
	want := []string{"SystemPromptEvent", "MessageEvent", "MessageEvent"}
	if got := kindsOf(log); !slices.Equal(got, want) {
		t.Fatalf("log %v, want %v", got, want)
	}
	// Callbacks saw exactly the log, in order.
	if got := rec.kinds(); !slices.Equal(got, want) {
		t.Fatalf("callbacks %v", got)
	}
	for i, e := range rec.events {
		if e.EventBase().ID != log[i].EventBase().ID {
			t.Fatalf("callback %d is %s, log has %s", i, e.EventBase().ID, log[i].EventBase().ID)
		}
	}
	sp := log[0].(*event.SystemPromptEvent)
	var names []string
	for _, d := range sp.Tools {
		names = append(names, tool.NameFromKind(d.Kind))
	}
	if !slices.Equal(names, []string{"finish", "think"}) {
		t.Fatalf("system prompt tools %v", names)
	}
	reqs := p.Requests()
	if len(reqs) != 1 || len(reqs[0].Tools) != 2 || reqs[0].Messages[0].Role != event.RoleSystem {
		t.Fatalf("request: %+v", reqs)
	}
	if m := log[2].(*event.MessageEvent); m.Source != event.SourceAgent || event.TextOf(m.LLMMessage.Content) != "Hello there." {
		t.Fatalf("reply %+v", m)
	}
}

func TestToolCallsRunInParallelResultsInOrder(t *testing.T) {
	a, p := newAgent(t,
		llmtest.Reply{Text: "Waiting three times.", ToolCalls: []llmtest.ToolCall{
			{ID: "c1", Name: "wait", Arguments: `{"name":"a","sleep_ms":150}`},
			{ID: "c2", Name: "wait", Arguments: `{"name":"b","sleep_ms":10}`},
			{ID: "c3", Name: "wait", Arguments: `{"name":"c","sleep_ms":60}`},
		}},
		llmtest.Reply{Text: "Done."},
	)
	w := &waitTool{}
	a = withTools(a, noLock{w.tool()})
	a.ToolConcurrencyLimit = 3
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("wait"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if w.maxRunning.Load() < 2 {
		t.Fatalf("calls did not overlap (max %d at once)", w.maxRunning.Load())
	}
	log := logEvents(t, c)
	var order []string
	for i, e := range log {
		switch e := e.(type) {
		case *event.ActionEvent:
			if i > 0 && e.ToolCallID != "c1" && len(e.Thought) != 0 {
				t.Fatalf("thought on a later action: %+v", e)
			}
		case *event.ObservationEvent:
			order = append(order, e.ToolCallID)
		}
	}
	if !slices.Equal(order, []string{"c1", "c2", "c3"}) {
		t.Fatalf("observations in order %v", order)
	}
	// The second request shows one assistant message with three calls,
	// each followed by its result.
	msgs := p.Requests()[1].Messages
	var roles []string
	for _, m := range msgs {
		roles = append(roles, m.Role)
	}
	if !slices.Equal(roles, []string{"system", "user", "assistant", "tool", "tool", "tool"}) {
		t.Fatalf("roles %v", roles)
	}
	if n := len(msgs[2].ToolCalls); n != 3 || event.TextOf(msgs[2].Content) != "Waiting three times." {
		t.Fatalf("assistant message %+v", msgs[2])
	}
}

// noLock declares that its tool's actions share nothing, so parallel
// calls do not wait for each other.
type noLock struct{ tool.Tool }

func (noLock) Resources(event.Action) []string { return nil }

func TestSameToolSerialisedByDefault(t *testing.T) {
	a, _ := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "wait", Arguments: `{"name":"a","sleep_ms":30}`},
			{Name: "wait", Arguments: `{"name":"b","sleep_ms":30}`},
		}},
		llmtest.Reply{Text: "Done."},
	)
	w := &waitTool{}
	a = withTools(a, w.tool())
	a.ToolConcurrencyLimit = 4
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("wait"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if got := w.maxRunning.Load(); got != 1 {
		t.Fatalf("%d calls of one tool ran at once; the tool lock allows 1", got)
	}
}

func TestBadCallsAreErrorsTheModelSees(t *testing.T) {
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "bad", Name: "think", Arguments: `{"thought": oops`},
			{ID: "ok", Name: "think", Arguments: `{"thought":"fine"}`},
			{ID: "unknown", Name: "teleport", Arguments: `{}`},
		}},
		llmtest.Reply{Text: "Recovered."},
	)
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	want := []string{"SystemPromptEvent", "MessageEvent", "ActionEvent", "ActionEvent", "ActionEvent",
		"AgentErrorEvent", "ObservationEvent", "AgentErrorEvent", "MessageEvent"}
	if got := kindsOf(log); !slices.Equal(got, want) {
		t.Fatalf("log %v\nwant %v", got, want)
	}
	if a := log[2].(*event.ActionEvent); a.Action != nil || !strings.Contains(a.ToolCall.Arguments, "_openhands_malformed_tool_call") {
		t.Fatalf("bad call recorded as %+v", a)
	}
	if e := log[5].(*event.AgentErrorEvent); e.ToolCallID != "bad" || !strings.Contains(e.Error, "Error validating tool 'think'") {
		t.Fatalf("error %+v", e)
	}
	if e := log[7].(*event.AgentErrorEvent); e.ToolCallID != "unknown" || !strings.Contains(e.Error, "Tool 'teleport' not found") {
		t.Fatalf("error %+v", e)
	}
	msgs := p.Requests()[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != event.RoleTool || last.ToolCallID != "unknown" || !strings.Contains(event.TextOf(last.Content), "not found") {
		t.Fatalf("model did not see the error: %+v", last)
	}
}

func TestLLMServerErrorIsRetried(t *testing.T) {
	a, p := newAgent(t, llmtest.Fail(500, "boom"), llmtest.Reply{Text: "ok"})
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished || p.Remaining() != 0 {
		t.Fatalf("status %s, %d replies left", c.Status(), p.Remaining())
	}
}

func TestLLMFailureEndsRunInError(t *testing.T) {
	a, _ := newAgent(t, llmtest.Fail(401, "bad key"))
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	err := c.Run(ctx)
	var re *conversation.RunError
	if !errors.As(err, &re) || re.Code != "LLMAuthenticationError" {
		t.Fatalf("Run: %v", err)
	}
	if c.Status() != conversation.StatusError {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	ce, ok := log[len(log)-1].(*event.ConversationErrorEvent)
	if !ok || ce.Code != "LLMAuthenticationError" || ce.Classification == nil || ce.Classification.Kind != event.ErrorKindAuth {
		t.Fatalf("last event %#v", log[len(log)-1])
	}
}

func TestMaxIterations(t *testing.T) {
	think := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"hmm"}`}}}
	a, _ := newAgent(t, think, think, think)
	c, _ := newConv(t, a, &conversation.LocalOptions{MaxIterations: 3, DisableStuckDetection: true})
	c.SendMessage(ctx, event.UserMessage("go"))
	err := c.Run(ctx)
	var re *conversation.RunError
	if !errors.As(err, &re) || re.Code != conversation.CodeMaxIterations {
		t.Fatalf("Run: %v", err)
	}
	log := logEvents(t, c)
	ce := log[len(log)-1].(*event.ConversationErrorEvent)
	if ce.Detail != "Agent reached maximum iterations limit (3)." || c.Status() != conversation.StatusError {
		t.Fatalf("%+v, status %s", ce, c.Status())
	}
}

func TestFinishEndsRunAndDropsLaterCalls(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: "think", Arguments: `{"thought":"last thought"}`},
		{Name: "finish", Arguments: `{"message":"all done"}`},
		{Name: "think", Arguments: `{"thought":"after"}`},
	}})
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished || p.Remaining() != 0 {
		t.Fatalf("status %s", c.Status())
	}
	want := []string{"SystemPromptEvent", "MessageEvent", "ActionEvent", "ActionEvent", "ObservationEvent", "ObservationEvent"}
	if got := kindsOf(logEvents(t, c)); !slices.Equal(got, want) {
		t.Fatalf("log %v", got)
	}
	pending, _ := c.State().ActiveBranch()
	if u := conversation.UnmatchedActions(pending); len(u) != 0 {
		t.Fatalf("pending actions left: %v", u)
	}
}

func TestEmptyReplyIsNudged(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{Reasoning: "thinking only"}, llmtest.Reply{Text: "ok"})
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := p.Requests()[1].Messages
	last := msgs[len(msgs)-1]
	if last.Role != event.RoleUser || !strings.Contains(event.TextOf(last.Content), "no tool call") {
		t.Fatalf("no nudge: %+v", last)
	}
}

func TestPauseInterruptsLongCommand(t *testing.T) {
	a, p := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
		{Name: "terminal", Arguments: `{"command":"sleep 30","timeout":60}`},
	}})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, nil)
	started := make(chan struct{}, 1)
	c.Subscribe(func(e event.Event) {
		if _, ok := e.(*event.ActionEvent); ok {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	})
	c.SendMessage(ctx, event.UserMessage("sleep"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-started
	time.Sleep(200 * time.Millisecond) // let the command start
	t0 := time.Now()
	if err := c.Pause(t.Context()); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Run did not return after Pause")
	}
	t.Logf("paused after %v", time.Since(t0))
	if c.Status() != conversation.StatusPaused {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	if _, ok := log[len(log)-1].(*event.PauseEvent); !ok {
		t.Fatalf("last event %T", log[len(log)-1])
	}
	switch r := log[len(log)-2].(type) {
	case *event.AgentErrorEvent, *event.ObservationEvent:
	default:
		t.Fatalf("interrupted action answered by %T", r)
	}
	// Run continues from there.
	p.Add(llmtest.Reply{Text: "Stopped sleeping."})
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusFinished {
		t.Fatalf("status %s", c.Status())
	}
}

// boomAction drives the "boom" test tool, which fails or panics.
type boomAction struct {
	Mode string `json:"mode" desc:"error or panic"`
}

func init() { event.RegisterKind[boomAction]("BoomAction") }

func boomTool() tool.Tool {
	return tool.New("boom", "Fail.", func(ctx context.Context, a *boomAction) (*waitObservation, error) {
		if a.Mode == "panic" {
			panic("kaboom")
		}
		return nil, errors.New("disk on fire")
	}, nil)
}

func TestToolFailuresAreErrorsTheModelSees(t *testing.T) {
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{ID: "e", Name: "boom", Arguments: `{"mode":"error"}`},
			{ID: "p", Name: "boom", Arguments: `{"mode":"panic"}`},
		}},
		llmtest.Reply{Text: "Both failed."},
	)
	a = withTools(a, boomTool())
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	log := logEvents(t, c)
	e1, ok1 := log[4].(*event.AgentErrorEvent)
	e2, ok2 := log[5].(*event.AgentErrorEvent)
	if !ok1 || !ok2 || e1.Error != "Error executing tool 'boom': disk on fire" || !strings.Contains(e2.Error, "kaboom") ||
		e2.Classification.Kind != event.ErrorKindInternal {
		t.Fatalf("results %#v %#v", log[4], log[5])
	}
	if p.Remaining() != 0 || c.Status() != conversation.StatusFinished {
		t.Fatalf("the run did not recover: %s", c.Status())
	}
}

func TestOnlyFirstActionCarriesThoughtAndReasoning(t *testing.T) {
	a, p := newAgent(t,
		llmtest.Reply{Text: "Two thoughts.", Reasoning: "I should think twice.", Signature: "sig", ToolCalls: []llmtest.ToolCall{
			{Name: "think", Arguments: `{"thought":"one"}`},
			{Name: "think", Arguments: `{"thought":"two"}`},
		}},
		llmtest.Reply{Text: "Done."},
	)
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	var acts []*event.ActionEvent
	for _, e := range logEvents(t, c) {
		if a, ok := e.(*event.ActionEvent); ok {
			acts = append(acts, a)
		}
	}
	if len(acts) != 2 || event.TextOf(acts[0].Thought) != "Two thoughts." || acts[0].ReasoningContent != "I should think twice." ||
		len(acts[0].ThinkingBlocks) != 1 || acts[0].Summary == "" {
		t.Fatalf("first action %+v", acts[0])
	}
	if len(acts[1].Thought) != 0 || acts[1].ReasoningContent != "" || len(acts[1].ThinkingBlocks) != 0 || acts[0].LLMResponseID != acts[1].LLMResponseID {
		t.Fatalf("second action %+v", acts[1])
	}
	// Replayed as one assistant message with the reasoning of the first.
	msgs := p.Requests()[1].Messages
	if m := msgs[2]; m.Role != event.RoleAssistant || len(m.ToolCalls) != 2 || m.ReasoningContent != "I should think twice." {
		t.Fatalf("replayed %+v", m)
	}
}
