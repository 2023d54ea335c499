package server

// The VS Code routes (/api/vscode and their runtime-scoped twins) tell a
// client where the conversation's openvscode-server is. gohands ships
// none, so it answers as the reference does when VS Code is enabled but
// its server is not running: status {"running": false, "enabled": true}
// and a null URL.

type vscodeURLQuery struct {
	BaseURL      string `query:"base_url" description:"Base URL of the VS Code server"`
	WorkspaceDir string `query:"workspace_dir" description:"The workspace directory to open (default workspace)"`
}

type vscodeURL struct {
	URL *string `json:"url"`
}

type vscodeStatus struct {
	Running bool `json:"running"`
	Enabled bool `json:"enabled"`
}

func (s *Server) vscodeRoutes() []*route {
	const tv = "VSCode"
	return []*route{
		{method: "GET", path: "/api/vscode/url", summary: "The VS Code URL with its token (null: no VS Code server runs)", tag: tv, query: &vscodeURLQuery{}, resp: vscodeURL{}, errors: []int{422, 503}, h: handle(s, nil, func(*request[vscodeURLQuery, none]) (any, error) {
			return vscodeURL{}, nil
		})},
		{method: "GET", path: "/api/vscode/status", summary: "Whether a VS Code server runs (never, in gohands)", tag: tv, resp: vscodeStatus{}, h: handle(s, nil, func(*request[none, none]) (any, error) {
			return vscodeStatus{Enabled: true}, nil
		})},
	}
}
