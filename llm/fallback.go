package llm

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/gohands/gohands/event"
)

// defaultProfileDir is where fallback profiles are read when the strategy
// names no directory: the reference's ~/.openhands/profiles.
func defaultProfileDir() (string, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(home, ".openhands", "profiles"), nil
}

// LoadProfileFile reads the LLM profile name from dir as the reference's
// profile store writes it: dir/<name>.json, an LLM configuration. An empty
// dir is ~/.openhands/profiles.
func LoadProfileFile(dir, name string) (Config, error) {
	if dir == "" {
		var err error
		if dir, err = defaultProfileDir(); err != nil {
			return Config{}, fmt.Errorf("llm: profile %q: %w", name, err)
		}
	}
	if name == "" || filepath.Base(name) != name || name == "." || name == ".." {
		return Config{}, fmt.Errorf("llm: profile name %q is not a file name", name)
	}
	path := filepath.Join(dir, name+".json")
	if filepath.Ext(name) == ".json" {
		path = filepath.Join(dir, name)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return Config{}, fmt.Errorf("llm: profile %q: %w", name, err)
	}
	var cfg Config
	if err := json.Unmarshal(data, &cfg); err != nil {
		return Config{}, fmt.Errorf("llm: profile %q in %s: %w", name, path, err)
	}
	if cfg.Model == "" {
		return Config{}, fmt.Errorf("llm: profile %q in %s: no model", name, path)
	}
	return cfg, nil
}

// fallback tries the LLMs of the config's fallback_strategy in order after
// the call failed with primary, a transient error, its retries spent: the
// first reply is the call's (its cost and tokens added to this LLM's
// metrics, under the fallback's model); when none answers, primary is the
// error. Each call starts with the primary model again, as in the
// reference; a fallback has no fallbacks of its own. A profile that cannot
// be loaded is logged and skipped.
func (l *LLM) fallback(ctx context.Context, messages []event.Message, tools []ToolSpec, opts *CallOptions, primary error) (*Response, error) {
	fs := l.cfg.FallbackStrategy
	for i, name := range fs.FallbackLLMs {
		if ctx.Err() != nil {
			break
		}
		fb, err := l.fallbackLLM(name)
		if err != nil {
			l.log.LogAttrs(ctx, slog.LevelError, "llm fallback profile not loaded", slog.String("profile", name), slog.Any("error", err))
			continue
		}
		l.log.LogAttrs(ctx, slog.LevelWarn, "llm call failed, trying a fallback",
			slog.String("model", l.cfg.Model), slog.Any("error", primary),
			slog.String("fallback", fb.cfg.Model), slog.Int("n", i+1), slog.Int("of", len(fs.FallbackLLMs)))
		resp, err := fb.Completion(ctx, messages, tools, opts)
		if err != nil {
			l.log.LogAttrs(ctx, slog.LevelWarn, "llm fallback failed", slog.String("fallback", fb.cfg.Model), slog.Any("error", err))
			continue
		}
		l.mu.Lock()
		l.metrics.AddLatency(fb.cfg.Model, resp.Latency, resp.ID)
		l.metrics.AddCost(fb.cfg.Model, resp.Cost, time.Now())
		if u := resp.Usage; u.PromptTokens > 0 || u.CompletionTokens > 0 {
			l.metrics.AddTokenUsage(u)
		}
		l.mu.Unlock()
		return resp, nil
	}
	return nil, primary
}

// fallbackLLM returns the LLM of fallback profile name, loaded once.
func (l *LLM) fallbackLLM(name string) (*LLM, error) {
	l.mu.Lock()
	fb, ok := l.fallbacks[name]
	l.mu.Unlock()
	if ok {
		return fb, nil
	}
	cfg, err := LoadProfileFile(l.cfg.FallbackStrategy.ProfileStoreDir, name)
	if err != nil {
		return nil, err
	}
	cfg.FallbackStrategy = nil
	fb, err = New(cfg, &Options{HTTPClient: l.hc, MaxReplyBytes: l.maxReply, Logger: l.log, OnRetry: l.onRetry, Retryable: l.retry, AllowShortContextWindow: true})
	if err != nil {
		return nil, fmt.Errorf("llm: profile %q: %w", name, err)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.fallbacks == nil {
		l.fallbacks = map[string]*LLM{}
	}
	l.fallbacks[name] = fb
	return fb, nil
}
