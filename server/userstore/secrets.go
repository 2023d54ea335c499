package userstore

import (
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"regexp"
	"slices"
	"strings"

	"github.com/gohands/gohands/secret"
)

// NamePattern is what a secret's name must match: a letter, then letters,
// digits and underscores, 64 characters at most (names become
// environment variables).
var NamePattern = regexp.MustCompile(`^[a-zA-Z][a-zA-Z0-9_]{0,63}$`)

// SecretItem is a secret without its value.
type SecretItem struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

// Secrets is the user's secret store, secrets.json.
type Secrets struct {
	f      file
	cipher *secret.Cipher
}

// OpenSecrets returns the store of secrets.json in dir. With a nil
// cipher values are kept in clear (the reference does the same, and warns).
func OpenSecrets(dir string, c *secret.Cipher) *Secrets {
	return &Secrets{f: file{dir: dir, name: "secrets.json"}, cipher: c}
}

// secretsFile is secrets.json: custom_secrets by name, and the credential
// versions the reference's credential bindings keep for some of them.
type secretsFile struct {
	CustomSecrets map[string]storedSecret `json:"custom_secrets"`
	Versions      map[string]string       `json:"_credential_versions,omitempty"`
}

type storedSecret struct {
	Name        string  `json:"name"`
	Secret      *string `json:"secret"`
	Description *string `json:"description"`
}

// load reads the file with its values in clear. strict fails on a value
// no key decrypts (a change must not drop it); otherwise it reads as no
// value.
func (s *Secrets) load(strict bool) (*secretsFile, bool, error) {
	b, err := s.f.read()
	if err != nil || b == nil {
		return &secretsFile{CustomSecrets: map[string]storedSecret{}}, false, err
	}
	var raw struct {
		CustomSecrets map[string]json.RawMessage `json:"custom_secrets"`
		Versions      map[string]string          `json:"_credential_versions"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, true, ErrUnreadable
	}
	sf := &secretsFile{CustomSecrets: map[string]storedSecret{}, Versions: raw.Versions}
	for name, v := range raw.CustomSecrets {
		var st storedSecret
		var plain string
		if json.Unmarshal(v, &plain) == nil {
			st.Secret = &plain // an old layout: name to value
		} else if err := json.Unmarshal(v, &st); err != nil {
			return nil, true, ErrUnreadable
		}
		st.Name = name
		if st.Secret != nil {
			pt, err := s.open(*st.Secret)
			if err != nil {
				if strict {
					return nil, true, ErrUnreadable
				}
				st.Secret = nil
			} else {
				st.Secret = &pt
			}
		}
		sf.CustomSecrets[name] = st
	}
	return sf, true, nil
}

// open returns a stored value in clear.
func (s *Secrets) open(v string) (string, error) {
	if s.cipher == nil || !strings.HasPrefix(v, "gAAAAA") {
		return v, nil
	}
	return s.cipher.DecryptString(v)
}

// save writes sf, sealing every value.
func (s *Secrets) save(sf *secretsFile) error {
	out := secretsFile{CustomSecrets: make(map[string]storedSecret, len(sf.CustomSecrets)), Versions: sf.Versions}
	for name, st := range sf.CustomSecrets {
		if st.Secret != nil && s.cipher != nil {
			tok, err := s.cipher.EncryptString(*st.Secret)
			if err != nil {
				return err
			}
			st.Secret = &tok
		}
		out.CustomSecrets[name] = st
	}
	return s.f.write(out)
}

// List returns the secrets' names and descriptions, by name.
func (s *Secrets) List() ([]SecretItem, error) {
	var items []SecretItem
	err := s.f.locked(func() error {
		sf, _, err := s.load(false)
		if err != nil {
			return err
		}
		for name, st := range sf.CustomSecrets {
			items = append(items, SecretItem{Name: name, Description: st.Description})
		}
		return nil
	})
	slices.SortFunc(items, func(a, b SecretItem) int { return strings.Compare(a.Name, b.Name) })
	return items, err
}

// Get returns the value of the secret name; ok is false when there is
// none.
func (s *Secrets) Get(name string) (value string, ok bool, err error) {
	err = s.f.locked(func() error {
		sf, _, err := s.load(false)
		if err != nil {
			return err
		}
		if st, found := sf.CustomSecrets[name]; found && st.Secret != nil {
			value, ok = *st.Secret, true
		}
		return nil
	})
	return value, ok, err
}

// Set adds or replaces the secret name.
func (s *Secrets) Set(name, value string, description *string) error {
	return s.f.locked(func() error {
		sf, _, err := s.load(true)
		if err != nil {
			return err
		}
		sf.CustomSecrets[name] = storedSecret{Name: name, Secret: &value, Description: description}
		if _, versioned := sf.Versions[name]; versioned {
			sf.Versions[name] = newVersion()
		}
		return s.save(sf)
	})
}

// Delete removes the secret name and reports whether it existed.
func (s *Secrets) Delete(name string) (bool, error) {
	var found bool
	err := s.f.locked(func() error {
		sf, exists, err := s.load(true)
		if err != nil || !exists {
			return err
		}
		if _, found = sf.CustomSecrets[name]; !found {
			return nil
		}
		delete(sf.CustomSecrets, name)
		delete(sf.Versions, name)
		return s.save(sf)
	})
	return found, err
}

// Reencrypt rewrites the file under the current key when a value in it
// was saved under a previous one, and reports whether it did. A file with
// a value no key decrypts is left alone (ErrUnreadable).
func (s *Secrets) Reencrypt() (bool, error) {
	var done bool
	err := s.f.locked(func() error {
		b, err := s.f.read()
		if err != nil || b == nil || !stale(s.cipher, b) {
			return err
		}
		sf, _, err := s.load(true)
		if err != nil {
			return err
		}
		done = true
		return s.save(sf)
	})
	return done, err
}

// stale reports whether the JSON document b holds a token that c
// decrypts only with a previous key.
func stale(c *secret.Cipher, b []byte) bool {
	if c == nil || !c.HasPrevious() {
		return false
	}
	var v any
	if json.Unmarshal(b, &v) != nil {
		return false
	}
	var walk func(v any) bool
	walk = func(v any) bool {
		switch v := v.(type) {
		case string:
			return strings.HasPrefix(v, "gAAAAA") && !c.IsCurrent(v)
		case map[string]any:
			for _, e := range v {
				if walk(e) {
					return true
				}
			}
		case []any:
			return slices.ContainsFunc(v, walk)
		}
		return false
	}
	return walk(v)
}

func newVersion() string {
	b := make([]byte, 24)
	rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// Redacted is how a secret is shown when it is not exposed.
const Redacted = secret.Redacted
