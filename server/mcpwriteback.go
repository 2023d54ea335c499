package server

import "strings"

// writeBackMCPOAuth is the conversations' MCPOAuthWriteBack: the
// refreshed OAuth state of an MCP server a conversation's agent carries
// inline goes to every webhook, as the reference's agent server posts it.
// A server of this server's settings is left out, as there: the
// reference keeps those tokens in its settings.
func (s *Server) writeBackMCPOAuth(serverURL string, body []byte) {
	if len(s.hooks) == 0 || s.settingsHaveOAuthServer(serverURL) {
		return
	}
	for _, h := range s.hooks {
		h.postMCPOAuthState(serverURL, body)
	}
}

// settingsHaveOAuthServer reports whether the settings' mcp_config has an
// oauth2 server at url.
func (s *Server) settingsHaveOAuthServer(url string) bool {
	d, err := s.settings.Load()
	if err != nil || d == nil {
		return false
	}
	servers, _ := d.AgentSettings["mcp_config"].(map[string]any)
	if inner, ok := servers["mcpServers"].(map[string]any); ok {
		servers = inner
	}
	for _, v := range servers {
		srv, _ := v.(map[string]any)
		u, _ := srv["url"].(string)
		auth, _ := srv["auth"].(map[string]any)
		if strategy, _ := auth["strategy"].(string); strategy == "oauth2" && u != "" && strings.TrimRight(u, "/") == url {
			return true
		}
	}
	return false
}
