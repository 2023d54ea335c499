package llm

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"sort"
)

// ErrNoProfile is returned for a profile name that is not configured.
var ErrNoProfile = errors.New("llm: no such profile")

// Profiles are named model configurations a user keeps in their settings
// (the "llm_profiles" object of ~/.gohands/settings.json), so that a
// conversation can pick or switch to one by name.
type Profiles map[string]Config

// Profile returns the configuration named name with the reference's
// profile usage id, "profile:<name>", unless it sets one of its own.
func (p Profiles) Profile(name string) (Config, error) {
	cfg, ok := p[name]
	if !ok {
		return Config{}, fmt.Errorf("%w: %q (have %v)", ErrNoProfile, name, p.Names())
	}
	if cfg.UsageID == "" || cfg.UsageID == DefaultUsageID {
		cfg.UsageID = "profile:" + name
	}
	return cfg, nil
}

// Names returns the profile names, sorted.
func (p Profiles) Names() []string {
	names := make([]string, 0, len(p))
	for n := range p {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// LoadProfiles reads the "llm_profiles" object of the settings file at
// path: profile name → LLM configuration (the reference's LLM object;
// missing fields take their defaults). A missing file has no profiles.
func LoadProfiles(path string) (Profiles, error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return Profiles{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("llm: profiles: %w", err)
	}
	var file struct {
		Profiles map[string]json.RawMessage `json:"llm_profiles"`
	}
	if err := json.Unmarshal(data, &file); err != nil {
		return nil, fmt.Errorf("llm: profiles in %s: %w", path, err)
	}
	out := make(Profiles, len(file.Profiles))
	for name, raw := range file.Profiles {
		var head struct {
			Model string `json:"model"`
		}
		if err := json.Unmarshal(raw, &head); err != nil || head.Model == "" {
			return nil, fmt.Errorf("llm: profile %q in %s: an object with a model is needed", name, path)
		}
		var cfg Config
		if err := json.Unmarshal(raw, &cfg); err != nil {
			return nil, fmt.Errorf("llm: profile %q in %s: %w", name, path, err)
		}
		out[name] = cfg
	}
	return out, nil
}
