package acp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"slices"
	"strings"

	sdk "github.com/coder/acp-go-sdk"

	"github.com/gohands/gohands/skill"
)

// contextFields are the AgentContext fields an ACP prompt can carry
// (reference: the fields tagged acp_compatible). Anything else is
// rejected, so a setting never silently does nothing.
var contextFields = []string{
	"skills", "system_message_suffix", "user_message_suffix", "load_user_skills",
	"load_public_skills", "marketplace_path", "registered_marketplaces",
	"load_project_skills", "load_memory", "memory_context", "disabled_skills",
	"secrets", "current_datetime",
}

// parseContext decodes agent_context, or returns nil when it is unset.
func parseContext(raw json.RawMessage) (*skill.AgentContext, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, nil
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil {
		return nil, fmt.Errorf("agent_context: %w", err)
	}
	var bad []string
	for k := range fields {
		if !slices.Contains(contextFields, k) {
			bad = append(bad, k)
		}
	}
	if len(bad) > 0 {
		slices.Sort(bad)
		return nil, fmt.Errorf("agent_context: field(s) %s cannot be passed to an ACP server", strings.Join(bad, ", "))
	}
	var ac skill.AgentContext
	if err := json.Unmarshal(raw, &ac); err != nil {
		return nil, fmt.Errorf("agent_context: %w", err)
	}
	return &ac, nil
}

// mcpServers turns mcp_config (name → server, or the {"mcpServers": …}
// wrapper) into the servers session/new and session/load pass on, as the
// reference does: stdio always, http and sse when the server says it
// takes them; disabled servers are left out.
func mcpServers(cfg map[string]json.RawMessage, caps sdk.McpCapabilities, log *slog.Logger) ([]sdk.McpServer, error) {
	if w, ok := cfg["mcpServers"]; ok && len(cfg) == 1 {
		var inner map[string]json.RawMessage
		if err := json.Unmarshal(w, &inner); err != nil {
			return nil, fmt.Errorf("mcp_config: %w", err)
		}
		cfg = inner
	}
	names := slices.Sorted(maps.Keys(cfg))
	out := []sdk.McpServer{}
	for _, name := range names {
		var s struct {
			Command   string            `json:"command"`
			Args      []string          `json:"args"`
			Env       map[string]string `json:"env"`
			URL       string            `json:"url"`
			Transport string            `json:"transport"`
			Headers   map[string]string `json:"headers"`
			Enabled   *bool             `json:"enabled"`
		}
		if err := json.Unmarshal(cfg[name], &s); err != nil {
			return nil, fmt.Errorf("mcp_config %s: %w", name, err)
		}
		if s.Enabled != nil && !*s.Enabled {
			continue
		}
		var headers []sdk.HttpHeader
		for _, k := range slices.Sorted(maps.Keys(s.Headers)) {
			headers = append(headers, sdk.HttpHeader{Name: k, Value: s.Headers[k]})
		}
		if headers == nil {
			headers = []sdk.HttpHeader{}
		}
		switch {
		case s.Command != "":
			env := []sdk.EnvVariable{}
			for _, k := range slices.Sorted(maps.Keys(s.Env)) {
				env = append(env, sdk.EnvVariable{Name: k, Value: s.Env[k]})
			}
			args := s.Args
			if args == nil {
				args = []string{}
			}
			out = append(out, sdk.McpServer{Stdio: &sdk.McpServerStdio{Name: name, Command: s.Command, Args: args, Env: env}})
		case s.URL != "" && s.Transport == "sse":
			if !caps.Sse {
				log.Warn("acp agent: the ACP server does not take SSE MCP servers; not passed", "server", name)
				continue
			}
			out = append(out, sdk.McpServer{Sse: &sdk.McpServerSseInline{Name: name, Url: s.URL, Headers: headers, Type: "sse"}})
		case s.URL != "":
			if !caps.Http {
				log.Warn("acp agent: the ACP server does not take HTTP MCP servers; not passed", "server", name)
				continue
			}
			out = append(out, sdk.McpServer{Http: &sdk.McpServerHttpInline{Name: name, Url: s.URL, Headers: headers, Type: "http"}})
		default:
			return nil, fmt.Errorf("mcp_config %s: neither command nor url", name)
		}
	}
	return out, nil
}
