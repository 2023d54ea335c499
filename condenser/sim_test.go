package condenser

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// TestLongConversation simulates 1,000 agent steps without the agent loop:
// each step appends a tool-call batch and its results to the log, lets the
// condenser run when it must, and builds the request the model would get.
// Every request stays under the token limit and is well-formed.
func TestLongConversation(t *testing.T) {
	const steps, limit = 1000, 6000
	p := llmtest.NewProvider(t)
	for i := range steps {
		p.Add(llmtest.Reply{ID: fmt.Sprintf("sum-%d", i), Text: fmt.Sprintf("summary %d: %s", i, strings.Repeat("s", 400))})
	}
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 1
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		t.Fatal(err)
	}
	c := NewLLMSummarizing(cfg, l)
	c.MaxSize, c.KeepFirst, c.MaxTokens = 80, 4, limit
	r := rand.New(rand.NewPCG(7, 8))

	b := (&builder{}).system().user("do the task")
	log := b.events
	condensations := 0
	for step := range steps {
		b.events = nil
		if r.IntN(20) == 0 {
			b.user("a remark")
		}
		b.batch(1+r.IntN(3), strings.Repeat("o", r.IntN(3000)), r.IntN(10) == 0)
		log = append(log, b.events...)
		v := NewView(log)
		cond, err := c.Condense(t.Context(), v, nil)
		if err != nil {
			t.Fatalf("step %d: %v", step, err)
		}
		if cond != nil {
			condensations++
			// Round-trip it as it would be stored.
			data, err := event.Marshal(cond)
			if err != nil {
				t.Fatal(err)
			}
			back, err := event.Unmarshal(data)
			if err != nil {
				t.Fatal(err)
			}
			log = append(log, back)
			v = NewView(log)
		}
		msgs := event.LLMMessages(v.Events)
		if n := viewTokens(CharCounter{}, v.Events); n > limit {
			t.Fatalf("step %d: request of %d tokens, limit %d", step, n, limit)
		}
		if v.Len() > c.MaxSize+4 {
			t.Fatalf("step %d: view of %d events", step, v.Len())
		}
		if msgs[0].Role != event.RoleSystem {
			t.Fatalf("step %d: first message is %s", step, msgs[0].Role)
		}
		checkWellFormed(t, msgs)
	}
	if condensations < 50 {
		t.Fatalf("only %d condensations in %d steps", condensations, steps)
	}
	t.Logf("%d steps, %d condensations, %d events in the log", steps, condensations, len(log))
}

func TestJSON(t *testing.T) {
	cfg := llm.DefaultConfig("openai/gpt-4o")
	p := &Pipeline{Condensers: List{NoOp{}, NewLLMSummarizing(cfg, nil)}}
	data, err := event.MarshalKinded(p)
	if err != nil {
		t.Fatal(err)
	}
	s := string(data)
	for _, want := range []string{`"kind":"PipelineCondenser"`, `{"kind":"NoOpCondenser"}`, `"max_size":240`, `"keep_first":2`,
		`"minimum_progress":0.1`, `"hard_context_reset_max_retries":5`, `"hard_context_reset_context_scaling":0.8`, `"kind":"LLMSummarizingCondenser"`} {
		if !strings.Contains(s, want) {
			t.Errorf("%s lacks %s", s, want)
		}
	}
	back, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	bp := back.(*Pipeline)
	if len(bp.Condensers) != 2 || !bp.HandlesRequests() {
		t.Fatalf("decoded %#v", bp)
	}
	again, _ := event.MarshalKinded(bp)
	if string(again) != s {
		t.Fatalf("round trip changed:\n%s\n%s", s, again)
	}

	// Absent keys take the reference's defaults.
	llmJSON, _ := json.Marshal(cfg)
	got, err := Decode([]byte(`{"kind":"LLMSummarizingCondenser","llm":` + string(llmJSON) + `,"max_size":80,"keep_first":4}`))
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(*LLMSummarizing); s.MaxSize != 80 || s.KeepFirst != 4 || s.MinimumProgress != 0.1 || s.HardContextResetMaxRetries != 5 {
		t.Fatalf("decoded %+v", s)
	}
	for _, bad := range []string{
		`{"kind":"LLMSummarizingCondenser","llm":` + string(llmJSON) + `,"max_size":6,"keep_first":2}`,
		`{"kind":"LLMSummarizingCondenser","llm":` + string(llmJSON) + `,"max_size":0}`,
		`{"kind":"LLMSummarizingCondenser","llm":` + string(llmJSON) + `,"bogus":1}`,
		`{"kind":"NoSuchCondenser"}`,
	} {
		if _, err := Decode([]byte(bad)); err == nil {
			t.Errorf("Decode(%s) succeeded", bad)
		}
	}
	if NoOp.HandlesRequests(NoOp{}) || (&Pipeline{Condensers: List{NoOp{}}}).HandlesRequests() {
		t.Fatal("NoOp handles requests")
	}
}

