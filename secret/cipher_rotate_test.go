package secret

import "testing"

func TestCipherWithPrevious(t *testing.T) {
	oldC := NewCipher("old key")
	tok, err := oldC.EncryptString("sk-value")
	if err != nil {
		t.Fatal(err)
	}
	cur := NewCipher("new key")
	if _, err := cur.DecryptString(tok); err == nil {
		t.Fatal("a cipher without the old key decrypted its token")
	}
	rot := cur.WithPrevious("", "new key", "other", "old key")
	if len(rot.previous) != 2 {
		t.Fatalf("previous keys = %d, want 2 (blank and current dropped)", len(rot.previous))
	}
	pt, err := rot.DecryptString(tok)
	if err != nil || pt != "sk-value" {
		t.Fatalf("DecryptString = %q, %v", pt, err)
	}
	if rot.IsCurrent(tok) {
		t.Error("IsCurrent(old token) = true")
	}
	fresh, _ := rot.EncryptString("sk-value")
	if !rot.IsCurrent(fresh) || !cur.IsCurrent(fresh) {
		t.Error("a rotating cipher does not encrypt with the current key")
	}
	if _, err := oldC.DecryptString(fresh); err == nil {
		t.Error("the old key decrypts a token made after the rotation")
	}
}
