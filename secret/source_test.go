package secret

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
)

func testRegistry() Registry {
	var r Registry
	r.Set("A", &StaticSecret{Description: "d", Value: New("x")})
	r.Set("B", &LookupSecret{URL: "http://127.0.0.1:8000/s", Headers: map[string]String{
		"Authorization": New("t"), "X-Y": New("z"),
	}})
	return r
}

func TestRegistryJSONMatchesReference(t *testing.T) {
	// What the reference writes for the same registry without a cipher.
	const want = `{"secret_sources":{"A":{"description":"d","value":"**********","kind":"StaticSecret"},"B":{"url":"http://127.0.0.1:8000/s","headers":{"Authorization":"**********","X-Y":"z"},"kind":"LookupSecret"}}}`
	b, err := json.Marshal(testRegistry())
	if err != nil || string(b) != want {
		t.Fatalf("got  %s (%v)\nwant %s", b, err, want)
	}
	// Reading it back loses the redacted values, as in the reference.
	var back Registry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if v := back.Sources["A"].(*StaticSecret).Value; !v.IsZero() {
		t.Errorf("redacted static value came back as %q", v.Value())
	}
	l := back.Sources["B"].(*LookupSecret)
	if _, ok := l.Headers["Authorization"]; ok || l.Headers["X-Y"].Value() != "z" {
		t.Errorf("headers after reload: %v", l.Headers)
	}
}

// A source of an unknown kind, or of a kind that is not a Source, is an
// error naming the secret.
func TestRegistryBadSource(t *testing.T) {
	for in, want := range map[string]string{
		`{"secret_sources":{"DB":{"kind":"NoSuchSecret"}}}`: `DB: event: unknown kind "NoSuchSecret"`,
		`{"secret_sources":{"DB":{"kind":"PauseEvent"}}}`:   `DB: event: kind "PauseEvent" is not a secret.Source`,
	} {
		var r Registry
		if err := json.Unmarshal([]byte(in), &r); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want one containing %q", in, err, want)
		}
	}
	var r Registry
	if err := json.Unmarshal([]byte(`{"secret_sources":{}}`), &r); err != nil || r.Sources != nil {
		t.Errorf("empty registry: %v %#v", err, r)
	}
}

func TestRegistryCipherRoundTrip(t *testing.T) {
	c := NewCipher("k")
	enc, err := testRegistry().MapSecrets(c.Encrypt)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(enc)
	if err != nil {
		t.Fatal(err)
	}
	var back Registry
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if v := back.Sources["A"].(*StaticSecret).Value; !v.IsToken() {
		t.Fatalf("static value not encrypted on disk: %s", b)
	}
	dec, err := back.MapSecrets(c.Decrypt)
	if err != nil {
		t.Fatal(err)
	}
	r := dec.(Registry)
	if got, _ := r.Sources["A"].Resolve(context.Background()); got != "x" {
		t.Errorf("A = %q", got)
	}
	if got := r.Sources["B"].(*LookupSecret).Headers["Authorization"].Value(); got != "t" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestLookupSecretResolve(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Authorization") != "Bearer t" {
			http.Error(w, "no", http.StatusUnauthorized)
			return
		}
		w.Write([]byte("s3cret"))
	}))
	defer srv.Close()
	t.Setenv(InternalServerURLEnv, srv.URL)
	var l LookupSecret
	if err := json.Unmarshal([]byte(`{"url":"/api/secret","headers":{"Authorization":"Bearer t"}}`), &l); err != nil {
		t.Fatal(err)
	}
	if l.URL != srv.URL+"/api/secret" {
		t.Errorf("relative URL resolved to %q", l.URL)
	}
	if got, err := l.Resolve(context.Background()); err != nil || got != "s3cret" {
		t.Fatalf("Resolve = %q, %v", got, err)
	}
	delete(l.Headers, "Authorization")
	if _, err := l.Resolve(context.Background()); err == nil {
		t.Error("a 401 resolved without error")
	}
}

func TestRegistryUnknownKind(t *testing.T) {
	var r Registry
	err := json.Unmarshal([]byte(`{"secret_sources":{"X":{"kind":"VaultSecret"}}}`), &r)
	if !errors.Is(err, event.ErrUnknownKind) {
		t.Fatalf("err = %v", err)
	}
}
