package pyclient_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/conversationtest"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/workspace"
)

// The Go client's LoadPlugin on a real reference 1.58.2 server: the
// conformance suite's LoadPlugin scenario (a plugin of a local
// marketplace the agent context registers; what is not there is a 404,
// plugin.ErrNotFound, a malformed manifest or reference a 400,
// ErrCannotLoadPlugin; the loaded plugin's skill answers the next message
// that triggers it and its MCP server's tool is offered to the model),
// and the reference's stored agent, read on its own, holds the plugin's
// skill and MCP server.
func TestLoadPluginSDK158(t *testing.T) {
	t.Parallel()
	ref := sharedReference158(t)
	var ids []string
	conversationtest.RunLoadPlugin(t, func(t *testing.T, s *conversationtest.Setup) conversation.Conversation {
		s.LLM.APIKey = secret.New("scripted")
		a := agent.New(s.LLM, s.Tools, nil)
		a.AgentContext = s.AgentContext
		c, err := remote.New(t.Context(), a, &workspace.Remote{Host: ref.URL, APIKey: apiKey, WorkingDir: s.WorkDir}, nil)
		if err != nil {
			t.Fatalf("the 1.58.2 server refuses an agent registering a marketplace: %v", err)
		}
		ids = append(ids, c.ID())
		return c
	})
	if len(ids) != 1 {
		t.Fatalf("%d conversations opened, want 1", len(ids))
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, ref.URL+"/api/conversations/"+ids[0]+"?include_skills=true", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("X-Session-API-Key", apiKey)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var info struct {
		Agent struct {
			AgentContext struct {
				Skills []struct {
					Name string `json:"name"`
				} `json:"skills"`
			} `json:"agent_context"`
			MCPConfig json.RawMessage `json:"mcp_config"`
		} `json:"agent"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&info); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("GET the conversation: %d %v", resp.StatusCode, err)
	}
	var names []string
	for _, sk := range info.Agent.AgentContext.Skills {
		names = append(names, sk.Name)
	}
	if !strings.Contains(strings.Join(names, ","), "frob") {
		t.Errorf("the reference's stored skills are %v, want the plugin's frob", names)
	}
	if !strings.Contains(string(info.Agent.MCPConfig), "plugtools") {
		t.Errorf("the reference's stored mcp_config %s lacks the plugin's server", info.Agent.MCPConfig)
	}
}
