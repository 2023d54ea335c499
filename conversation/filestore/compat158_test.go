package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/workspace"
)

// python158Fixture is a conversation written by the reference 1.58.2 with
// testdata/python-v1.58.2/make.py: a PatternSecurityAnalyzer with its
// SecurityAnalysisEvent, an ask_oracle cycle, an unanswered terminal
// action, its lock file and length marker.
const python158Fixture = "testdata/python-v1.58.2/7a1b2c3d4e5f4a6b8c7d9e0f1a2b3c4d"

// futureEvent is an event of a kind a newer reference might write.
const futureEvent = `{"id":"0000000f-1111-4222-8333-444455556666","timestamp":"2026-12-01T10:00:00.000001","source":"environment","payload":{"x":[1,2.0]},"kind":"FutureEvent"}`

func TestReadsPython158Conversation(t *testing.T) {
	dir := copyDir(t, python158Fixture)
	// A newer reference's event kind, appended at the next index.
	if err := os.WriteFile(filepath.Join(dir, "events", "event-00007-0000000f-1111-4222-8333-444455556666.json"), []byte(futureEvent), 0o644); err != nil {
		t.Fatal(err)
	}
	st, err := conversation.OpenID(context.Background(), openFile(t, dir), "7a1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d", &conversation.Options{Cipher: secret.NewCipher("fixture secret key")})
	if err != nil {
		t.Fatal(err)
	}
	f := st.Fields()
	if f.ExecutionStatus != conversation.StatusRunning || f.Tags["origin"] != "python158" {
		t.Errorf("fields: %+v", f)
	}
	if a, ok := f.SecurityAnalyzer.(*security.RuleAnalyzer); !ok || len(a.HighPatterns) == 0 {
		t.Errorf("analyzer %#v", f.SecurityAnalyzer)
	}
	s := st.Events()
	kinds := []string{"MessageEvent", "SecurityAnalysisEvent", "ActionEvent", "ObservationEvent", "ActionEvent", "ObservationEvent", "ActionEvent", "FutureEvent"}
	if s.Len() != len(kinds) {
		t.Fatalf("Len = %d, want %d", s.Len(), len(kinds))
	}
	for i, k := range kinds {
		ent, _ := s.Entry(i)
		if ent.Kind != k {
			t.Errorf("event %d kind %s, want %s", i, ent.Kind, k)
		}
		raw, _ := s.Raw(t.Context(), i)
		ev, err := s.Event(t.Context(), i)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if b, _ := event.Marshal(ev); !bytes.Equal(b, raw) {
			t.Errorf("event %d re-encodes differently:\n got %s\nwant %s", i, b, raw)
		}
	}
	if ev, _ := s.Event(t.Context(), 7); !event.IsUnknownKind(ev) {
		t.Errorf("event 7 is %T", ev)
	}
	un := conversation.UnmatchedActions(s.Entries())
	if len(un) != 1 || un[0].ToolCallID != "call_3" {
		t.Fatalf("unmatched = %+v", un)
	}
	// gohands appends after the unknown event and writes the state back;
	// the analyzer keeps the reference's lists.
	if _, err := st.Append(&event.PauseEvent{Base: event.NewBase(event.SourceUser)}); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	base, _ := os.ReadFile(filepath.Join(dir, filestore.BaseStateFile))
	if !bytes.Contains(base, []byte(`"kind":"PatternSecurityAnalyzer"`)) || !bytes.Contains(base, []byte(`exec.destruct.rm_rf`)) {
		t.Errorf("base state lost the analyzer: %.300s", base)
	}
	if m := markers(t, dir); len(m) != 1 || m[0] != ".eventlog-len-9.marker" {
		t.Errorf("markers %v", m)
	}
}

// A 1.58.2 conversation with a truncated event file in the middle is
// refused with an error naming the file, and nothing is changed; a
// truncated last file is set aside, not deleted.
func TestTruncated158Files(t *testing.T) {
	dir := copyDir(t, python158Fixture)
	names, _ := filepath.Glob(filepath.Join(dir, "events", "event-*.json"))
	mid := names[3]
	data, _ := os.ReadFile(mid)
	if err := os.WriteFile(mid, data[:len(data)/2], 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := openLog(dir, nil)
	var d *filestore.DamageError
	if !errors.As(err, &d) || d.File != filepath.Base(mid) {
		t.Fatalf("open: %v, want a DamageError naming %s", err, filepath.Base(mid))
	}
	if got, _ := os.ReadFile(mid); len(got) != len(data)/2 {
		t.Fatal("the damaged file was changed")
	}

	dir = copyDir(t, python158Fixture)
	names, _ = filepath.Glob(filepath.Join(dir, "events", "event-*.json"))
	last := names[len(names)-1]
	data, _ = os.ReadFile(last)
	os.WriteFile(last, data[:len(data)/3], 0o644)
	s := openLogT(t, dir)
	defer s.Close()
	if s.Len() != len(names)-1 {
		t.Fatalf("Len = %d", s.Len())
	}
	if kept, err := os.ReadFile(last + filestore.TornSuffix); err != nil || len(kept) != len(data)/3 {
		t.Fatalf("torn file not kept: %v", err)
	}
}

// A real reference 1.58.2 reads a conversation gohands wrote with its rule
// analyzer (persisted as PatternSecurityAnalyzer), a SecurityAnalysisEvent
// and a critic_result: every event re-dumps to the bytes on disk.
func TestReference158ReadsGohands(t *testing.T) {
	// In parallel with the other reference test: each waits seconds on
	// the reference's import; neither uses SetWriteFault, whose tests run
	// before the parallel ones.
	t.Parallel()
	py := testenv.Reference158Python(t)
	const id = "0f6e1d2c-3b4a-4958-8776-a5b4c3d2e1f1"
	dir := filestore.Dir(t.TempDir(), id)
	f := conversation.NewFields(id, &convtest.Agent{LLM: []byte(`{"model":"gpt-4o","usage_id":"agent"}`), Tools: []any{}}, &workspace.Local{WorkingDir: "/workspace/project"})
	f.ConfirmationPolicy = security.NewConfirmRisky()
	f.SecurityAnalyzer = &security.RuleAnalyzer{WorkDir: "/workspace/project"}
	st, err := conversation.Create(context.Background(), openFile(t, dir), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := convtest.UserMessage("List the files")
	a, o := convtest.ActionCycle(1, 100)
	o.ActionID = a.ID
	msg := "looks complete"
	a.CriticResult = &event.CriticResult{Score: 0.75, Message: &msg}
	rec := &event.SecurityAnalysisEvent{Base: event.NewBase(event.SourceEnvironment), Analyzer: "PatternSecurityAnalyzer", Policy: "ConfirmRisky",
		Risks: event.ActionRisks{{ActionID: a.ID, Risk: event.RiskLow}}, Details: event.ActionDetails{{ActionID: a.ID, Detail: []byte(`{"rules":[]}`)}}}
	for _, e := range []event.Event{m, rec, a, o} {
		if _, err := st.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	cmd := exec.Command(py, filepath.Join("testdata", "python-v1.58.2", "check.py"), dir, id, "4")
	cmd.Env = refenv.Env(home, "OPENHANDS_SUPPRESS_BANNER=1")
	out, err := cmd.CombinedOutput()
	if err != nil || !bytes.Contains(out, []byte("ok ['MessageEvent', 'SecurityAnalysisEvent', 'ActionEvent', 'ObservationEvent']")) {
		t.Fatalf("the reference 1.58.2 does not read gohands' conversation: %v\n%s", err, out)
	}
}
