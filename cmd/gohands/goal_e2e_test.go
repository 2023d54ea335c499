package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation/goal"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
)

// gohands run --goal N: the judge finds the first run short, the agent is
// told what is missing, the second run meets the goal; the statuses are in
// the log.
func TestE2EGoal(t *testing.T) {
	t.Parallel()
	e := newE2E(t, finishReply("wrote it"),
		llmtest.Reply{Text: `{"score": 0.2, "complete": false, "missing": "the tests were not run"}`},
		finishReply("tests pass"),
		llmtest.Reply{Text: `{"score": 1.0, "complete": true, "missing": ""}`})
	r := e.mustRun(0, e.args("--goal", "3", "write it and run its tests")...)
	if !strings.Contains(r.stderr, "goal complete after 2 judged run(s)") {
		t.Errorf("stderr:\n%s", r.stderr)
	}
	reqs := e.srv.Requests()
	if len(reqs) != 4 || !strings.Contains(string(reqs[2].RawBody), "the tests were not run") {
		t.Fatalf("%d model calls; the third lacks the judge's account", len(reqs))
	}
	evs, _ := e.events()
	var statuses []string
	for _, u := range ofKind[*event.ConversationStateUpdateEvent](evs) {
		if u.Key == goal.Key {
			b, err := json.Marshal(u.Value)
			if err != nil {
				t.Fatal(err)
			}
			statuses = append(statuses, string(b))
		}
	}
	if len(statuses) != 3 || !strings.Contains(statuses[2], `"status":"complete"`) {
		t.Fatalf("goal statuses %v", statuses)
	}
	e.mustRun(exitUsage, e.args("--goal", "-1", "x")...)
}
