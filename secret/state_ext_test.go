package secret_test

import (
	"context"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/workspace"
)

// stubAgent fills the state's agent slot.
type stubAgent struct {
	Name string `json:"name"`
}

func init() { event.RegisterKind[stubAgent]("StubAgentForSecretTests") }

// TestManagerThroughState saves a Manager's registry in a conversation's
// base state and loads it back: redacted without a cipher (values lost, as
// in the reference), encrypted with one (values kept), callbacks never.
func TestManagerThroughState(t *testing.T) {
	ctx := context.Background()
	m := secret.NewManager(secret.Registry{}, nil)
	m.SetValue("API_TOKEN", "tok-plain-123")
	m.SetFunc("LATE", func(context.Context) (string, error) { return "late-value", nil })

	for _, withCipher := range []bool{false, true} {
		var c *secret.Cipher
		if withCipher {
			c = secret.NewCipher("state key")
		}
		store := conversation.NewMemoryStore()
		f := conversation.NewFields("0b5f3c1e-6a2d-4f8b-9c7e-1d2a3b4c5d6e", &stubAgent{Name: "a"}, &workspace.Local{WorkingDir: "/w"})
		f.SecretRegistry = m.Registry()
		st, err := conversation.Create(context.Background(), store, f, &conversation.Options{Cipher: c})
		if err != nil {
			t.Fatal(err)
		}
		base, err := store.ReadBase(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(string(base), "tok-plain-123") || strings.Contains(string(base), "LATE") {
			t.Fatalf("cipher %v: base state holds a secret or the callback: %s", withCipher, base)
		}
		if withCipher != strings.Contains(string(base), `"value":"gAAAAA`) {
			t.Errorf("cipher %v: base state: %s", withCipher, base)
		}
		if err := st.Flush(); err != nil {
			t.Fatal(err)
		}

		back, err := conversation.Open(context.Background(), store, &conversation.Options{Cipher: c})
		if err != nil {
			t.Fatal(err)
		}
		m2 := secret.NewManager(back.Fields().SecretRegistry, nil)
		v, err := m2.Value(ctx, "API_TOKEN")
		if want := map[bool]string{false: "", true: "tok-plain-123"}[withCipher]; err != nil || v != want {
			t.Errorf("cipher %v: API_TOKEN after reload = %q, %v; want %q", withCipher, v, err, want)
		}
		if _, err := m2.Value(ctx, "LATE"); err == nil {
			t.Errorf("cipher %v: a callback survived a reload", withCipher)
		}
	}
}
