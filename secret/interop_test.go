package secret

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// testdata/fernet_python.json holds tokens made by the Python reference's
// Cipher (cryptography.fernet, key = base64(SHA-256(secret key))).
type fernetFixture struct {
	SecretKey string `json:"secret_key"`
	Cases     []struct {
		Plaintext string `json:"plaintext"`
		Token     string `json:"token"`
	} `json:"cases"`
}

func loadFernetFixture(t *testing.T) fernetFixture {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "fernet_python.json"))
	if err != nil {
		t.Fatal(err)
	}
	var f fernetFixture
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatal(err)
	}
	if len(f.Cases) == 0 {
		t.Fatal("fixture has no cases")
	}
	return f
}

func TestDecryptPythonTokens(t *testing.T) {
	f := loadFernetFixture(t)
	c := NewCipher(f.SecretKey)
	for _, tc := range f.Cases {
		got, err := c.DecryptString(tc.Token)
		if err != nil {
			t.Errorf("DecryptString(%.20s...): %v", tc.Token, err)
			continue
		}
		if got != tc.Plaintext {
			t.Errorf("DecryptString = %q, want %q", got, tc.Plaintext)
		}
		// Through the secret.String path a persisted value takes.
		var s String
		if err := json.Unmarshal([]byte(`"`+tc.Token+`"`), &s); err != nil {
			t.Fatal(err)
		}
		if !s.IsToken() {
			t.Errorf("%.20s... not recognised as a token", tc.Token)
		}
		pt, err := c.Decrypt(s)
		if err != nil || pt.Value() != tc.Plaintext {
			t.Errorf("Decrypt = %q, %v; want %q", pt.Value(), err, tc.Plaintext)
		}
	}
	if _, err := NewCipher(f.SecretKey + "x").DecryptString(f.Cases[0].Token); err == nil {
		t.Error("a Python token decrypted with the wrong key")
	}
}
