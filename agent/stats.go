package agent

import (
	"fmt"
	"maps"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

// saveStats copies the LLMs' metrics into the conversation's stats. Step
// calls it after each reply of the model, before the reply is stored, so
// that a process killed at any point loses no cost of a reply it acted
// on; the reference's agent server likewise records the stats after each
// response.
//
// It is the State's ordinary base-state write, with what every such write
// guarantees: with filestore, base_state.json is replaced by a rename, so
// when saveStats returns the cost survives a killed process (the kernel
// keeps the written pages), and a power cut only with
// filestore.Options.Durable, which fsyncs the file and its directory. Its
// cost is mostly that write: the State re-encodes only the members whose
// value changed (the agent's encoding is cached, conversation/encache.go).
func (r *runner) saveStats() error {
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
	r.askMu.Lock()
	for _, l := range r.side {
		ls = append(ls, l)
	}
	r.askMu.Unlock()
	if len(ls) == 0 {
		return nil
	}
	return r.sess.State().Update(func(f *conversation.Fields) error {
		m := make(event.Map[string, *llm.Metrics], len(f.Stats.UsageToMetrics)+len(ls))
		maps.Copy(m, f.Stats.UsageToMetrics)
		for _, l := range ls {
			lm := l.Metrics()
			m[l.UsageID()] = &lm
		}
		f.Stats.UsageToMetrics = m
		return nil
	})
}

// SaveStats implements conversation.Runner.
func (r *runner) SaveStats() error { return r.saveStats() }

// Model implements conversation.Runner: side calls (a title, say)
// use the agent's model.
func (r *runner) Model() llm.Model { return r.model }

// SwitchLLM implements conversation.Runner. A model given in Options
// lends its provider and HTTP client to the new one (llm.LLM.Derive); the
// new model's metrics continue those the conversation has for its usage
// id.
func (r *runner) SwitchLLM(cfg llm.Config) (conversation.Agent, error) {
	if err := r.saveStats(); err != nil {
		return nil, err
	}
	var (
		nl  *llm.LLM
		err error
	)
	if l, ok := r.model.(*llm.LLM); ok {
		nl, err = l.Derive(cfg)
	} else {
		nl, err = llm.New(cfg, &llm.Options{Logger: r.sess.Logger()})
	}
	if err != nil {
		return nil, fmt.Errorf("agent: switch llm: %w", err)
	}
	if m, ok := r.sess.Fields().Stats.UsageToMetrics[nl.UsageID()]; ok && m != nil {
		nl.RestoreMetrics(*m)
	}
	b := *r.a
	b.LLM = nl.Config()
	b.opts.Model = nl
	r.a, r.model = &b, nl
	return &b, nil
}
