package conversation_test

import (
	"context"
	"encoding/json"
	"errors"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/workspace"
)

func TestBaseStateJSON(t *testing.T) {
	s := conversation.NewMemoryStore()
	f := convtest.NewFields()
	f.ID = "8b1f0c2d-9e3a-4b5c-6d7e-8f9012345678"
	st, err := conversation.Create(context.Background(), s, f, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := s.ReadBase(context.Background())
	const want = `{"id":"8b1f0c2d-9e3a-4b5c-6d7e-8f9012345678",` +
		`"agent":{"llm":{"model":"gpt-4o","usage_id":"agent"},"tools":[],"kind":"Agent"},` +
		`"workspace":{"working_dir":"/tmp/work","kind":"LocalWorkspace"},` +
		`"max_iterations":500,"stuck_detection":true,"execution_status":"idle",` +
		`"confirmation_policy":{"kind":"NeverConfirm"},"activated_knowledge_skills":[],` +
		`"activated_path_rules":[],"invoked_skills":[],"blocked_actions":{},"blocked_messages":{},` +
		`"head_is_empty":false,"stats":{"usage_to_metrics":{}},"secret_registry":{"secret_sources":{}},` +
		`"tags":{},"agent_state":{}}`
	if string(b) != want {
		t.Fatalf("base state\n got %s\nwant %s", b, want)
	}
	if st.Fields().ExecutionStatus != conversation.StatusIdle {
		t.Error("status not idle")
	}
	if _, err := conversation.Create(context.Background(), s, f, nil); !errors.Is(err, conversation.ErrExists) {
		t.Errorf("second Create: err = %v", err)
	}
}

func TestBaseStateSlotsAndDefaults(t *testing.T) {
	// Fields absent from an older base state take their defaults.
	old := `{"id":"x-1","agent":{"llm":{},"tools":[],"kind":"Agent"},"workspace":{"working_dir":"/w","kind":"LocalWorkspace"},"unknown_future_field":1}`
	f, err := conversation.DecodeFields([]byte(old), nil)
	if err != nil {
		t.Fatal(err)
	}
	if f.MaxIterations != 500 || !f.StuckDetection || f.ExecutionStatus != conversation.StatusIdle ||
		f.PersistenceDir != conversation.DefaultPersistenceDir {
		t.Errorf("defaults: %+v", f)
	}
	if _, ok := f.Policy().(*security.NeverConfirm); !ok {
		t.Errorf("default policy %T", f.Policy())
	}
	for _, c := range []struct{ json, wantErr string }{
		{strings.Replace(old, `"unknown_future_field":1`, `"confirmation_policy":{"kind":"LocalWorkspace","working_dir":"/"}`, 1), "not a security.ConfirmationPolicy"},
		{strings.Replace(old, `"unknown_future_field":1`, `"security_analyzer":{"kind":"NeverConfirm"}`, 1), "not a security.Analyzer"},
		{strings.Replace(old, `"unknown_future_field":1`, `"execution_status":"sleeping"`, 1), "sleeping"},
		{strings.Replace(old, `"unknown_future_field":1`, `"max_iterations":0`, 1), "max_iterations"},
		{strings.Replace(old, `"unknown_future_field":1`, `"tags":{"Bad-Key":"v"}`, 1), "Bad-Key"},
	} {
		_, err := conversation.DecodeFields([]byte(c.json), nil)
		if err == nil || !strings.Contains(err.Error(), c.wantErr) {
			t.Errorf("DecodeFields: err = %v, want one naming %q", err, c.wantErr)
		}
	}
	// A workspace of a kind this build does not know (a newer reference's)
	// is kept as read, not refused.
	mars := strings.Replace(old, `"kind":"LocalWorkspace"`, `"kind":"MarsWorkspace"`, 1)
	if f, err := conversation.DecodeFields([]byte(mars), nil); err != nil {
		t.Errorf("DecodeFields(MarsWorkspace): %v", err)
	} else if u, ok := f.Workspace.(*event.Unknown); !ok || u.KindName != "MarsWorkspace" {
		t.Errorf("MarsWorkspace decoded as %#v", f.Workspace)
	}
	// A set policy and tags round-trip.
	st, err := conversation.Create(context.Background(), conversation.NewMemoryStore(), convtest.NewFields(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(func(f *conversation.Fields) error {
		f.ConfirmationPolicy = &security.ConfirmRisky{Threshold: event.RiskMedium}
		f.Tags = map[string]string{"team": "core"}
		f.BlockedActions = map[string]string{"a1": "hook said no"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := st.Events().Store().ReadBase(context.Background())
	if !strings.Contains(string(b), `"confirmation_policy":{"threshold":"MEDIUM","confirm_unknown":false,"kind":"ConfirmRisky"}`) {
		t.Errorf("policy not written: %s", b)
	}
	f2, err := conversation.DecodeFields(b, nil)
	if err != nil || !f2.Policy().ShouldConfirm(event.RiskMedium) || f2.Tags["team"] != "core" || f2.BlockedActions["a1"] == "" {
		t.Errorf("reload: %+v, %v", f2, err)
	}
}

func TestSecretsInBaseState(t *testing.T) {
	for _, withCipher := range []bool{false, true} {
		var c *secret.Cipher
		if withCipher {
			c = secret.NewCipher("server key")
		}
		dir := t.TempDir()
		store := openFile(t, dir)
		f := convtest.NewFields()
		f.Agent.(*convtest.Agent).APIKey = secret.New("sk-live-123")
		f.SecretRegistry.SetValue("GITHUB_TOKEN", "ghp_abc")
		st, err := conversation.Create(context.Background(), store, f, &conversation.Options{Cipher: c})
		if err != nil {
			t.Fatal(err)
		}
		st.Close()
		raw, _ := os.ReadFile(filepath.Join(dir, filestore.BaseStateFile))
		if strings.Contains(string(raw), "sk-live-123") || strings.Contains(string(raw), "ghp_abc") {
			t.Fatalf("plaintext secret on disk: %s", raw)
		}
		if got := strings.Count(string(raw), `"gAAAAA`); withCipher && got != 2 {
			t.Errorf("want 2 Fernet tokens on disk, got %d: %s", got, raw)
		}
		if got := strings.Count(string(raw), secret.Redacted); !withCipher && got != 2 {
			t.Errorf("want 2 redacted secrets on disk, got %d: %s", got, raw)
		}
		st, err = conversation.Open(context.Background(), openFile(t, dir), &conversation.Options{Cipher: c})
		if err != nil {
			t.Fatal(err)
		}
		key := st.Fields().Agent.(*convtest.Agent).APIKey.Value()
		tok, _ := st.Fields().SecretRegistry.Sources["GITHUB_TOKEN"].Resolve(t.Context())
		if withCipher && (key != "sk-live-123" || tok != "ghp_abc") {
			t.Errorf("with cipher, secrets came back as %q, %q", key, tok)
		}
		if !withCipher && (key != "" || tok != "") {
			t.Errorf("without cipher, redacted secrets came back as %q, %q", key, tok)
		}
		// A wrong key loses the secrets but not the conversation.
		if withCipher {
			st.Close()
			st, err = conversation.Open(context.Background(), openFile(t, dir), &conversation.Options{Cipher: secret.NewCipher("other")})
			if err != nil {
				t.Fatalf("wrong key: %v", err)
			}
			if k := st.Fields().Agent.(*convtest.Agent).APIKey; !k.IsZero() {
				t.Errorf("wrong key decrypted to %q", k.Value())
			}
		}
		st.Close()
	}
}

func TestEventTree(t *testing.T) {
	st, err := conversation.Create(context.Background(), conversation.NewMemoryStore(), convtest.NewFields(), nil)
	if err != nil {
		t.Fatal(err)
	}
	m := convtest.UserMessage("hi")
	if _, err := st.Append(m); err != nil {
		t.Fatal(err)
	}
	if m.ParentID != "" {
		t.Errorf("first event parent = %q, want none", m.ParentID)
	}
	a, o := convtest.ActionCycle(1, 10)
	st.Append(a)
	st.Append(o)
	if a.ParentID != m.ID || o.ParentID != a.ID {
		t.Errorf("parents: %q %q", a.ParentID, o.ParentID)
	}
	f := st.Fields()
	if f.LeafEventID != o.ID || f.LastUserMessageID != m.ID {
		t.Errorf("leaf %q last user %q", f.LeafEventID, f.LastUserMessageID)
	}
	// A state update is stamped but does not move HEAD.
	up := &event.ConversationStateUpdateEvent{Base: event.NewBase(event.SourceEnvironment), Key: "k", Value: 1}
	st.Append(up)
	if up.ParentID != o.ID || st.Fields().LeafEventID != o.ID {
		t.Errorf("state update: parent %q, leaf %q", up.ParentID, st.Fields().LeafEventID)
	}
	// An emptied HEAD over a non-empty log makes the next event a root.
	st.Update(func(f *conversation.Fields) error { f.LeafEventID, f.HeadIsEmpty = "", true; return nil })
	r := convtest.UserMessage("new branch")
	st.Append(r)
	if r.ParentID != event.RootParentID || st.Fields().HeadIsEmpty {
		t.Errorf("new root: parent %q, head_is_empty %v", r.ParentID, st.Fields().HeadIsEmpty)
	}
	br, err := st.ActiveBranch()
	if err != nil || len(br) != 1 || br[0].ID != r.ID {
		t.Errorf("active branch = %v, %v", br, err)
	}
	st.Update(func(f *conversation.Fields) error { f.LeafEventID = o.ID; return nil })
	br, _ = st.ActiveBranch()
	var ids []string
	for _, e := range br {
		ids = append(ids, e.ID)
	}
	if !slices.Equal(ids, []string{m.ID, a.ID, o.ID}) {
		t.Errorf("branch after navigation = %v", ids)
	}
}

func TestHeadFastForwardOnOpen(t *testing.T) {
	dir := t.TempDir()
	st, err := conversation.Create(context.Background(), openFile(t, dir), convtest.NewFields(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var last event.Event
	for i := range 5 {
		a, o := convtest.ActionCycle(i, 100)
		st.Append(a)
		st.Append(o)
		last = o
	}
	// No Flush: base_state.json still has no HEAD, as after a crash.
	st.Events().Store().Close()
	b, _ := os.ReadFile(filepath.Join(dir, filestore.BaseStateFile))
	if strings.Contains(string(b), "leaf_event_id") {
		t.Fatal("HEAD was written on append; this test needs it deferred")
	}
	st2, err := conversation.Open(context.Background(), openFile(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	// The legacy rule finds the same leaf; now with a stale explicit leaf.
	first, _ := st2.Events().Entry(0)
	st2.Update(func(f *conversation.Fields) error { f.LeafEventID = first.ID; return nil })
	st2.Events().Store().Close()
	st3, err := conversation.Open(context.Background(), openFile(t, dir), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer st3.Close()
	if got := st3.Fields().LeafEventID; got != last.EventBase().ID {
		t.Errorf("HEAD after open = %s, want %s", got, last.EventBase().ID)
	}
}

func TestCallbacksInCommitOrder(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	var changes []string
	opts := &conversation.Options{
		OnEvent: func(e event.Event) { mu.Lock(); seen = append(seen, e.EventBase().ID); mu.Unlock() },
		OnChange: func(key string, v json.RawMessage) {
			mu.Lock()
			changes = append(changes, key+"="+string(v))
			mu.Unlock()
		},
	}
	st, err := conversation.Create(context.Background(), conversation.NewMemoryStore(), convtest.NewFields(), opts)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := range 50 {
				if _, err := st.Append(&event.PauseEvent{Base: event.NewBase(event.SourceUser)}); err != nil {
					t.Error(err)
				}
				if i%10 == 0 {
					st.Update(func(f *conversation.Fields) error { f.MaxIterations = 100 + w; return nil })
				}
				_ = st.Fields().LeafEventID // reads never block
			}
		})
	}
	wg.Wait()
	var logIDs []string
	for _, e := range st.Events().Entries() {
		logIDs = append(logIDs, e.ID)
	}
	if !slices.Equal(seen, logIDs) {
		t.Fatalf("OnEvent order differs from log order (%d vs %d events)", len(seen), len(logIDs))
	}
	if len(changes) == 0 || !strings.HasPrefix(changes[0], "max_iterations=") {
		t.Errorf("changes = %v", changes)
	}
	for _, c := range changes {
		if strings.HasPrefix(c, "leaf_event_id") || strings.HasPrefix(c, "head_is_empty") {
			t.Errorf("HEAD move reported as a change: %s", c)
		}
	}
}

func TestUpdateValidation(t *testing.T) {
	st, err := conversation.Create(context.Background(), conversation.NewMemoryStore(), convtest.NewFields(), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = st.Update(func(f *conversation.Fields) error { f.MaxIterations = -1; return nil })
	if err == nil || st.Fields().MaxIterations != 500 {
		t.Errorf("invalid update: err %v, max_iterations %d", err, st.Fields().MaxIterations)
	}
	_ = workspace.Local{}
}

func openFile(t testing.TB, dir string) *filestore.Store {
	t.Helper()
	s, err := filestore.Open(dir, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecoverRunningAfterFinish: a process that died after storing the
// finish tool's observation, before storing status finished, left a
// finished conversation; recovery says so instead of error (a server
// resuming it would otherwise ask the model for a step after the finish).
// Anything after that observation (a stop hook's feedback) means the run
// was not over.
func TestRecoverRunningAfterFinish(t *testing.T) {
	for _, c := range []struct {
		name  string
		after []event.Event
		want  conversation.ExecutionStatus
	}{
		{"finish last", nil, conversation.StatusFinished},
		{"message after", []event.Event{convtest.UserMessage("keep going")}, conversation.StatusError},
	} {
		t.Run(c.name, func(t *testing.T) {
			st, err := conversation.Create(t.Context(), conversation.NewMemoryStore(), convtest.NewFields(), nil)
			if err != nil {
				t.Fatal(err)
			}
			work, workObs := convtest.ActionCycle(1, 100)
			fin, finObs := convtest.ActionCycle(2, 10)
			fin.ToolName, finObs.ToolName = "finish", "finish"
			evs := append([]event.Event{convtest.UserMessage("do it"), work, workObs, fin, finObs}, c.after...)
			for _, e := range evs {
				if _, err := st.Append(e); err != nil {
					t.Fatal(err)
				}
			}
			if err := st.Update(func(f *conversation.Fields) error { f.ExecutionStatus = conversation.StatusRunning; return nil }); err != nil {
				t.Fatal(err)
			}
			n := st.Events().Len()
			ev, err := st.RecoverRunning()
			if err != nil || ev != nil {
				t.Fatalf("RecoverRunning = %v, %v; want no event", ev, err)
			}
			if got := st.Fields().ExecutionStatus; got != c.want {
				t.Errorf("status = %s, want %s", got, c.want)
			}
			if st.Events().Len() != n {
				t.Errorf("recovery wrote %d events", st.Events().Len()-n)
			}
		})
	}
}
