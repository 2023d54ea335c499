package goal

import (
	"encoding/json"
	"os"
	"reflect"
	"testing"

	"github.com/gohands/gohands/event"
)

// reference is the goal part of conversation/testdata/controls_reference.json,
// recorded from the reference by conversation/testdata/gen_controls.py
// (TestControlsReferenceFixture in conversation checks it is current).
type reference struct {
	// GoalEvents are raw event JSON, compared byte for byte.
	GoalEvents          []string       `json:"goal_events"`
	GoalOutcome         map[string]any `json:"goal_outcome"`
	GoalRequestDefaults map[string]any `json:"goal_request_defaults"`
}

func readReference(t *testing.T) reference {
	t.Helper()
	data, err := os.ReadFile("../testdata/controls_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref reference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// A goal loop's statuses are written byte for byte as the reference's
// server writes them, and Outcome has the reference's fields.
func TestStatusMatchesReference(t *testing.T) {
	ref := readReference(t)
	const goal = "add calc.go with passing tests"
	statuses := []Status{
		{Active: true, Status: Running, MaxIterations: 10, Objective: goal},
		{Active: true, Status: Running, Iteration: 1, MaxIterations: 10, Objective: goal,
			Verdict: &Verdict{Score: 0.4, Missing: "no test was run"}},
		{Status: Complete, Iteration: 2, MaxIterations: 10, Objective: goal, Verdict: &Verdict{Score: 1, Complete: true}},
		{Status: Interrupted, Iteration: 1, MaxIterations: 3, Objective: "é\n\"q\""},
	}
	if len(ref.GoalEvents) != len(statuses) {
		t.Fatalf("%d reference events, %d here", len(ref.GoalEvents), len(statuses))
	}
	for i, s := range statuses {
		b := event.NewBase(event.SourceEnvironment)
		b.ID, b.Timestamp = "5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "2026-11-24T01:02:03.456789"
		got, err := event.Marshal(&event.ConversationStateUpdateEvent{Base: b, Key: Key, Value: s})
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != ref.GoalEvents[i] {
			t.Errorf("goal status %d\n got %s\nwant %s", i, got, ref.GoalEvents[i])
		}
		// Read back (as ResumeGoal reads it), the status is the same.
		e, err := event.Unmarshal(got)
		if err != nil {
			t.Fatal(err)
		}
		var back Status
		raw, _ := json.Marshal(e.(*event.ConversationStateUpdateEvent).Value)
		if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("status %d read back as %+v (%v)", i, back, err)
		}
	}
	out, err := json.Marshal(Outcome{Status: Capped, Iterations: 2, Verdict: Verdict{Missing: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, ref.GoalOutcome) {
		t.Errorf("GoalOutcome\n got %v\nwant %v", got, ref.GoalOutcome)
	}
	if ref.GoalRequestDefaults["max_iterations"] != float64(DefaultIterations) {
		t.Errorf("the reference's default bound is %v", ref.GoalRequestDefaults["max_iterations"])
	}
}
