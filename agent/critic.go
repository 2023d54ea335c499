package agent

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os/exec"
	"strings"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
)

// RefinementKey is the agent_state key counting the extra iterations a
// critic asked for (the reference's key).
const RefinementKey = "iterative_refinement_iteration"

// criticConfig is the part of the reference's critic configuration the
// agent acts on: its kind and its iterative refinement.
type criticConfig struct {
	Kind                string `json:"kind"`
	Mode                string `json:"mode"` // finish_and_message (the default) or all_actions
	IterativeRefinement *struct {
		SuccessThreshold *float64 `json:"success_threshold"`
		MaxIterations    *int     `json:"max_iterations"`
	} `json:"iterative_refinement"`
}

// refinement returns the follow-up message that gives the agent one more
// iteration when the configured critic scores the finished run below its
// threshold and the bound allows it, or nil when the run may finish.
func (r *runner) refinement(ctx context.Context) (*event.MessageEvent, error) {
	if len(r.a.Critic) == 0 || string(r.a.Critic) == "null" {
		return nil, nil
	}
	var cfg criticConfig
	if err := json.Unmarshal(r.a.Critic, &cfg); err != nil {
		return nil, fmt.Errorf("agent: critic: %w", err)
	}
	if cfg.IterativeRefinement == nil {
		return nil, nil
	}
	threshold, max := 0.6, 3 // the reference's defaults
	if t := cfg.IterativeRefinement.SuccessThreshold; t != nil {
		threshold = *t
	}
	if m := cfg.IterativeRefinement.MaxIterations; m != nil {
		max = *m
	}
	done := 0
	if v, ok := r.sess.Fields().AgentState[RefinementKey].(float64); ok {
		done = int(v)
	} else if v, ok := r.sess.Fields().AgentState[RefinementKey].(int); ok {
		done = v
	}
	if done >= max {
		return nil, nil
	}
	var res critique
	if r.finishCritique != nil {
		// The finishing event was judged when it was made.
		res = *r.finishCritique
	} else {
		var err error
		if res, err = r.evaluate(ctx, cfg.Kind, r.a.Critic); err != nil {
			// A critic that cannot judge lets the run finish.
			r.sess.Logger().Warn("critic: no evaluation", "err", err)
			return nil, nil
		}
	}
	if res.Score >= threshold && !res.Refine {
		return nil, nil
	}
	err := r.sess.State().Update(func(f *conversation.Fields) error {
		st := make(map[string]any, len(f.AgentState)+1)
		maps.Copy(st, f.AgentState)
		st[RefinementKey] = done + 1
		f.AgentState = st
		return nil
	})
	if err != nil {
		return nil, err
	}
	var text strings.Builder
	text.WriteString(fmt.Sprintf("A review of your work scored it %.0f%% (iteration %d of %d): %s\n", res.Score*100, done+1, max, res.Message))
	for _, d := range res.Details {
		text.WriteString(d + "\n")
	}
	text.WriteString("Check each requirement of the task against what you did, fix what is missing, then finish again.")
	return &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage(text.String())}, nil
}

// criticResult judges the event being made, as the reference does before
// it emits it: the finishing event (a finish action, or a final text
// reply) when a critic is configured, every action in the critic's
// all_actions mode. It returns nil when there is nothing to judge or the
// critic cannot; the verdict on a finishing event is kept for refinement.
func (r *runner) criticResult(ctx context.Context, finishing bool) *event.CriticResult {
	r.finishCritique = nil
	if len(r.a.Critic) == 0 || string(r.a.Critic) == "null" {
		return nil
	}
	var cfg criticConfig
	if err := json.Unmarshal(r.a.Critic, &cfg); err != nil {
		return nil
	}
	if !finishing && cfg.Mode != "all_actions" {
		return nil
	}
	res, err := r.evaluate(ctx, cfg.Kind, r.a.Critic)
	if err != nil {
		r.sess.Logger().Warn("critic: no evaluation", "err", err)
		return nil
	}
	if finishing {
		r.finishCritique = &res
	}
	msg := res.Message
	return &event.CriticResult{Score: min(max(res.Score, 0), 1), Message: &msg}
}

// critique is a critic's verdict.
type critique struct {
	Score   float64
	Message string
	// Details are lines for the agent (the classifier's likely issues).
	Details []string
	// Refine asks for another iteration whatever the score.
	Refine bool
}

// evaluate runs the critic of kind on the finished run. The patch is the
// workspace's uncommitted change (git diff HEAD); the reference passes
// none in the loop, which makes its patch critics always fail.
func (r *runner) evaluate(ctx context.Context, kind string, raw json.RawMessage) (critique, error) {
	patch := func() string {
		out, err := exec.CommandContext(ctx, "git", "-C", r.sess.WorkingDir(), "diff", "HEAD").Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	switch kind {
	case "PassCritic":
		return critique{Score: 1, Message: "The pass critic accepts every run."}, nil
	case "EmptyPatchCritic":
		if patch() == "" {
			return critique{Score: 0, Message: "Git patch is empty or missing"}, nil
		}
		return critique{Score: 1, Message: "Git patch is non-empty"}, nil
	case "APIBasedCritic":
		return r.apiCritique(ctx, raw)
	case "AgentFinishedCritic":
		if patch() == "" {
			return critique{Score: 0, Message: "Agent did not produce a non-empty git patch. Empty git patch"}, nil
		}
		return critique{Score: 1, Message: "Agent completed with FinishAction and non-empty patch"}, nil
	}
	return critique{}, fmt.Errorf("agent: critic %q is not supported", kind)
}
