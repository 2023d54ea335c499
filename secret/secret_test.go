package secret

import (
	"encoding/json"
	"strings"
	"testing"
)

func TestStringJSON(t *testing.T) {
	s := New("sk-123")
	b, _ := json.Marshal(struct {
		K String `json:"k"`
	}{s})
	if string(b) != `{"k":"**********"}` {
		t.Fatalf("redacted: %s", b)
	}
	b, _ = json.Marshal(s.Expose())
	if string(b) != `"sk-123"` {
		t.Fatalf("exposed: %s", b)
	}
	for in, want := range map[string]string{`"**********"`: "", `"  "`: "", `null`: "", `"x"`: "x"} {
		var got String
		if err := json.Unmarshal([]byte(in), &got); err != nil || got.Value() != want {
			t.Errorf("Unmarshal(%s) = %q, %v; want %q", in, got.Value(), err, want)
		}
	}
	if strings.Contains(s.String(), "sk") {
		t.Error("String leaks the value")
	}
}

func TestCipherRoundTrip(t *testing.T) {
	c := NewCipher("server-key")
	tok, err := c.Encrypt(New("hunter2"))
	if err != nil {
		t.Fatal(err)
	}
	if !tok.IsToken() {
		t.Fatalf("not a token: %s", tok.Value())
	}
	pt, err := c.Decrypt(tok)
	if err != nil || pt.Value() != "hunter2" {
		t.Fatalf("Decrypt = %q, %v", pt.Value(), err)
	}
	if _, err := NewCipher("other").Decrypt(tok); err == nil {
		t.Fatal("decrypted with the wrong key")
	}
	bad := tok.Value()[:len(tok.Value())-4] + "AAAA"
	if _, err := c.DecryptString(bad); err == nil {
		t.Fatal("accepted a tampered token")
	}
}
