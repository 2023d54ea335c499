package agent

import (
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// statsEvery is how many LLM calls may pass between two saves of the
// conversation's LLM metrics (they are also saved when a run stops).
const statsEvery = 16

// saveStats copies the LLMs' metrics into the conversation's stats.
func (r *runner) saveStats() error {
	r.calls = 0
	var ls []*llm.LLM
	if l, ok := r.model.(*llm.LLM); ok {
		ls = append(ls, l)
	}
	r.askMu.Lock()
	ask := r.askModel
	r.askMu.Unlock()
	if l, ok := ask.(*llm.LLM); ok && l != r.model {
		ls = append(ls, l)
	}
	if len(ls) == 0 {
		return nil
	}
	return r.sess.State().Update(func(f *conversation.Fields) error {
		m := make(event.Map[string, *llm.Metrics], len(f.Stats.UsageToMetrics)+len(ls))
		for k, v := range f.Stats.UsageToMetrics {
			m[k] = v
		}
		for _, l := range ls {
			lm := l.Metrics()
			m[l.UsageID()] = &lm
		}
		f.Stats.UsageToMetrics = m
		return nil
	})
}

// SaveStats implements conversation.StatsSaver.
func (r *runner) SaveStats() error { return r.saveStats() }

// Model implements conversation.ModelProvider: side calls (a title, say)
// use the agent's model.
func (r *runner) Model() llm.Model { return r.model }
