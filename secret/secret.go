// Package secret holds secret strings that do not leak when serialised, and
// the Fernet cipher the reference uses to persist them encrypted.
package secret

import (
	"encoding/json"
	"strings"
)

// Redacted is what a secret looks like when it is serialised without being
// exposed.
const Redacted = "**********"

// String is a secret string. Its zero value is "no secret". By default it
// encodes as Redacted, so a secret never reaches a log or a file by accident;
// Expose and Cipher.Encrypt make values that encode otherwise.
type String struct {
	value   string
	exposed bool
}

// New returns a secret holding s.
func New(s string) String { return String{value: s} }

// Value returns the plaintext.
func (s String) Value() string { return s.value }

// IsZero reports whether s holds no secret (for omitzero).
func (s String) IsZero() bool { return s.value == "" }

// String returns Redacted, or "" for the zero secret, so %v and %s never
// print the plaintext.
func (s String) String() string {
	if s.value == "" {
		return ""
	}
	return Redacted
}

// Expose returns a copy of s that encodes as its plaintext.
func (s String) Expose() String { return String{value: s.value, exposed: true} }

// MarshalJSON implements json.Marshaler: null for the zero secret, Redacted
// unless exposed, else the value.
func (s String) MarshalJSON() ([]byte, error) {
	switch {
	case s.value == "":
		return []byte("null"), nil
	case !s.exposed:
		return []byte(`"` + Redacted + `"`), nil
	}
	return json.Marshal(s.value)
}

// UnmarshalJSON implements json.Unmarshaler. As in the reference, null,
// blank and Redacted read as no secret; anything else is taken as it is
// (a Fernet token stays a token until Cipher.Decrypt).
func (s *String) UnmarshalJSON(data []byte) error {
	var v *string
	if err := json.Unmarshal(data, &v); err != nil {
		return err
	}
	*s = String{}
	if v != nil && strings.TrimSpace(*v) != "" && *v != Redacted {
		s.value = *v
	}
	return nil
}

// IsToken reports whether s looks like a Fernet token.
func (s String) IsToken() bool { return strings.HasPrefix(s.value, "gAAAAA") }

// Holder is implemented by values that contain secrets (an LLM config, an
// agent, a secret registry). MapSecrets returns a copy of the value with f
// applied to every secret in it; persistence uses it to encrypt secrets
// with a Cipher, or to expose them for a trusted peer.
type Holder interface {
	MapSecrets(f func(String) (String, error)) (any, error)
}
