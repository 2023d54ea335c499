package filestore_test

import (
	"bytes"
	"context"
	"fmt"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/workspace"

	"github.com/gohands/gohands/internal/golden"
)

// pythonFixture is a conversation written by the Python reference (v1.43.1)
// with testdata/python-v1.43.1/make.py: a user message, an answered terminal
// action, an unanswered one, status running, a ConfirmRisky policy and a
// secret encrypted with the key "fixture secret key".
const pythonFixture = "testdata/python-v1.43.1/5d3f2c1b0a9e4d8cb7a61f2e3d4c5b6a"

// copyDir copies a fixture so that tests can open (and lock) it.
func copyDir(t *testing.T, from string) string {
	t.Helper()
	to := filepath.Join(t.TempDir(), filepath.Base(from))
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return to
}

func TestReadsPythonConversation(t *testing.T) {
	dir := copyDir(t, pythonFixture)
	st, err := conversation.OpenID(context.Background(), openFile(t, dir), "5d3f2c1b-0a9e-4d8c-b7a6-1f2e3d4c5b6a", &conversation.Options{Cipher: secret.NewCipher("fixture secret key")})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	f := st.Fields()
	if f.ExecutionStatus != conversation.StatusRunning || f.Tags["origin"] != "python" {
		t.Errorf("fields: %+v", f)
	}
	if p, ok := f.ConfirmationPolicy.(*security.ConfirmRisky); !ok || *p != *security.NewConfirmRisky() {
		t.Errorf("policy %#v", f.ConfirmationPolicy)
	}
	if w, ok := f.Workspace.(*workspace.Local); !ok || w.WorkingDir != "/workspace/project" {
		t.Errorf("workspace %#v", f.Workspace)
	}
	if v, _ := f.SecretRegistry.Sources["GITHUB_TOKEN"].Resolve(t.Context()); v != "ghp_fixture" {
		t.Errorf("secret decrypted to %q", v)
	}
	s := st.Events()
	kinds := []string{"MessageEvent", "ActionEvent", "ObservationEvent", "ActionEvent"}
	if s.Len() != len(kinds) {
		t.Fatalf("Len = %d", s.Len())
	}
	for i, k := range kinds {
		ent, _ := s.Entry(i)
		if ent.Kind != k {
			t.Errorf("event %d kind %s, want %s", i, ent.Kind, k)
		}
		// Each event decodes and re-encodes to the reference's exact bytes.
		raw, _ := s.Raw(t.Context(), i)
		ev, err := s.Event(t.Context(), i)
		if err != nil {
			t.Fatalf("event %d: %v", i, err)
		}
		if b, _ := event.Marshal(ev); !bytes.Equal(b, raw) {
			t.Errorf("event %d re-encodes differently:\n got %s\nwant %s", i, b, raw)
		}
	}
	un := conversation.UnmatchedActions(s.Entries())
	if len(un) != 1 || un[0].ToolCallID != "call_2" {
		t.Fatalf("unmatched = %+v", un)
	}
	ev, err := st.RecoverRunning()
	if err != nil || ev == nil || ev.ToolCallID != "call_2" || ev.ToolName != "terminal" || ev.ParentID != un[0].ID {
		t.Fatalf("recovery: %+v, %v", ev, err)
	}
}

// TestGoldenGoConversation writes a conversation with fixed ids and times
// and compares the directory with testdata/gohands/. The Python reference
// loads that directory (checked with testdata/gohands/check.py).
func TestGoldenGoConversation(t *testing.T) {
	const id = "0f6e1d2c-3b4a-4958-8776-a5b4c3d2e1f0"
	base := t.TempDir()
	dir := filestore.Dir(base, id)
	f := conversation.NewFields(id, &convtest.Agent{LLM: []byte(`{"model":"gpt-4o","usage_id":"agent"}`), Tools: []any{}}, &workspace.Local{WorkingDir: "/workspace/project"})
	f.PersistenceDir = "workspace/conversations/0f6e1d2c3b4a49588776a5b4c3d2e1f0"
	f.ConfirmationPolicy = security.NewConfirmRisky()
	f.SecretRegistry.SetValue("GITHUB_TOKEN", "ghp_golden")
	f.Tags = map[string]string{"origin": "gohands"}
	st, err := conversation.Create(context.Background(), openFile(t, dir), f, nil)
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 8, 22, 10, 15, 3, 482911000, time.Local)
	n := 0
	fix := func(b *event.Base) {
		b.ID = fmt.Sprintf("00000000-0000-4000-8000-%012d", n)
		b.Timestamp = event.FormatTime(t0.Add(time.Duration(n) * time.Second))
		n++
	}
	m := convtest.UserMessage("List the files")
	fix(&m.Base)
	a, o := convtest.ActionCycle(1, 100)
	fix(&a.Base)
	fix(&o.Base)
	o.ActionID = a.ID
	a2, _ := convtest.ActionCycle(2, 10)
	fix(&a2.Base)
	for _, e := range []event.Event{m, a, o, a2} {
		if _, err := st.Append(e); err != nil {
			t.Fatal(err)
		}
	}
	st.Update(func(f *conversation.Fields) error { f.ExecutionStatus = conversation.StatusRunning; return nil })
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	goldenDir := filepath.Join("testdata", "gohands", filepath.Base(dir))
	var names []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.HasPrefix(d.Name(), ".") {
			rel, _ := filepath.Rel(dir, p)
			names = append(names, rel)
		}
		return err
	})
	if golden.Update() {
		os.RemoveAll(goldenDir) // files no longer written go too
	}
	for _, rel := range names {
		got, _ := os.ReadFile(filepath.Join(dir, rel))
		golden.Check(t, filepath.Join(goldenDir, rel), got)
	}
	if len(names) != 5 {
		t.Errorf("wrote %d files: %v", len(names), names)
	}
}
