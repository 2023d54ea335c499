package conversation

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"reflect"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
)

// controlsReference is testdata/controls_reference.json, recorded from the
// reference by testdata/gen_controls.py.
type controlsReference struct {
	InterruptEvent   map[string]any `json:"interrupt_event"`
	PauseEvent       map[string]any `json:"pause_event"`
	BudgetErrorEvent map[string]any `json:"budget_error_event"`
	FallbackTitles   [][]any        `json:"fallback_titles"`
	// GoalEvents are raw event JSON, compared byte for byte.
	GoalEvents          []string       `json:"goal_events"`
	GoalOutcome         map[string]any `json:"goal_outcome"`
	GoalRequestDefaults map[string]any `json:"goal_request_defaults"`
}

func readControlsReference(t *testing.T) controlsReference {
	t.Helper()
	data, err := os.ReadFile("testdata/controls_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref controlsReference
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	return ref
}

// asMap encodes e as gohands writes it and decodes it as a map.
func asMap(t *testing.T, e event.Event) map[string]any {
	t.Helper()
	b, err := event.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

// The events the controls write, and the texts readers see, are the
// reference's.
func TestControlsMatchReference(t *testing.T) {
	ref := readControlsReference(t)
	base := func(src event.Source) event.Base {
		b := event.NewBase(src)
		b.ID, b.Timestamp = "5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "2026-11-24T01:02:03.456789"
		return b
	}
	if got := asMap(t, &event.InterruptEvent{Base: base(event.SourceUser)}); !reflect.DeepEqual(got, ref.InterruptEvent) {
		t.Errorf("InterruptEvent\n got %v\nwant %v", got, ref.InterruptEvent)
	}
	if got := asMap(t, &event.PauseEvent{Base: base(event.SourceUser)}); !reflect.DeepEqual(got, ref.PauseEvent) {
		t.Errorf("PauseEvent\n got %v\nwant %v", got, ref.PauseEvent)
	}
	detail := budgetDetail(0.3, 0.36)
	cls := event.ClassifyError(CodeMaxBudget, detail)
	ce := &event.ConversationErrorEvent{Base: base(event.SourceEnvironment), Code: CodeMaxBudget, Detail: detail, Classification: &cls}
	if got := asMap(t, ce); !reflect.DeepEqual(got, ref.BudgetErrorEvent) {
		t.Errorf("MaxBudgetReached\n got %v\nwant %v", got, ref.BudgetErrorEvent)
	}
	for _, c := range ref.FallbackTitles {
		msg, n, want := c[0].(string), int(c[1].(float64)), c[2].(string)
		if got := shorten(msg, n); got != want {
			t.Errorf("shorten(%q, %d) = %q, want %q", msg, n, got, want)
		}
	}
}

// A goal loop's statuses are written byte for byte as the reference's
// server writes them, and GoalOutcome has the reference's fields.
func TestGoalStatusMatchesReference(t *testing.T) {
	ref := readControlsReference(t)
	const goal = "add calc.go with passing tests"
	statuses := []GoalStatus{
		{Active: true, Status: GoalRunning, MaxIterations: 10, Objective: goal},
		{Active: true, Status: GoalRunning, Iteration: 1, MaxIterations: 10, Objective: goal,
			Verdict: &GoalVerdict{Score: 0.4, Missing: "no test was run"}},
		{Status: GoalComplete, Iteration: 2, MaxIterations: 10, Objective: goal, Verdict: &GoalVerdict{Score: 1, Complete: true}},
		{Status: GoalInterrupted, Iteration: 1, MaxIterations: 3, Objective: "é\n\"q\""},
	}
	if len(ref.GoalEvents) != len(statuses) {
		t.Fatalf("%d reference events, %d here", len(ref.GoalEvents), len(statuses))
	}
	for i, s := range statuses {
		b := event.NewBase(event.SourceEnvironment)
		b.ID, b.Timestamp = "5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b", "2026-11-24T01:02:03.456789"
		got, err := event.Marshal(&event.ConversationStateUpdateEvent{Base: b, Key: GoalKey, Value: s})
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
		var back GoalStatus
		raw, _ := json.Marshal(e.(*event.ConversationStateUpdateEvent).Value)
		if err := json.Unmarshal(raw, &back); err != nil || !reflect.DeepEqual(back, s) {
			t.Errorf("status %d read back as %+v (%v)", i, back, err)
		}
	}
	out, err := json.Marshal(GoalOutcome{Status: GoalCapped, Iterations: 2, Verdict: GoalVerdict{Missing: "x"}})
	if err != nil {
		t.Fatal(err)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil || !reflect.DeepEqual(got, ref.GoalOutcome) {
		t.Errorf("GoalOutcome\n got %v\nwant %v", got, ref.GoalOutcome)
	}
	if ref.GoalRequestDefaults["max_iterations"] != float64(DefaultGoalIterations) {
		t.Errorf("the reference's default bound is %v", ref.GoalRequestDefaults["max_iterations"])
	}
}

// The recorded fixture is what the installed reference says today.
func TestControlsReferenceFixture(t *testing.T) {
	py := testenv.ReferencePython(t)
	cmd := exec.Command(py, "testdata/gen_controls.py")
	// refenv's quiet environment: without it LiteLLM's import tries to
	// download its model prices, seconds of retries offline.
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd.Env = refenv.Env(home)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("gen_controls.py: %v", err)
	}
	want, err := os.ReadFile("testdata/controls_reference.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(out), bytes.TrimSpace(want)) {
		t.Fatalf("testdata/controls_reference.json is stale; regenerate it with\n  %s conversation/testdata/gen_controls.py > conversation/testdata/controls_reference.json\ngot:\n%s", py, out)
	}
}
