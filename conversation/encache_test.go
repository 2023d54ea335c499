package conversation_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/internal/convtest"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/workspace"
)

// TestSlotCacheEncoding checks that base_state.json, written with the
// State's cached encodings of the agent and the workspace, is byte for byte
// the full encoding of the fields after every change (stats, a new agent, a
// new workspace, none), so that a stale member never reaches the disk; and,
// with a cipher, that a replaced agent's secret is the one stored.
func TestSlotCacheEncoding(t *testing.T) {
	ctx := context.Background()
	for _, withCipher := range []bool{false, true} {
		var c *secret.Cipher
		if withCipher {
			c = secret.NewCipher("server key")
		}
		store := conversation.NewMemoryStore()
		f := convtest.NewFields()
		f.Agent.(*convtest.Agent).APIKey = secret.New("sk-first")
		st, err := conversation.Create(ctx, store, f, &conversation.Options{Cipher: c})
		if err != nil {
			t.Fatal(err)
		}
		check := func(step string, wantIn ...string) {
			t.Helper()
			got, err := store.ReadBase(ctx)
			if err != nil {
				t.Fatal(err)
			}
			for _, w := range wantIn {
				if !strings.Contains(string(got), w) {
					t.Errorf("cipher %v, %s: %q not on disk: %s", withCipher, step, w, got)
				}
			}
			if withCipher {
				// Fernet tokens differ at each encoding: compare what decodes.
				d, err := conversation.DecodeFields(got, c)
				if err != nil {
					t.Fatal(err)
				}
				if k := d.Agent.(*convtest.Agent).APIKey.Value(); k != st.Fields().Agent.(*convtest.Agent).APIKey.Value() {
					t.Errorf("%s: stored key %q, want the current agent's", step, k)
				}
				d.PersistenceDir = st.Fields().PersistenceDir // absent: decoded as the default
				got, _ = json.Marshal(d)
			}
			want, err := json.Marshal(st.Fields()) // the full encoding, no cache
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != string(want) {
				t.Errorf("cipher %v, %s: base state\n got %s\nwant %s", withCipher, step, got, want)
			}
		}
		check("created")
		for i := range 3 {
			if err := st.Update(func(f *conversation.Fields) error {
				m := llm.Metrics{ModelName: "gpt-4o", AccumulatedCost: float64(i + 1)}
				f.Stats.UsageToMetrics = map[string]*llm.Metrics{"agent": &m}
				return nil
			}); err != nil {
				t.Fatal(err)
			}
			check("stats", `"accumulated_cost":`+[]string{"1.0", "2.0", "3.0"}[i])
		}
		if err := st.Update(func(f *conversation.Fields) error {
			a := *f.Agent.(*convtest.Agent)
			a.LLM = json.RawMessage(`{"model":"claude-sonnet","usage_id":"agent"}`)
			a.APIKey = secret.New("sk-second")
			f.Agent = &a
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		check("new agent", `"model":"claude-sonnet"`)
		if err := st.Update(func(f *conversation.Fields) error {
			f.Workspace = &workspace.Local{WorkingDir: "/tmp/elsewhere"}
			f.MaxIterations = 42
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		check("new workspace", `"working_dir":"/tmp/elsewhere"`, `"model":"claude-sonnet"`)
		if err := st.Update(func(f *conversation.Fields) error { f.Agent = convtest.NewAgent(); return nil }); err != nil {
			t.Fatal(err)
		}
		check("agent back", `"model":"gpt-4o"`, `"working_dir":"/tmp/elsewhere"`)
		// Reopened, the state encodes and writes as before.
		st2, err := conversation.Open(ctx, store, &conversation.Options{Cipher: c})
		if err != nil {
			t.Fatal(err)
		}
		st = st2
		if err := st.Update(func(f *conversation.Fields) error { f.MaxIterations = 43; return nil }); err != nil {
			t.Fatal(err)
		}
		check("reopened", `"max_iterations":43`)
	}
}
