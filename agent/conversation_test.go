package agent_test

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

func TestConfirmationApproveAndReject(t *testing.T) {
	echo := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo approved"}`}}}
	a, p := newAgent(t, echo, llmtest.Reply{Text: "Ran it."})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, _ := newConv(t, a, &conversation.LocalOptions{ConfirmationPolicy: &security.AlwaysConfirm{}})
	c.SendMessage(ctx, event.UserMessage("echo"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusWaitingForConfirmation {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	if _, ok := log[len(log)-1].(*event.ActionEvent); !ok {
		t.Fatalf("action ran without confirmation: last event %T", log[len(log)-1])
	}
	// Running again approves.
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	log = logEvents(t, c)
	obs, ok := log[len(log)-2].(*event.ObservationEvent)
	if !ok || !strings.Contains(event.TextOf(event.ObservationContent(obs.Observation)), "approved") {
		t.Fatalf("observation %#v", log[len(log)-2])
	}
	if c.Status() != conversation.StatusFinished {
		t.Fatalf("status %s", c.Status())
	}

	// Rejection.
	p.Add(echo, llmtest.Reply{Text: "Understood."})
	c.SendMessage(ctx, event.UserMessage("again"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.RejectPendingActions(ctx, "not now"); err != nil {
		t.Fatal(err)
	}
	if c.Status() != conversation.StatusIdle {
		t.Fatalf("status after reject %s", c.Status())
	}
	log = logEvents(t, c)
	rej, ok := log[len(log)-1].(*event.UserRejectObservation)
	if !ok || rej.RejectionReason != "not now" || rej.RejectionSource != event.RejectedByUser {
		t.Fatalf("last event %#v", log[len(log)-1])
	}
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	msgs := p.Requests()[len(p.Requests())-1].Messages
	if last := msgs[len(msgs)-1]; event.TextOf(last.Content) != "Action rejected: not now" {
		t.Fatalf("model saw %+v", last)
	}
}

func TestAskAgentDuringRun(t *testing.T) {
	w := &waitTool{started: make(chan string, 1), release: make(chan struct{})}
	a, p := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{"name":"x","sleep_ms":0}`}}},
		llmtest.Reply{Text: "I am waiting for x."}, // the side answer
		llmtest.Reply{Text: "Done."},
	)
	a = withTools(a, w.tool())
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("wait for x"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-w.started
	before := c.State().Events().Len()
	answer, err := c.AskAgent(ctx, "What are you doing?")
	if err != nil {
		t.Fatal(err)
	}
	if answer != "I am waiting for x." {
		t.Fatalf("answer %q", answer)
	}
	if after := c.State().Events().Len(); after != before {
		t.Fatalf("AskAgent appended %d events", after-before)
	}
	// The running call has no result yet, so the question was asked
	// without it.
	for _, m := range p.Requests()[1].Messages {
		if len(m.ToolCalls) > 0 {
			t.Fatalf("side question sent an unanswered tool call: %+v", m)
		}
	}
	close(w.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	for _, e := range logEvents(t, c) {
		if m, ok := e.(*event.MessageEvent); ok && strings.Contains(event.TextOf(m.LLMMessage.Content), "What are you doing") {
			t.Fatal("the side question is in the log")
		}
	}
}

func TestResumeAfterReload(t *testing.T) {
	dir := t.TempDir()
	work := t.TempDir()
	think := llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: `{"thought":"plan"}`}}}
	a, _ := newAgent(t, think, llmtest.Reply{Text: "First done."})
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("one"))
	if err := c.Run(ctx); err != nil {
		t.Fatal(err)
	}
	first := kindsOf(logEvents(t, c))
	id := c.ID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}

	// Removing a tool is refused.
	b, p := newAgent(t, llmtest.Reply{Text: "Second done."})
	if _, err := conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id}); err == nil || !strings.Contains(err.Error(), "terminal") {
		t.Fatalf("resume without the terminal tool: %v", err)
	}
	b.Tools = append(b.Tools, tool.Spec{Name: terminal.Name})
	c2, err := conversation.New(ctx, b, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got := kindsOf(logEvents(t, c2)); !slices.Equal(got, first) {
		t.Fatalf("reloaded log %v, want %v", got, first)
	}
	c2.SendMessage(ctx, event.UserMessage("two"))
	if err := c2.Run(ctx); err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, k := range kindsOf(logEvents(t, c2)) {
		if k == "SystemPromptEvent" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d system prompts after resume", n)
	}
	// The model saw the whole history.
	msgs := p.Requests()[0].Messages
	if len(msgs) != 6 || event.TextOf(msgs[4].Content) != "First done." {
		t.Fatalf("history sent after resume: %d messages", len(msgs))
	}
	if _, ok := c2.State().Fields().Agent.(*agent.Agent); !ok {
		t.Fatalf("agent %T", c2.State().Fields().Agent)
	}
}

func TestResumeWithPersistedAgent(t *testing.T) {
	dir, work := t.TempDir(), t.TempDir()
	a, _ := newAgent(t)
	c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil)})
	if err != nil {
		t.Fatal(err)
	}
	id := c.ID()
	c.Close()
	c2, err := conversation.New(ctx, nil, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	got := c2.State().Fields().Agent.(*agent.Agent)
	if got.LLM.Model != a.LLM.Model || !slices.Equal(got.IncludeDefaultTools, agent.DefaultTools) || got.ToolConcurrencyLimit != 1 {
		t.Fatalf("persisted agent %+v", got)
	}
}

func TestSendMessageRejectsOtherRoles(t *testing.T) {
	a, _ := newAgent(t)
	c, _ := newConv(t, a, nil)
	if err := c.SendMessage(ctx, event.Message{Role: event.RoleAssistant}); err == nil {
		t.Fatal("assistant message accepted")
	}
	if n := c.State().Events().Len(); n != 0 {
		t.Fatalf("%d events written for a refused message", n)
	}
}

func TestRunWhileRunning(t *testing.T) {
	w := &waitTool{started: make(chan string, 1), release: make(chan struct{})}
	a, _ := newAgent(t,
		llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{"name":"x","sleep_ms":0}`}}},
		llmtest.Reply{Text: "Done."},
	)
	a = withTools(a, w.tool())
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-w.started
	if err := c.Run(ctx); !errors.Is(err, conversation.ErrRunning) {
		t.Fatalf("second Run: %v", err)
	}
	if err := c.RejectPendingActions(ctx, ""); !errors.Is(err, conversation.ErrRunning) {
		t.Fatalf("RejectPendingActions during a step: %v", err)
	}
	close(w.release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

func TestCancelledContextPauses(t *testing.T) {
	w := &waitTool{started: make(chan string, 1), release: make(chan struct{})}
	a, _ := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{"name":"x","sleep_ms":0}`}}})
	a = withTools(a, w.tool())
	c, _ := newConv(t, a, nil)
	c.SendMessage(ctx, event.UserMessage("go"))
	runCtx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- c.Run(runCtx) }()
	<-w.started
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Run: %v", err)
	}
	if c.Status() != conversation.StatusPaused {
		t.Fatalf("status %s", c.Status())
	}
	log := logEvents(t, c)
	if e, ok := log[len(log)-2].(*event.AgentErrorEvent); !ok || !strings.Contains(e.Error, "interrupted") {
		t.Fatalf("interrupted call answered by %#v", log[len(log)-2])
	}
}

func TestCloseDuringRun(t *testing.T) {
	w := &waitTool{started: make(chan string, 1), release: make(chan struct{})}
	a, _ := newAgent(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "wait", Arguments: `{"name":"x","sleep_ms":0}`}}})
	a = withTools(a, w.tool())
	c, err := conversation.New(ctx, a, t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(t.TempDir(), nil)})
	if err != nil {
		t.Fatal(err)
	}
	c.SendMessage(ctx, event.UserMessage("go"))
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx) }()
	<-w.started
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	if err := c.SendMessage(ctx, event.UserMessage("more")); !errors.Is(err, conversation.ErrConversationClosed) {
		t.Fatalf("SendMessage after Close: %v", err)
	}
}
