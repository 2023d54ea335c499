package agent_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
)

var ctx = context.Background()

// newAgent returns an agent driven by a scripted in-process model.
// t may be nil (in a child process).
func newAgent(t testing.TB, replies ...llmtest.Reply) (*agent.Agent, *llmtest.Provider) {
	p := llmtest.NewProvider(t, replies...)
	cfg := llm.DefaultConfig("openai/gpt-4o")
	cfg.RetryMinWait, cfg.RetryMaxWait, cfg.RetryMultiplier = 0, 0, 0
	l, err := llm.New(cfg, &llm.Options{Provider: p})
	if err != nil {
		panic(err)
	}
	a := agent.New(cfg, nil, &agent.Options{Model: l})
	return a, p
}

// recorder collects the events delivered to a subscriber.
type recorder struct {
	mu     sync.Mutex
	events []event.Event
}

func (r *recorder) add(e event.Event) {
	r.mu.Lock()
	r.events = append(r.events, e)
	r.mu.Unlock()
}

func (r *recorder) kinds() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, e := range r.events {
		k, _ := event.KindOf(e)
		out = append(out, k)
	}
	return out
}

// newConv opens a conversation in a temporary workspace.
func newConv(t testing.TB, a conversation.Agent, opts *conversation.LocalOptions) (*conversation.LocalConversation, *recorder) {
	t.Helper()
	rec := &recorder{}
	var o conversation.LocalOptions
	if opts != nil {
		o = *opts
	}
	o.OnEvent = rec.add
	c, err := conversation.New(context.Background(), a, t.TempDir(), &o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c, rec
}

// logEvents decodes the whole log of c.
func logEvents(t testing.TB, c conversation.Conversation) []event.Event {
	t.Helper()
	store := c.State().Events()
	out := make([]event.Event, store.Len())
	for i := range out {
		e, err := store.Event(t.Context(), i)
		if err != nil {
			t.Fatal(err)
		}
		out[i] = e
	}
	return out
}

func kindsOf(events []event.Event) []string {
	var out []string
	for _, e := range events {
		k, _ := event.KindOf(e)
		out = append(out, k)
	}
	return out
}

// waitAction is the action of the "wait" test tool: it sleeps, or blocks
// until released, and records how many calls ran at once.
type waitAction struct {
	Name    string `json:"name" desc:"a label"`
	SleepMS int    `json:"sleep_ms" desc:"how long to sleep"`
}

type waitObservation struct {
	event.ObservationBase
}

func init() {
	event.RegisterKind[waitAction]("WaitAction")
	event.RegisterKind[waitObservation]("WaitObservation")
}

type waitTool struct {
	running, maxRunning atomic.Int32
	started             chan string   // receives the label of each started call, if set
	release             chan struct{} // if set, calls block until it is closed
}

func (w *waitTool) tool() tool.Tool {
	return tool.New("wait", "Wait a while.", func(ctx context.Context, a *waitAction) (*waitObservation, error) {
		n := w.running.Add(1)
		defer w.running.Add(-1)
		for {
			m := w.maxRunning.Load()
			if n <= m || w.maxRunning.CompareAndSwap(m, n) {
				break
			}
		}
		if w.started != nil {
			w.started <- a.Name
		}
		if w.release != nil {
			select {
			case <-w.release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		select {
		case <-time.After(time.Duration(a.SleepMS) * time.Millisecond):
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		return &waitObservation{event.ObservationBase{Content: event.List[event.Content]{event.Text("waited " + a.Name)}}}, nil
	}, &tool.Options{Annotations: &event.ToolAnnotations{ReadOnlyHint: true}})
}

// withTools returns a with tools as its extra tools, its model kept.
func withTools(a *agent.Agent, tools ...tool.Tool) *agent.Agent {
	o := a.Options()
	o.ExtraTools = tools
	return a.WithOptions(&o)
}
