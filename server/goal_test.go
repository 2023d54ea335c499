package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/server"
)

// goalStatuses returns the goal statuses recorded in the conversation.
func (ts *testServer) goalStatuses(id string) []map[string]any {
	ts.t.Helper()
	var out []map[string]any
	for _, e := range ts.eventsOf(id) {
		if e["kind"] == "ConversationStateUpdateEvent" && e["key"] == "goal" {
			out = append(out, e["value"].(map[string]any))
		}
	}
	return out
}

// waitGoal polls until the last goal status is want.
func (ts *testServer) waitGoal(id, want string) []map[string]any {
	ts.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		st := ts.goalStatuses(id)
		if len(st) > 0 && st[len(st)-1]["status"] == want {
			return st
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("goal of %s: statuses %v, want last %s", id, st, want)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// retryWhileBusy repeats a request answered 409 (a run that has just
// set its status is still ending) until it succeeds.
func (ts *testServer) retryWhileBusy(method, path string, body any) {
	ts.t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		code, b := ts.do(method, path, body)
		if code == 200 {
			return
		}
		if code != 409 || time.Now().After(deadline) {
			ts.t.Fatalf("%s %s: %d %s", method, path, code, b)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// POST /goal runs a goal loop in the conversation: the judge (the agent's
// model) finds the first run short, the second meets the objective; each
// status is an event. The reference's status codes for bad requests.
func TestGoalRoute(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{Text: "first try"},
		llmtest.Reply{Text: `{"score": 0.2, "complete": false, "missing": "the tests"}`},
		llmtest.Reply{Text: "tests added"},
		llmtest.Reply{Text: `{"score": 1.0, "complete": true, "missing": ""}`},
	)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
	id := info["id"].(string)
	base := "/api/conversations/" + id

	ts.must(422, "POST", base+"/goal", map[string]any{}, nil)
	ts.must(422, "POST", base+"/goal", map[string]any{"objective": "x", "max_iterations": 0}, nil)
	ts.must(400, "POST", base+"/goal", map[string]any{"objective": "  "}, nil)
	ts.must(404, "POST", "/api/conversations/"+uuid.NewString()+"/goal", map[string]any{"objective": "x"}, nil)
	ts.must(400, "POST", base+"/goal/resume", nil, nil) // nothing to resume

	ts.must(200, "POST", base+"/goal", map[string]any{"objective": "write the code and its tests", "max_iterations": 4}, nil)
	st := ts.waitGoal(id, "complete")
	if len(st) != 3 || st[1]["verdict"].(map[string]any)["missing"] != "the tests" || st[2]["iteration"] != float64(2) || st[2]["active"] != false {
		t.Fatalf("statuses %v", st)
	}
	if n := len(model.Requests()); n != 4 {
		t.Fatalf("%d model calls", n)
	}
	ts.waitStatus(id, "finished")
	ts.must(400, "POST", base+"/goal/resume", nil, nil) // complete: not resumable
	ts.must(200, "POST", base+"/goal/stop", nil, nil)   // no loop: nothing to do
}

// /goal/stop stops the loop while its run goes on, records it
// interrupted, and /goal/resume continues it; a second loop while one is
// active is refused, and a user's message takes over from the loop.
func TestGoalStopResume(t *testing.T) {
	model := llmtest.NewChat(t,
		llmtest.Reply{Text: "slow work", Delay: 2 * time.Second},
		llmtest.Reply{Text: "resumed work"},
		llmtest.Reply{Text: `{"score": 0.9, "complete": true}`},
		llmtest.Reply{Text: "again", Delay: 2 * time.Second},
		llmtest.Reply{Text: "ok"},
	)
	ts := newTestServer(t, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(model, nil), &info)
	id := info["id"].(string)
	base := "/api/conversations/" + id
	ts.must(200, "POST", base+"/goal", map[string]any{"objective": "do the work"}, nil)
	ts.must(409, "POST", base+"/goal", map[string]any{"objective": "another"}, nil)
	ts.must(200, "POST", base+"/goal/stop", nil, nil)
	st := ts.goalStatuses(id)
	if len(st) != 2 || st[1]["status"] != "interrupted" || st[1]["active"] != false {
		t.Fatalf("statuses after stop %v", st)
	}
	ts.waitStatus(id, "finished") // the run went on
	ts.retryWhileBusy("POST", base+"/goal/resume", nil)
	st = ts.waitGoal(id, "complete")
	if last := st[len(st)-1]; last["iteration"] != float64(1) || last["max_iterations"] != float64(10) || last["objective"] != "do the work" {
		t.Fatalf("resumed status %v", last)
	}
	said := chatTexts(model.Requests()[1])
	if len(said) == 0 || !strings.Contains(said[len(said)-1], "interrupted") {
		t.Fatalf("resume message %v", said)
	}

	// A message sent by a person stops the loop.
	ts.waitStatus(id, "finished")
	ts.retryWhileBusy("POST", base+"/goal", map[string]any{"objective": "more"})
	ts.must(200, "POST", base+"/events", userText("stop that", false), nil)
	st = ts.goalStatuses(id)
	if st[len(st)-1]["status"] != "interrupted" {
		t.Fatalf("after a user message: %v", st[len(st)-1])
	}
	ts.waitStatus(id, "finished")
}

// The server keeps SecurityAnalysisEvents only when told to: the
// reference's clients cannot decode the kind.
func TestSecurityAnalysisEventsOption(t *testing.T) {
	for _, keep := range []bool{false, true} {
		model := llmtest.NewChat(t, llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: `{"command":"echo hi","security_risk":"HIGH"}`}}})
		ts := newTestServer(t, &server.Options{SecurityAnalysisEvents: keep})
		var info map[string]any
		ts.must(201, "POST", "/api/conversations", ts.startBody(model, map[string]any{
			"initial_message":     userText("go", true),
			"confirmation_policy": map[string]any{"kind": "ConfirmRisky"},
			"security_analyzer":   map[string]any{"kind": "LLMSecurityAnalyzer"},
		}), &info)
		id := info["id"].(string)
		ts.waitStatus(id, "waiting_for_confirmation")
		var got []map[string]any
		for _, e := range ts.eventsOf(id) {
			if e["kind"] == "SecurityAnalysisEvent" {
				got = append(got, e)
			}
		}
		switch {
		case !keep && len(got) != 0:
			t.Fatalf("default server recorded %v", got)
		case keep && (len(got) != 1 || got[0]["analyzer"] != "LLMSecurityAnalyzer" || got[0]["policy"] != "ConfirmRisky" || !highRisk(got[0]["risks"])):
			t.Fatalf("recorded %v", got)
		}
	}
}

// highRisk reports whether risks (a SecurityAnalysisEvent's, action id to
// risk) rates its one action HIGH.
func highRisk(risks any) bool {
	m, _ := risks.(map[string]any)
	var rs []any
	for _, r := range m {
		rs = append(rs, r)
	}
	return len(rs) == 1 && rs[0] == "HIGH"
}
