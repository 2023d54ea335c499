package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// settings is the user's settings file: defaults below the environment
// and the flags.
type settings struct {
	// Model, BaseURL: as --model and --base-url.
	Model   string `json:"model,omitempty"`
	BaseURL string `json:"base_url,omitempty"`
	// APIKeyEnv names the environment variable holding the key, so that
	// the file need not hold the key itself.
	APIKeyEnv string `json:"api_key_env,omitempty"`
	// APIKey is the key itself (the file is then written mode 0600).
	APIKey string `json:"api_key,omitempty"`
	// APIKeys are keys of other providers by provider name ("anthropic",
	// "openai", …), typed when /model switched to one of them.
	APIKeys map[string]string `json:"api_keys,omitempty"`
	// Confirm is the confirmation mode: never, always or risky.
	Confirm string `json:"confirm,omitempty"`
	// MCPServers are MCP servers whose tools the agent gets, as in an
	// mcp.json file.
	MCPServers map[string]json.RawMessage `json:"mcpServers,omitempty"`
	// NumRetries and RetryMaxWait (seconds) bound the retries of failed
	// model calls, as the LLM configuration's fields of those names.
	NumRetries   *int     `json:"num_retries,omitempty"`
	RetryMaxWait *float64 `json:"retry_max_wait,omitempty"`
	// LoadPublicSkills and RegisteredMarketplaces are the agent
	// context's fields of those names: the public skills
	// (github.com/OpenHands/extensions, or $EXTENSIONS_PATH), and the
	// marketplaces ({name, source, ref, repo_path, auto_load}) whose
	// auto-loaded plugins and skills every conversation gets.
	LoadPublicSkills       bool              `json:"load_public_skills,omitempty"`
	RegisteredMarketplaces []json.RawMessage `json:"registered_marketplaces,omitempty"`
}

// settingsPath is $XDG_CONFIG_HOME/gohands/settings.json when
// XDG_CONFIG_HOME is set, else ~/.gohands/settings.json.
func (a *app) settingsPath() (string, error) {
	if d := a.getenv("XDG_CONFIG_HOME"); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "gohands", "settings.json"), nil
	}
	home := a.getenv("HOME")
	if home == "" {
		return "", errors.New("neither $XDG_CONFIG_HOME nor $HOME is set")
	}
	return filepath.Join(home, ".gohands", "settings.json"), nil
}

// loadSettings reads the settings file; a missing one is empty settings.
func (a *app) loadSettings() (settings, string, error) {
	var s settings
	path, err := a.settingsPath()
	if err != nil {
		return s, "", nil // no home: no settings file, nothing to report
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return s, path, nil
	}
	if err != nil {
		return s, path, usageErr("settings: %v", err)
	}
	if err := json.Unmarshal(data, &s); err != nil {
		return s, path, usageErr("settings %s: %v", path, err)
	}
	return s, path, nil
}

// saveSettings writes the settings file atomically, readable only by the
// user (it may hold a key).
func saveSettings(path string, s settings) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	data, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".settings-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(append(data, '\n')); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// providerKeyVars are the usual key variables of each provider, by the
// provider prefix of the model name, most specific first.
var providerKeyVars = map[string][]string{
	"anthropic":     {"ANTHROPIC_API_KEY"},
	"openai":        {"OPENAI_API_KEY"},
	"gemini":        {"GEMINI_API_KEY", "GOOGLE_API_KEY"},
	"vertex_ai":     {"GOOGLE_API_KEY"},
	"openrouter":    {"OPENROUTER_API_KEY"},
	"deepseek":      {"DEEPSEEK_API_KEY"},
	"mistral":       {"MISTRAL_API_KEY"},
	"groq":          {"GROQ_API_KEY"},
	"xai":           {"XAI_API_KEY"},
	"together_ai":   {"TOGETHERAI_API_KEY", "TOGETHER_API_KEY"},
	"fireworks_ai":  {"FIREWORKS_API_KEY"},
	"litellm_proxy": {"LITELLM_API_KEY"},
}

// keyVarsFor returns the provider key variables that fit model: by its
// provider prefix, or by the family of a bare model name.
func keyVarsFor(model string) []string { return providerKeyVars[providerOf(model)] }

// providerOf names the provider of model: its prefix when it is a
// known one, else the family of a bare model name, else "" (a model of
// a server of one's own).
func providerOf(model string) string {
	prefix, name, ok := strings.Cut(model, "/")
	if !ok {
		name, prefix = model, ""
	}
	if _, ok := providerKeyVars[prefix]; ok {
		return prefix
	}
	switch {
	case strings.HasPrefix(name, "claude"):
		return "anthropic"
	case strings.HasPrefix(name, "gpt"), strings.HasPrefix(name, "o1"), strings.HasPrefix(name, "o3"), strings.HasPrefix(name, "o4"), strings.HasPrefix(name, "codex"):
		return "openai"
	case strings.HasPrefix(name, "gemini"):
		return "gemini"
	}
	return ""
}

// allKeyVars lists every provider key variable, for hiding them from the
// agent's commands.
func allKeyVars() []string {
	var out []string
	for _, vars := range providerKeyVars {
		out = append(out, vars...)
	}
	return out
}

// missingKeyHelp explains, on one line, where a key comes from.
func missingKeyHelp(model string) string {
	vars := append([]string{"$" + envAPIKey}, keyVarsFor(model)...)
	for i := 1; i < len(vars); i++ {
		vars[i] = "$" + vars[i]
	}
	return fmt.Sprintf("no API key for %s: set %s, or give --api-key (a server of your own at --base-url may need none)",
		model, strings.Join(vars, " or "))
}
