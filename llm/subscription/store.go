package subscription

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
)

// ErrUnreadable is Store.Load's error for a stored login that is not one
// (bad JSON, a field missing); callers treat it as no login.
var ErrUnreadable = errors.New("the stored OpenAI subscription login cannot be read")

// Store keeps the login in a persistence directory (the reference's
// ~/.openhands or $OH_PERSISTENCE_DIR) as auth/openai_oauth.json.
type Store struct {
	// Dir is the persistence directory.
	Dir string
}

// Path is the stored login's file.
func (s Store) Path() string { return filepath.Join(s.Dir, "auth", Vendor+"_oauth.json") }

// Load reads the stored login: nil without error when there is none.
func (s Store) Load() (*Credentials, error) {
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading the OpenAI subscription login: %w", err)
	}
	var c struct {
		Type         *string `json:"type"`
		Vendor       *string `json:"vendor"`
		AccessToken  *string `json:"access_token"`
		RefreshToken *string `json:"refresh_token"`
		ExpiresAt    *int64  `json:"expires_at"`
	}
	if json.Unmarshal(b, &c) != nil || c.Vendor == nil || c.AccessToken == nil || c.RefreshToken == nil || c.ExpiresAt == nil || (c.Type != nil && *c.Type != "oauth") {
		// The reference deletes such a file; it is kept here on purpose
		// (see the package doc): a new login replaces it.
		return nil, fmt.Errorf("%w: %s", ErrUnreadable, s.Path())
	}
	return &Credentials{Type: "oauth", Vendor: *c.Vendor, AccessToken: *c.AccessToken, RefreshToken: *c.RefreshToken, ExpiresAt: *c.ExpiresAt}, nil
}

// Save stores c, readable by its owner only (the directory too, as the
// reference makes it). It writes a temporary file and renames it over the
// old one, so a failure leaves the previous login whole.
func (s Store) Save(c *Credentials) error {
	dir := filepath.Dir(s.Path())
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("saving the OpenAI subscription login: %w", err)
	}
	if runtime.GOOS != "windows" {
		if err := os.Chmod(dir, 0o700); err != nil {
			return fmt.Errorf("saving the OpenAI subscription login: %w", err)
		}
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".openai_oauth-*.json") // mode 0600
	if err != nil {
		return fmt.Errorf("saving the OpenAI subscription login: %w", err)
	}
	_, err = f.Write(b)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), s.Path())
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("saving the OpenAI subscription login: %w", err)
	}
	return nil
}

// Delete removes the stored login, reporting whether there was one.
func (s Store) Delete() (bool, error) {
	err := os.Remove(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("removing the OpenAI subscription login: %w", err)
	}
	return true, nil
}
