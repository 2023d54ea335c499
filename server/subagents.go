package server

import (
	"encoding/json"
	"os"

	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/tools/task"
)

// subAgentsRequest is the body of POST /api/sub-agents: which levels of
// definitions to list (each true when left out).
type subAgentsRequest struct {
	LoadUser    *bool   `json:"load_user"`
	LoadProject *bool   `json:"load_project"`
	LoadBuiltin *bool   `json:"load_builtin"`
	ProjectDir  *string `json:"project_dir"`
}

// subAgentInfo is a sub-agent definition as the reference lists it: the
// definition, mcp_servers (its old name for mcp_config) and whether it
// is built in.
type subAgentInfo struct {
	*task.Definition
	MCPServers map[string]json.RawMessage `json:"mcp_servers"`
	IsBuiltin  bool                       `json:"is_builtin"`
}

type subAgentsResponse struct {
	Agents []subAgentInfo `json:"agents"`
}

func (s *Server) subAgentRoutes() []*route {
	return []*route{
		{method: "POST", path: "/api/sub-agents", summary: "The sub-agents a task tool can start: the project's, the user's and the built-in ones", tag: "Sub Agents", body: subAgentsRequest{}, resp: subAgentsResponse{}, errors: []int{422}, h: handle(s, nil, s.handleSubAgents)},
	}
}

// handleSubAgents lists the definitions first-wins by name: the project's
// (.agents/agents, then .openhands/agents), the user's, the built-in
// ones. A file that cannot be read is logged and left out.
func (s *Server) handleSubAgents(in *request[none, subAgentsRequest]) (any, error) {
	on := func(b *bool) bool { return b == nil || *b }
	var work, home string
	if on(in.body.LoadProject) && in.body.ProjectDir != nil {
		work = *in.body.ProjectDir
	}
	if on(in.body.LoadUser) {
		home, _ = os.UserHomeDir()
	}
	defs, errs := task.Discover(work, home)
	for _, err := range errs {
		s.log.Warn("sub-agents: a definition cannot be read", "err", err)
	}
	if on(in.body.LoadBuiltin) {
		defs = append(defs, task.Builtins()...)
	}
	out := subAgentsResponse{Agents: []subAgentInfo{}}
	seen := map[string]bool{}
	for _, d := range defs {
		if seen[d.Name] {
			continue
		}
		seen[d.Name] = true
		if d.Tools == nil {
			d.Tools = []string{}
		}
		if d.Skills == nil {
			d.Skills = []string{}
		}
		if d.WhenToUseExamples == nil {
			d.WhenToUseExamples = []string{}
		}
		if d.Metadata == nil {
			d.Metadata = map[string]any{}
		}
		listed := *d
		listed.MCPConfig = listedMCP(d.MCPConfig)
		out.Agents = append(out.Agents, subAgentInfo{Definition: &listed, MCPServers: listed.MCPConfig, IsBuiltin: d.Level != nil && *d.Level == task.LevelBuiltin})
	}
	return out, nil
}

// listedMCP is a definition's MCP servers as 1.58.2 lists them: each read
// as an MCP server and written back, so "enabled" is there and the env
// and header values are masked (a definition's ${VAR} too, as 1.58.2
// masks it). A server that does not read is listed as it is written.
func listedMCP(servers map[string]json.RawMessage) map[string]json.RawMessage {
	if servers == nil {
		return nil
	}
	out := make(map[string]json.RawMessage, len(servers))
	for name, raw := range servers {
		out[name] = raw
		var srv mcp.Server
		if json.Unmarshal(raw, &srv) != nil {
			continue
		}
		if b, err := json.Marshal(srv); err == nil {
			out[name] = b
		}
	}
	return out
}