// TestReferenceJSON reads a pipeline written by the Python reference
// (testdata/reference_pipeline.json) and writes it back byte for byte.
func TestReferenceJSON(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_pipeline.json")
	if err != nil {
		t.Fatal(err)
	}
	data = bytes.TrimSpace(data)
	c, err := Decode(data)
	if err != nil {
		t.Fatal(err)
	}
	p := c.(*Pipeline)
	s := p.Condensers[1].(*LLMSummarizing)
	if s.MaxSize != 80 || s.KeepFirst != 4 || s.MaxTokens != 100000 || s.LLM.UsageID != "condenser" || s.LLM.Model != "openai/gpt-4o" {
		t.Fatalf("decoded %+v", s)
	}
	out, err := event.MarshalKinded(p)
	if err != nil {
		t.Fatal(err)
	}
	// The LLM config is the llm package's to encode (it writes nulls
	// where the reference omits them, which both sides read); the
	// condenser's own fields, their order and the kinds must match.
	tail := func(b []byte) string { return string(b[bytes.Index(b, []byte(`,"max_size"`)):]) }
	head := func(b []byte) string { return string(b[:bytes.Index(b, []byte(`{"llm"`))]) }
	if tail(out) != tail(data) || head(out) != head(data) {
		t.Fatalf("re-encoded differently:\n got %s\nwant %s", out, data)
	}
	var a, b map[string]any
	if err := json.Unmarshal(data, &a); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(out, &b); err != nil {
		t.Fatal(err)
	}
	refLLM := a["condensers"].([]any)[1].(map[string]any)["llm"].(map[string]any)
	ourLLM := b["condensers"].([]any)[1].(map[string]any)["llm"].(map[string]any)
	for k, v := range refLLM {
		if k == "modify_params" {
			continue // not modelled by llm.Config
		}
		if w, _ := json.Marshal(v); string(w) != mustJSON(ourLLM[k]) {
			t.Errorf("llm.%s = %s, reference %s", k, mustJSON(ourLLM[k]), w)
		}
	}
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return string(b)
}

// TestContextWindowRecovery follows the reference's recovery sequence
// without the agent loop: the agent's model reports a context-window
// error, a CondensationRequest is appended, the condenser answers it, and
// the next call goes through with a shorter history.
func TestContextWindowRecovery(t *testing.T) {
	agent := llmtest.NewProvider(t, llmtest.ContextWindowExceeded(), llmtest.Reply{Text: "done"})
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.NumRetries = 1
	agentLLM, err := llm.New(cfg, &llm.Options{Provider: agent})
	if err != nil {
		t.Fatal(err)
	}
	sumLLM, _ := scripted(t, llmtest.Reply{Text: "what happened so far"})
	c := NewLLMSummarizing(sumLLM.Config(), sumLLM)
	if !c.HandlesRequests() {
		t.Fatal("summarizing condenser must handle requests")
	}
	b := (&builder{}).system().user("task")
	for range 10 {
		b.batch(1, "output", false)
	}
	log := b.events
	call := func() error {
		v := NewView(log)
		if cond, err := c.Condense(t.Context(), v, agentLLM); err != nil {
			t.Fatal(err)
		} else if cond != nil {
			log = append(log, cond)
			v = NewView(log)
		}
		_, err := agentLLM.Completion(t.Context(), event.LLMMessages(v.Events), nil, nil)
		return err
	}
	err = call()
	if !errors.Is(err, llm.ErrContextWindowExceeded) {
		t.Fatalf("first call: %v", err)
	}
	log = append(log, &event.CondensationRequest{Base: event.NewBase(event.SourceEnvironment)})
	if err := call(); err != nil {
		t.Fatalf("after condensing: %v", err)
	}
	reqs := agent.Requests()
	if n0, n1 := len(reqs[0].Messages), len(reqs[1].Messages); n1 >= n0 {
		t.Fatalf("second request has %d messages, first %d", n1, n0)
	}
	if _, ok := log[len(log)-1].(*event.Condensation); !ok {
		t.Fatal("no condensation in the log")
	}
}

// BenchmarkCondenseCheck measures the per-step cost of asking the
// condenser whether a 200-event view needs condensing (it does not).
func BenchmarkCondenseCheck(b *testing.B) {
	bl := (&builder{}).system().user("task")
	for range 99 {
		bl.batch(1, strings.Repeat("o", 400), false)
	}
	c := NewLLMSummarizing(llm.DefaultConfig("openai/gpt-4o"), nil)
	c.MaxTokens = 1 << 30
	v := NewView(bl.events)
	b.ReportAllocs()
	for b.Loop() {
		if cond, err := c.Condense(context.Background(), v, nil); cond != nil || err != nil {
			b.Fatal(cond, err)
		}
	}
}

// BenchmarkManipulationIndices measures finding the cut points of a
// 200-event view.
func BenchmarkManipulationIndices(b *testing.B) {
	bl := (&builder{}).system().user("task")
	for range 66 {
		bl.batch(1+len(bl.events)%3, "o", false)
	}
	b.ReportAllocs()
	for b.Loop() {
		ManipulationIndices(bl.events)
	}
}
