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
	// The goal loop's and the titles' parts are checked in
	// conversation/goal and conversation/title.
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
