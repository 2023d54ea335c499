package condenser

import (
	"context"
	"errors"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

func ids(events []event.Event) []string {
	out := make([]string, len(events))
	for i, e := range events {
		out[i] = e.EventBase().ID
	}
	return out
}

func TestViewAppliesCondensations(t *testing.T) {
	b := (&builder{}).system().user("hi").batch(1, "out", false).batch(1, "out2", false)
	log := slices.Clone(b.events)
	log = append(log, &event.CondensationRequest{Base: event.Base{ID: "req"}})
	v := NewView(log)
	if !v.UnhandledRequest || v.Len() != 6 {
		t.Fatalf("view of %d events, request %v; want 6, true", v.Len(), v.UnhandledRequest)
	}
	summary, off := "the summary", 2
	log = append(log, &event.Condensation{Base: event.Base{ID: "c1"}, ForgottenEventIDs: event.List[string]{"act5", "obs6"},
		Summary: &summary, SummaryOffset: &off, LLMResponseID: "r"})
	v = NewView(log)
	if v.UnhandledRequest {
		t.Fatal("condensation did not clear the request")
	}
	want := []string{"sys1", "msg2", "c1-summary", "act9", "obs10"}
	if got := ids(v.Events); !slices.Equal(got, want) {
		t.Fatalf("view = %v, want %v", got, want)
	}
	if s := v.Events[2].(*event.CondensationSummaryEvent); s.Summary != summary {
		t.Fatalf("summary %q", s.Summary)
	}
	if got := ids(NewView(v.Events).Events); !slices.Equal(got, want) {
		t.Fatalf("rebuilding a view changed it: %v", got)
	}
	if len(log) != 8 {
		t.Fatal("log changed")
	}
}

func TestManipulationIndices(t *testing.T) {
	b := (&builder{}).system().user("hi").batch(2, "x", false).user("more").batch(1, "y", true).batch(1, "z", false).user("end")
	// 0 sys, 1 user, 2 a, 3 a, 4 o, 5 o, 6 user, 7 a(thinking), 8 o, 9 a, 10 o, 11 user
	got := ManipulationIndices(b.events)
	want := []int{0, 1, 2, 6, 7, 11, 12}
	if !slices.Equal(got, want) {
		t.Fatalf("indices = %v, want %v", got, want)
	}
	// A call still waiting for its result cannot be cut from the end.
	pending := b.events[:10]
	if got := ManipulationIndices(pending); slices.Contains(got, 10) {
		t.Fatalf("indices %v include the end after an unanswered call", got)
	}
}

// randomConversation builds a random well-formed event sequence.
func randomConversation(r *rand.Rand, steps int) []event.Event {
	b := (&builder{}).system().user("task")
	for range steps {
		switch r.IntN(5) {
		case 0:
			b.user("more")
		case 1:
			b.batch(1+r.IntN(3), "out", true)
		default:
			b.batch(1+r.IntN(3), "out", false)
		}
	}
	return b.events
}

// TestCutsNeverSplit checks over random conversations that removing the
// events between any two manipulation indices leaves every tool call
// paired with exactly one result, and never splits a batch.
func TestCutsNeverSplit(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for range 300 {
		events := randomConversation(r, 1+r.IntN(12))
		idx := ManipulationIndices(events)
		for _, i := range idx {
			// No action before i has its result after i, and no batch
			// straddles i.
			calls := map[string]bool{}
			for _, e := range events[:i] {
				if a, ok := e.(*event.ActionEvent); ok {
					calls[a.ToolCallID] = true
				}
			}
			for _, e := range events[i:] {
				if id := ResultCallID(e); calls[id] {
					t.Fatalf("index %d splits call %s from its result", i, id)
				}
			}
			if i > 0 && i < len(events) {
				a, ok1 := events[i-1].(*event.ActionEvent)
				c, ok2 := events[i].(*event.ActionEvent)
				if ok1 && ok2 && a.LLMResponseID == c.LLMResponseID {
					t.Fatalf("index %d splits a batch", i)
				}
			}
		}
		for range 5 {
			i, j := idx[r.IntN(len(idx))], idx[r.IntN(len(idx))]
			if i > j {
				i, j = j, i
			}
			cut := slices.Concat(events[:i], events[j:])
			checkWellFormed(t, event.LLMMessages(cut))
		}
	}
}

func TestEventCountTrigger(t *testing.T) {
	l, p := scripted(t, llmtest.Reply{ID: "resp-sum", Text: "SUMMARY"})
	c := NewLLMSummarizing(l.Config(), l)
	c.MaxSize, c.KeepFirst = 10, 2
	b := (&builder{}).system().user("task")
	for range 4 {
		b.batch(1, "output", false)
	}
	v := NewView(b.events) // 10 events: not above max_size
	if cond, err := c.Condense(t.Context(), v, nil); err != nil || cond != nil {
		t.Fatalf("condensed a view at max_size: %v %v", cond, err)
	}
	b.user("one more") // 11 events
	v = NewView(b.events)
	cond, err := c.Condense(t.Context(), v, nil)
	if err != nil || cond == nil {
		t.Fatalf("Condense = %v, %v", cond, err)
	}
	// keep 10/2-2-1 = 2 events of the tail: the naive cut at 9 moves
	// to the next cut point, 10.
	if want := ids(v.Events[2:10]); !slices.Equal(cond.ForgottenEventIDs, want) {
		t.Fatalf("forgot %v, want %v", cond.ForgottenEventIDs, want)
	}
	if *cond.SummaryOffset != 2 || *cond.Summary != "SUMMARY" || cond.LLMResponseID != "resp-sum" {
		t.Fatalf("condensation %+v", cond)
	}
	// The reference's shape: the instructions as the system message, the
	// events as the one user message.
	req := p.Requests()[0]
	if len(req.Tools) != 0 || len(req.Messages) != 2 || req.Messages[0].Role != event.RoleSystem || req.Messages[1].Role != event.RoleUser {
		t.Fatalf("summary request: %d tools, %d messages", len(req.Tools), len(req.Messages))
	}
	sys, events := event.TextOf(req.Messages[0].Content), event.TextOf(req.Messages[1].Content)
	if !strings.Contains(sys, "TASK_TRACKING") || strings.Contains(sys, "<EVENT>") {
		t.Fatalf("summary system message:\n%s", sys)
	}
	if strings.Count(events, "<EVENT>") != 8 || strings.Contains(events, "TASK_TRACKING") {
		t.Fatalf("summary events message:\n%s", events)
	}
	after := NewView(append(slices.Clone(b.events), cond))
	if after.Len() != 4 {
		t.Fatalf("condensed view has %d events", after.Len())
	}
	checkWellFormed(t, event.LLMMessages(after.Events))
}

func TestRequestTrigger(t *testing.T) {
	l, _ := scripted(t, llmtest.Reply{Text: "S"})
	c := NewLLMSummarizing(l.Config(), l)
	b := (&builder{}).system().user("task")
	for range 5 {
		b.batch(1, "output", false)
	}
	v := NewView(append(b.events, &event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)}))
	cond, err := c.Condense(t.Context(), v, nil)
	if err != nil || cond == nil {
		t.Fatalf("Condense = %v, %v", cond, err)
	}
	// 12 events: keep 12/2-2-1 = 3 from the tail, cut at 9 moves to 10.
	if want := ids(v.Events[2:10]); !slices.Equal(cond.ForgottenEventIDs, want) {
		t.Fatalf("forgot %v, want %v", cond.ForgottenEventIDs, want)
	}
}

