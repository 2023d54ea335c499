package agent

import (
	"fmt"
	"slices"

	"github.com/gohands/gohands/agent/invokeskill"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
)

// attachInvokeSkill adds the invoke_skill tool when the agent's context
// has skills the model may invoke, which the system prompt lists and
// tells it to load with the tool, or when include_default_tools names it.
// The reference attaches it for AgentSkills-format skills only; the
// prompt lists keyword-triggered ones too, so they count here as well.
func (r *runner) attachInvokeSkill() error {
	if _, ok := r.byName[invokeskill.Name]; ok {
		return nil
	}
	var skills []skill.Skill
	if r.skills != nil {
		skills = r.skills.Skills
	}
	want := slices.Contains(r.a.IncludeDefaultTools, invokeskill.KindName) ||
		slices.ContainsFunc(skills, func(s skill.Skill) bool { return invokeskill.Invocable(&s) })
	if !want {
		return nil
	}
	t := invokeskill.New(&invokeskill.Options{
		Skills:     skills,
		WorkingDir: r.sess.WorkingDir(),
		OnInvoke:   r.recordInvoked,
	})
	params, err := tool.ParametersJSON(t)
	if err != nil {
		return fmt.Errorf("agent: tool %s: %w", t.Name(), err)
	}
	r.tools = append(r.tools, t)
	r.byName[t.Name()] = t
	r.specs = append(r.specs, llm.ToolSpec{Name: t.Name(), Description: t.Description(), Parameters: params})
	return nil
}

// recordInvoked adds a skill to the conversation's invoked_skills.
func (r *runner) recordInvoked(name string) {
	err := r.sess.State().Update(func(f *conversation.Fields) error {
		if !slices.Contains(f.InvokedSkills, name) {
			f.InvokedSkills = append(slices.Clone(f.InvokedSkills), name)
		}
		return nil
	})
	if err != nil {
		r.sess.Logger().Warn("agent: recording an invoked skill", "skill", name, "err", err)
	}
}
