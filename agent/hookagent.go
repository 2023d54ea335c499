package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
)

// hookAgent answers an agent hook as the reference does: a fresh agent
// with the hook's system prompt and tools, finish as its only built-in,
// the conversation's model under the usage id "agent-hook:<name>", no
// hooks (so no recursion), kept in memory, for at most max_iterations
// steps. Its model costs are added to the conversation's under that id.
func (r *runner) hookAgent(ctx context.Context, d *hook.Definition, task string) (string, error) {
	name := d.Name
	if name == "" {
		name = "default"
	}
	usageID := "agent-hook:" + name
	cfg := r.a.LLM
	model := r.model
	live, _ := model.(*llm.LLM)
	if live != nil {
		cfg = live.Config()
		cfg.UsageID, cfg.Stream = usageID, false
		if d.Timeout > 0 {
			cfg.Timeout = float64(d.Timeout)
		}
		l, err := live.Derive(cfg)
		if err != nil {
			return "", err
		}
		live, model = l, l
	}
	specs := make([]tool.Spec, 0, len(d.Tools))
	for _, n := range d.Tools {
		specs = append(specs, tool.Spec{Name: n})
	}
	sub := New(cfg, specs, &Options{Model: model})
	sub.IncludeDefaultTools = []string{"FinishTool"}
	sub.SystemPrompt = d.SystemPrompt
	conv, err := conversation.New(ctx, sub, r.sess.WorkingDir(), &conversation.LocalOptions{
		MaxIterations: max(d.MaxIterations, 1),
		HookConfig:    json.RawMessage(`{}`),
	})
	if err != nil {
		return "", err
	}
	defer func() {
		r.addHookCosts(usageID, live, conv)
		_ = conv.Close()
	}()
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return "", err
	}
	if err := conv.Run(ctx); err != nil && !errors.Is(err, context.Canceled) {
		return "", err
	}
	if err := ctx.Err(); err != nil {
		return "", fmt.Errorf("agent hook: %w", err)
	}
	return FinalResponse(ctx, conv.State())
}

// addHookCosts adds what an agent hook's model spent to the
// conversation's metrics under usageID. A model that is not an *llm.LLM
// (a router, a test's) is shared and already counts there.
func (r *runner) addHookCosts(usageID string, live *llm.LLM, conv *conversation.LocalConversation) {
	if live == nil {
		return
	}
	m := live.Metrics()
	for id, mt := range conv.State().Fields().Stats.UsageToMetrics {
		if mt != nil && id != usageID {
			m.Merge(*mt)
		}
	}
	err := r.sess.State().Update(func(f *conversation.Fields) error {
		next := maps.Clone(f.Stats.UsageToMetrics)
		if next == nil {
			next = event.Map[string, *llm.Metrics]{}
		}
		if prev := next[usageID]; prev != nil {
			sum := *prev
			sum.Merge(m)
			m = sum
		}
		m.ModelName = live.Config().Model
		next[usageID] = &m
		f.Stats.UsageToMetrics = next
		return nil
	})
	if err != nil {
		r.sess.Logger().Warn("agent: recording an agent hook's costs", "err", err)
	}
}
