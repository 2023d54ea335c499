package userstore

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"

	"github.com/gohands/gohands/secret"
)

// ProfileNamePattern is what an LLM profile's name must match (it names
// its file, NAME.json).
var ProfileNamePattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// Errors of the profile store.
var (
	ErrNoProfile     = errors.New("userstore: no such profile")
	ErrProfileExists = errors.New("userstore: profile exists")
	ErrProfileLimit  = errors.New("userstore: profile limit reached")
)

// CanonicalProfileName is the profile a name addresses: "foo.json" is
// profile "foo", as in the reference.
func CanonicalProfileName(name string) string { return strings.TrimSuffix(name, ".json") }

// Profiles is the store of named LLM configurations: one file per
// profile, profiles/NAME.json in the persistence directory, holding the
// reference's LLM object (the layout of its LLMProfileStore, shared with
// its CLI). Secret values are Fernet tokens of the server's key when it
// has one, else in clear.
type Profiles struct {
	dir, lockName string
	cipher        *secret.Cipher
}

// OpenProfiles returns the profile store of the persistence directory dir.
func OpenProfiles(dir string, c *secret.Cipher) *Profiles {
	return &Profiles{dir: filepath.Join(dir, "profiles"), lockName: "profiles.json", cipher: c}
}

// OpenMetaProfiles returns the store of meta-profiles (model-routing
// configurations, which hold no secrets) of the persistence directory
// dir: meta-profiles/NAME.json, as the reference keeps them.
func OpenMetaProfiles(dir string) *Profiles {
	return &Profiles{dir: filepath.Join(dir, "meta-profiles"), lockName: "meta-profiles.json"}
}

// Names returns the names of the stored profiles, sorted.
func (p *Profiles) Names() ([]string, error) {
	var names []string
	err := p.lock(func() error {
		var err error
		names, err = p.names()
		return err
	})
	return names, err
}

// ProfileSummary is a profile as listed: its model and address, whether
// it holds an API key, without its secrets.
type ProfileSummary struct {
	Name                 string
	Model, BaseURL       *string
	ProviderConnectionID *string
	APIKeySet            bool
}

func (p *Profiles) lock(fn func() error) error {
	return file{dir: p.dir, name: p.lockName}.locked(fn)
}

func (p *Profiles) file(name string) (file, error) {
	name = CanonicalProfileName(name)
	if !ProfileNamePattern.MatchString(name) {
		return file{}, fmt.Errorf("userstore: invalid profile name %q", name)
	}
	return file{dir: p.dir, name: name + ".json"}, nil
}

// names returns the names of the stored profiles (valid names only), sorted.
func (p *Profiles) names() ([]string, error) {
	ents, err := os.ReadDir(p.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("userstore: %w", err)
	}
	var out []string
	for _, e := range ents {
		n, ok := strings.CutSuffix(e.Name(), ".json")
		if ok && !e.IsDir() && ProfileNamePattern.MatchString(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out, nil
}

// List returns the profiles, by name. A file that cannot be decoded is
// left out (and left alone), as the reference does.
func (p *Profiles) List() ([]ProfileSummary, error) {
	var out []ProfileSummary
	err := p.lock(func() error {
		names, err := p.names()
		if err != nil {
			return err
		}
		for _, n := range names {
			b, err := file{dir: p.dir, name: n + ".json"}.read()
			var m map[string]any
			if err != nil || b == nil || decode(b, &m) != nil || m == nil {
				continue
			}
			str := func(k string) *string {
				if v, ok := m[k].(string); ok {
					return &v
				}
				return nil
			}
			key, _ := m["api_key"].(string)
			out = append(out, ProfileSummary{
				Name: n, Model: str("model"), BaseURL: str("base_url"),
				ProviderConnectionID: str("provider_connection_id"),
				APIKeySet:            strings.TrimSpace(key) != "" && key != Redacted,
			})
		}
		return nil
	})
	return out, err
}

// Load returns the profile's LLM object with its secrets in clear (a
// secret no key decrypts reads as null). ErrNoProfile when there is none.
func (p *Profiles) Load(name string) (map[string]any, error) {
	f, err := p.file(name)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrNoProfile, err)
	}
	var m map[string]any
	err = p.lock(func() error {
		b, err := f.read()
		if err != nil {
			return err
		}
		if b == nil {
			return fmt.Errorf("%w: %q", ErrNoProfile, name)
		}
		if err := decode(b, &m); err != nil || m == nil {
			return fmt.Errorf("userstore: profile %q: %w", name, ErrUnreadable)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if p.cipher == nil {
		return m, nil
	}
	return MapSecrets(m, func(_ []string, v string) (any, error) {
		if !strings.HasPrefix(v, "gAAAAA") {
			return v, nil
		}
		pt, err := p.cipher.DecryptString(v)
		if err != nil {
			return nil, nil
		}
		return pt, nil
	})
}

// Save writes the LLM object cfg (secrets in clear) as profile name,
// replacing one of that name. Without includeSecrets its secrets are not
// kept. Creating a profile beyond max (when positive) is ErrProfileLimit.
func (p *Profiles) Save(name string, cfg map[string]any, includeSecrets bool, max int) error {
	f, err := p.file(name)
	if err != nil {
		return err
	}
	stored, err := MapSecrets(cfg, func(_ []string, v string) (any, error) {
		switch {
		case !includeSecrets:
			return nil, nil
		case p.cipher != nil:
			return p.cipher.EncryptString(v)
		}
		return v, nil
	})
	if err != nil {
		return err
	}
	return p.lock(func() error {
		if max > 0 {
			if _, err := os.Stat(f.path()); errors.Is(err, os.ErrNotExist) {
				names, err := p.names()
				if err != nil {
					return err
				}
				if len(names) >= max {
					return fmt.Errorf("%w (%d)", ErrProfileLimit, max)
				}
			}
		}
		return f.write(stored)
	})
}

// Delete removes a profile; a missing one is no error.
func (p *Profiles) Delete(name string) error {
	f, err := p.file(name)
	if err != nil {
		return err
	}
	return p.lock(func() error {
		if err := os.Remove(f.path()); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("userstore: %w", err)
		}
		return nil
	})
}

// Rename renames profile from to to: ErrNoProfile when from is missing,
// ErrProfileExists when to is taken. The same name is a check that it
// exists.
func (p *Profiles) Rename(from, to string) error {
	ff, err := p.file(from)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrNoProfile, err)
	}
	tf, err := p.file(to)
	if err != nil {
		return err
	}
	return p.lock(func() error {
		if _, err := os.Stat(ff.path()); err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("%w: %q", ErrNoProfile, from)
			}
			return fmt.Errorf("userstore: %w", err)
		}
		if ff.path() == tf.path() {
			return nil
		}
		if _, err := os.Stat(tf.path()); err == nil {
			return fmt.Errorf("%w: %q", ErrProfileExists, to)
		}
		if err := os.Rename(ff.path(), tf.path()); err != nil {
			return fmt.Errorf("userstore: %w", err)
		}
		return nil
	})
}
