package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// The workspace's AGENTS.md and a keyword skill reach the model: the first
// in the system prompt's dynamic context, the second in the user message
// that names its keyword, once per conversation.
func TestWorkspaceSkillsReachTheModel(t *testing.T) {
	work := t.TempDir()
	t.Setenv("HOME", t.TempDir())
	write := func(rel, body string) {
		t.Helper()
		p := filepath.Join(work, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("AGENTS.md", "Indent with tabs (repo-rule-7c1).\n")
	write(".openhands/skills/deploy.md", "---\ntriggers: [deploy]\n---\nDeploy with make release (deploy-skill-4b2).\n")
	a, p := newAgent(t, llmtest.Reply{Text: "Deployed."}, llmtest.Reply{Text: "Again."})
	a.AgentContext = json.RawMessage(`{"load_project_skills":true}`)
	c, err := conversation.New(ctx, a, work, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, text := range []string{"please deploy it", "deploy once more"} {
		if err := c.SendMessage(ctx, event.UserMessage(text)); err != nil {
			t.Fatal(err)
		}
		if err := c.Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	rs := p.Requests()
	if len(rs) != 2 {
		t.Fatalf("%d requests", len(rs))
	}
	count := func(msgs []event.Message, role, s string) int {
		n := 0
		for _, m := range msgs {
			if m.Role == role {
				n += strings.Count(event.TextOf(m.Content), s)
			}
		}
		return n
	}
	if n := count(rs[0].Messages, event.RoleSystem, "repo-rule-7c1"); n != 1 {
		t.Fatalf("AGENTS.md in the system prompt %d times: %+v", n, rs[0].Messages[0])
	}
	if n := count(rs[0].Messages, event.RoleUser, "deploy-skill-4b2"); n != 1 {
		t.Fatalf("the keyword skill is in the first request's user messages %d times", n)
	}
	// The second "deploy" does not inject the skill again.
	if n := count(rs[1].Messages, event.RoleUser, "deploy-skill-4b2"); n != 1 {
		t.Fatalf("the keyword skill is in the second request's user messages %d times", n)
	}
	var activated [][]string
	for _, e := range logEvents(t, c) {
		if m, ok := e.(*event.MessageEvent); ok && m.Source == event.SourceUser {
			activated = append(activated, m.ActivatedSkills)
		}
	}
	if len(activated) != 2 || len(activated[0]) != 1 || activated[0][0] != "deploy" || len(activated[1]) != 0 {
		t.Fatalf("activated skills %v", activated)
	}
}
