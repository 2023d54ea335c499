package pyclient_test

import (
	"encoding/json"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tools/browser"
)

// liveSubAgents compares the sub-agents of the two servers:
//   - list: POST /api/sub-agents (built-ins only, and every level with an
//     empty project) answers the same agents in the same order, each
//     with the same members and values but its description and
//     system_prompt (each server's own words, present on both) and a
//     built-in's source (1.58.2's file in its package; gohands' built-ins
//     are compiled in, their source is null);
//   - web-researcher: a parent whose agent has the task tool set hands a
//     task to web-researcher; the sub-agent's first model request offers
//     the same tools (by name) in a request of the same shape (its
//     members, the roles of its messages, the task as its first user
//     message), and the parent's observation of the task holds the
//     sub-agent's answer on both.
func liveSubAgents(t *testing.T, p *livePair) {
	// gohands offers web-researcher where a browser can run; 1.58.2 always.
	if _, err := browser.FindChromium(""); err != nil {
		testenv.Missing(t, "%v", err)
	}
	t.Run("list", func(t *testing.T) {
		for _, body := range []map[string]any{
			{"load_user": false, "load_project": false},
			{"project_dir": t.TempDir()},
		} {
			ref, gh := both(p, func(srv *server) []map[string]any { return listSubAgents(t, p, srv, body) })
			if diff := cmp.Diff(ref, gh); diff != "" {
				t.Errorf("POST /api/sub-agents %v differs (-reference +gohands):\n%s", body, diff)
			}
			if !slices.ContainsFunc(ref, func(a map[string]any) bool { return a["name"] == "web-researcher" }) {
				t.Errorf("a check of the test: the reference does not list web-researcher: %v", ref)
			}
		}
	})
	t.Run("web-researcher", func(t *testing.T) {
		ref, gh := both(p, func(srv *server) webRun { return delegateWebResearch(t, p, srv) })
		if t.Failed() {
			return
		}
		t.Logf("reference: %+v", ref)
		if diff := cmp.Diff(ref, gh); diff != "" {
			t.Errorf("the web-researcher's run differs (-reference +gohands):\n%s", diff)
		}
		if !slices.Contains(ref.Tools, "browser_navigate") || !ref.Answered || !ref.Task {
			t.Errorf("a check of the test: the reference's sub-agent has tools %v, its task first %v, answered %v", ref.Tools, ref.Task, ref.Answered)
		}
	})
}

// listSubAgents is srv's answer to POST /api/sub-agents with body, each
// agent's own words and file left out.
func listSubAgents(t *testing.T, p *livePair, srv *server, body map[string]any) []map[string]any {
	var got struct {
		Agents []map[string]any `json:"agents"`
	}
	if _, err := p.client(srv).do(t.Context(), "POST", "/api/sub-agents", body, &got); err != nil {
		t.Errorf("%s: %v", srv.name, err)
		return nil
	}
	for _, a := range got.Agents {
		for _, k := range []string{"description", "system_prompt"} {
			s, _ := a[k].(string)
			a[k] = s != ""
		}
		if a["is_builtin"] == true {
			delete(a, "source")
		}
	}
	return got.Agents
}

// webRun is what liveSubAgents compares of one server's delegation.
type webRun struct {
	Tools    []string // the sub-agent's tools, sorted
	Members  []string // its request's members, sorted
	Roles    []string // the roles of its messages
	Task     bool     // its first user message is the task's prompt
	Answered bool     // the parent's observation holds the sub-agent's answer
}

func delegateWebResearch(t *testing.T, p *livePair, srv *server) webRun {
	c := p.client(srv)
	short := map[string]string{"reference": "ref", "gohands": "go"}[srv.name]
	mark, subMark := "#web-"+short, "#websub-"+short
	const answer = "RESEARCH-ANSWER-5"
	p.model.handle(mark, func(r llmtest.Request) llmtest.Reply {
		if toolResults(r) == 0 {
			args, _ := json.Marshal(map[string]any{"description": "look it up", "prompt": subMark + ": find the release notes",
				"subagent_type": "web-researcher", "security_risk": "LOW"})
			return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "task", Arguments: string(args)}}}
		}
		return finishCall("parent done")
	})
	p.model.handle(subMark, func(llmtest.Request) llmtest.Reply { return finishCall(answer) })

	body := startBody(p.model.URL, t.TempDir())
	body["agent"].(map[string]any)["tools"] = []any{map[string]any{"name": "terminal"}, map[string]any{"name": "task_tool_set"}}
	id := runTurn(t, c, srv, body, mark+": research")

	var run webRun
	reqs := p.model.requests(subMark)
	if len(reqs) == 0 {
		evs, _ := allEvents(t.Context(), c, id)
		t.Errorf("%s: the sub-agent never asked the model; the parent's events:\n%s", srv.name, brief(evs))
		return run
	}
	r := reqs[0]
	run.Tools = toolNames(r)
	for k := range r.Body {
		run.Members = append(run.Members, k)
	}
	sort.Strings(run.Members)
	msgs, _ := r.Body["messages"].([]any)
	for _, m := range msgs {
		m, _ := m.(map[string]any)
		role, _ := m["role"].(string)
		run.Roles = append(run.Roles, role)
	}
	run.Task = firstUserText(r) == subMark+": find the release notes"
	evs, err := allEvents(t.Context(), c, id)
	if err != nil {
		t.Errorf("%s: %v", srv.name, err)
		return run
	}
	for _, e := range evs {
		if e["kind"] == "ObservationEvent" && e["tool_name"] == "task" {
			b, _ := json.Marshal(e["observation"])
			run.Answered = strings.Contains(string(b), answer)
		}
	}
	return run
}
