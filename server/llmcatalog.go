package server

import (
	"slices"
	"strings"

	"github.com/gohands/gohands/agent/switchllm"
	"github.com/gohands/gohands/api/protocol"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/browser"
	"github.com/gohands/gohands/tools/fileeditor"
	"github.com/gohands/gohands/tools/glob"
	"github.com/gohands/gohands/tools/grep"
	"github.com/gohands/gohands/tools/task"
	"github.com/gohands/gohands/tools/tasktracker"
	"github.com/gohands/gohands/tools/terminal"
)

// The model and tool catalogs: what a client offers its user when it
// configures an agent. The reference reads LiteLLM's tables; gohands
// answers from its own: the providers it has a route for (llm.Prefixes)
// and the models it has prices and limits for (llm.PricedModels), which
// are also the ones it calls verified.

type modelsQuery struct {
	Provider *string `query:"provider" description:"Filter models by provider (e.g., 'openai', 'anthropic')"`
}

func (s *Server) llmCatalogRoutes() []*route {
	const tLLM = "LLM"
	return []*route{
		{method: "GET", path: "/api/llm/providers", summary: "The LLM providers gohands has a route for", tag: tLLM, resp: protocol.ProvidersResponse{}, h: handle(s, nil, s.handleProviders)},
		{method: "GET", path: "/api/llm/models", summary: "The models gohands knows, as provider/model, optionally of one provider", tag: tLLM, query: &modelsQuery{}, resp: protocol.ModelsResponse{}, errors: []int{422}, h: handle(s, nil, s.handleLLMModels)},
		{method: "GET", path: "/api/llm/models/verified", summary: "The models gohands has prices and limits for, by provider", tag: tLLM, resp: protocol.VerifiedModelsResponse{}, h: handle(s, nil, s.handleVerifiedModels)},
		{method: "GET", path: "/api/tools/catalog", summary: "The tools offered for configuring an agent", tag: "Tools", resp: protocol.ToolCatalogResponse{}, h: handle(s, nil, s.handleToolCatalog)},
	}
}

func (s *Server) handleProviders(*request[none, none]) (any, error) {
	return protocol.ProvidersResponse{Providers: llm.Prefixes()}, nil
}

// modelProvider names the provider of a model of the price table, which
// is keyed without provider prefix.
func modelProvider(model string) string {
	for _, p := range []struct{ prefix, provider string }{
		{"gpt-", "openai"}, {"o1", "openai"}, {"o3", "openai"}, {"o4", "openai"}, {"codex-", "openai"},
		{"claude-", "anthropic"}, {"gemini-", "gemini"}, {"deepseek-", "deepseek"}, {"grok-", "xai"},
		{"mistral-", "mistral"}, {"devstral-", "mistral"}, {"kimi-", "moonshot"},
	} {
		if strings.HasPrefix(model, p.prefix) {
			return p.provider
		}
	}
	return ""
}

// verifiedModels returns the priced models by provider, each list sorted.
func verifiedModels() map[string][]string {
	out := map[string][]string{}
	for _, m := range llm.PricedModels() {
		if p := modelProvider(m); p != "" {
			out[p] = append(out[p], m)
		}
	}
	return out
}

func (s *Server) handleLLMModels(in *request[modelsQuery, none]) (any, error) {
	models := []string{}
	for p, ms := range verifiedModels() {
		if in.query.Provider != nil && *in.query.Provider != p {
			continue
		}
		for _, m := range ms {
			models = append(models, p+"/"+m)
		}
	}
	slices.Sort(models)
	return protocol.ModelsResponse{Models: models}, nil
}

func (s *Server) handleVerifiedModels(*request[none, none]) (any, error) {
	return protocol.VerifiedModelsResponse{Models: verifiedModels()}, nil
}

// selectableTools are the registered tools a user picks from, with what
// the catalog says of them; inDefault marks those an agent without an
// explicit tool list gets (where usable).
var selectableTools = map[string]struct {
	desc      string
	inDefault bool
}{
	terminal.Name:    {"Run shell commands in a persistent terminal session.", true},
	fileeditor.Name:  {"View, create and edit files.", true},
	tasktracker.Name: {"Keep a running task list to organise multi-step work.", true},
	browser.Name:     {"Browse the web: navigate pages, click, type and read content.", true},
	task.ToolSetName: {"Delegate a self-contained sub-task to a separate agent.", false},
	glob.Name:        {"Find files by name pattern, such as **/*.ts.", false},
	grep.Name:        {"Search file contents with regular expressions.", false},
	switchllm.Name:   {"Let the agent switch the conversation to another saved LLM profile.", true},
}

func (s *Server) handleToolCatalog(in *request[none, none]) (any, error) {
	tools := []protocol.ToolCatalogEntry{}
	for _, name := range tool.Registered() {
		e := protocol.ToolCatalogEntry{Name: name, Usable: true}
		if sel, ok := selectableTools[name]; ok {
			e.UserSelectable, e.Description, e.InDefaultSet = true, sel.desc, sel.inDefault
		}
		if name == browser.Name {
			// The browser runs only where a Chromium is installed.
			_, err := browser.FindChromium("")
			e.Usable = err == nil
		}
		tools = append(tools, e)
	}
	return protocol.ToolCatalogResponse{Tools: tools}, nil
}
