package agent

import (
	"sync"

	"github.com/gohands/gohands/condenser"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/hook"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
)

// runner is an Agent bound to one conversation. Its methods are in one
// file per concern: start.go (Start, tools, MCP, system prompt, Close),
// step.go (Step and the model's reply), execute.go (running actions),
// hooks.go, ask.go and stats.go.
type runner struct {
	a *Agent
	// itemID is the id minted for the reply of the model call in progress,
	// stamped on its streamed deltas and given to the first event stored
	// from it; streamAttempt counts the call's restreamed retries.
	itemID        string
	streamAttempt int
	// finishCritique is the critic's verdict on the last finishing event
	// (criticResult), which refinement reuses.
	finishCritique *critique
	sess           *conversation.Session
	model          llm.Model
	tools          []tool.Tool
	byName         map[string]tool.Tool
	specs          []llm.ToolSpec
	limit          int

	askOnce  sync.Once
	askMu    sync.Mutex // guards askModel for saveStats
	askModel llm.Model
	askErr   error
	// side are the models of LLM profiles tools consulted, by usage id
	// (guarded by askMu).
	side map[string]*llm.LLM

	lockMu sync.Mutex
	locks  map[string]*sync.Mutex

	// unusable counts the model's replies in a row that could not be used
	// (too large, unparseable tool calls, blocked); see maxUnusable.
	unusable int
	msgs     msgCache
	// callIDs holds the tool-call ids used in the conversation (see
	// uniqueCallIDs); built at the first reply with tool calls.
	callIDs map[string]bool

	// cond condenses the view before each LLM call (nil: never);
	// condRequests is true when it acts on CondensationRequests, so the
	// agent may ask for one when the model's context overflows.
	cond         condenser.Condenser
	condRequests bool

	// mcp holds the MCP servers connected from mcp_config (nil: none).
	mcp *mcp.Set

	// skills is the agent's context with its skills loaded; nil when the
	// agent has none. activated names the keyword skills already injected
	// in this conversation (guarded by skillMu: SendMessage may run during
	// a step).
	skills    *skill.AgentContext
	skillMu   sync.Mutex
	activated []string

	// hooks runs the workspace's hooks (.openhands/hooks.json); nil when
	// none are configured.
	hooks *hook.Manager
	// pluginHooks are the ambient plugins' hooks, run after the
	// conversation's own.
	pluginHooks *hook.Config
}

var (
	_ conversation.Agent  = (*Agent)(nil)
	_ conversation.Runner = (*runner)(nil)
)