func TestTokenTrigger(t *testing.T) {
	l, _ := scripted(t, llmtest.Reply{Text: "S"})
	c := NewLLMSummarizing(l.Config(), l)
	c.MaxTokens = 2000
	b := (&builder{}).system().user("task")
	for range 6 {
		b.batch(1, strings.Repeat("x", 1000), false) // ~250 tokens each
	}
	v := NewView(b.events)
	total := viewTokens(CharCounter{}, v.Events)
	if total <= 1000 || total > 2000 {
		t.Fatalf("setup: %d tokens", total)
	}
	if cond, _ := c.Condense(t.Context(), v, nil); cond != nil {
		t.Fatal("condensed under the token limit")
	}
	b.batch(2, strings.Repeat("y", 2000), false)
	v = NewView(b.events)
	cond, err := c.Condense(t.Context(), v, nil)
	if err != nil || cond == nil {
		t.Fatalf("Condense = %v, %v", cond, err)
	}
	after := NewView(append(slices.Clone(b.events), cond))
	if got := viewTokens(CharCounter{}, after.Events); got > c.MaxTokens/2+50 {
		t.Fatalf("%d tokens after condensing, want about %d at most", got, c.MaxTokens/2)
	}
	checkWellFormed(t, event.LLMMessages(after.Events))
}

func TestMinimumProgress(t *testing.T) {
	l, p := scripted(t)
	c := NewLLMSummarizing(l.Config(), l)
	c.MaxSize, c.KeepFirst, c.MinimumProgress = 10, 2, 0.9
	b := (&builder{}).system().user("task")
	for range 5 {
		b.batch(1, "o", false)
	}
	// Soft requirement, too little to forget: the view is left alone and
	// the LLM is not called.
	cond, err := c.Condense(t.Context(), NewView(b.events), nil)
	if err != nil || cond != nil || len(p.Requests()) != 0 {
		t.Fatalf("Condense = %v, %v after %d calls", cond, err, len(p.Requests()))
	}
}

func TestToolLoopSpanningView(t *testing.T) {
	// A tool loop over the whole view leaves no cut point: a soft
	// requirement gives up quietly.
	l, p := scripted(t)
	c := NewLLMSummarizing(l.Config(), l)
	c.MaxSize, c.KeepFirst = 10, 2
	b := (&builder{}).system().batch(1, "o", true)
	for range 5 {
		b.batch(1, "o", false)
	}
	cond, err := c.Condense(t.Context(), NewView(b.events), nil)
	if err != nil || cond != nil || len(p.Requests()) != 0 {
		t.Fatalf("Condense = %v, %v after %d calls", cond, err, len(p.Requests()))
	}
}

func TestHardResetRetries(t *testing.T) {
	l, p := scripted(t,
		llmtest.Fail(400, "summary failed"), // the normal condensation
		llmtest.Fail(400, "too long"),       // hard reset, attempt 1
		llmtest.Fail(400, "too long"),       // attempt 2
		llmtest.Reply{Text: "RESET"},        // attempt 3
	)
	c := NewLLMSummarizing(l.Config(), l)
	b := (&builder{}).system().user("task")
	for range 5 {
		b.batch(1, strings.Repeat("z", 3000), false)
	}
	v := NewView(append(b.events, &event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)}))
	cond, err := c.Condense(t.Context(), v, nil)
	if err != nil || cond == nil {
		t.Fatalf("Condense = %v, %v", cond, err)
	}
	if *cond.Summary != "RESET" || *cond.SummaryOffset != 1 || len(cond.ForgottenEventIDs) != v.Len()-1 {
		t.Fatalf("hard reset %+v", cond)
	}
	reqs := p.Requests()
	lens := make([]int, len(reqs))
	for i, r := range reqs {
		lens[i] = len(event.TextOf(r.Messages[len(r.Messages)-1].Content))
	}
	if !(lens[2] > lens[3]) || !(lens[1] > lens[2]) {
		t.Fatalf("prompt lengths %v: retries did not shorten the events", lens)
	}
	after := NewView(append(slices.Clone(v.Events), cond))
	if after.Len() != 2 {
		t.Fatalf("view after reset: %v", ids(after.Events))
	}
}

func TestLLMFailure(t *testing.T) {
	// Soft: the failure is swallowed and the view left alone.
	l, _ := scripted(t, llmtest.Fail(400, "nope"))
	c := NewLLMSummarizing(l.Config(), l)
	c.MaxSize, c.KeepFirst = 10, 2
	b := (&builder{}).system().user("task")
	for range 5 {
		b.batch(1, "o", false)
	}
	if cond, err := c.Condense(t.Context(), NewView(b.events), nil); err != nil || cond != nil {
		t.Fatalf("soft failure: %v, %v", cond, err)
	}
	// Hard: every attempt fails, and the caller gets an error.
	replies := make([]llmtest.Reply, 1+DefaultHardContextResetMaxRetries)
	for i := range replies {
		replies[i] = llmtest.Fail(400, "nope")
	}
	l, p := scripted(t, replies...)
	c = NewLLMSummarizing(l.Config(), l)
	v := NewView(append(b.events, &event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)}))
	cond, err := c.Condense(t.Context(), v, nil)
	if !errors.Is(err, ErrNoCondensation) || cond != nil {
		t.Fatalf("hard failure: %v, %v", cond, err)
	}
	if p.Remaining() != 0 {
		t.Fatalf("%d replies unused", p.Remaining())
	}
}

func TestCancelled(t *testing.T) {
	l, _ := scripted(t, llmtest.Reply{Text: "late", Delay: time.Minute})
	c := NewLLMSummarizing(l.Config(), l)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	b := (&builder{}).system().user("task").batch(1, "o", false)
	v := NewView(append(b.events, &event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)}))
	if _, err := c.Condense(ctx, v, nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
}

// A view built from the raw branch takes a trailing CondensationRequest
// into account.
func TestViewOfBranch(t *testing.T) {
	l, _ := scripted(t, llmtest.Reply{Text: "S"})
	c := NewLLMSummarizing(l.Config(), l)
	b := (&builder{}).system().user("task")
	for range 5 {
		b.batch(1, "o", false)
	}
	if cond, err := c.Condense(t.Context(), NewView(b.events), nil); cond != nil || err != nil {
		t.Fatalf("Condense = %v, %v", cond, err)
	}
	cond, err := c.Condense(t.Context(), NewView(append(b.events, &event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)})), nil)
	if cond == nil || err != nil {
		t.Fatalf("request not seen: %v, %v", cond, err)
	}
}
