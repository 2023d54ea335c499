package conversation

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
)

// Conversation is a running conversation between a user and an agent,
// wherever the agent runs. [New] returns the local implementation,
// [*LocalConversation]; package conversation/remote's Conversation runs
// it on an agent server. Both implement the whole interface; what one of
// them cannot do returns an error matching [ErrUnsupported], and
// conversation/conversationtest runs the same scenarios on both. Goal
// loops (conversation/goal) and titles (conversation/title) are built
// over the interface.
//
// All methods are safe for concurrent use. In particular Pause, State,
// Status, AskAgent, RejectPendingActions and UpdateSecrets may be called
// while Run is in progress in another goroutine.
type Conversation interface {
	// ID returns the conversation id (a dashed UUID).
	ID() string
	// Status returns the conversation's execution status (for a remote
	// conversation, as last heard from the server).
	Status() ExecutionStatus
	// State returns the conversation's state for reading: its fields
	// (State().Fields()) and its event log (State().Events()). It is never
	// blocked by a running step. Do not change the state through it.
	State() *State
	// SendMessage appends a user message. It does not run the agent; a
	// finished or stuck conversation becomes idle, ready to Run again.
	SendMessage(ctx context.Context, msg event.Message) error
	// Run runs the agent until it finishes, is paused, waits for
	// confirmation, or fails. It returns nil when the run ended with status
	// finished, paused or waiting_for_confirmation, a *RunError when it
	// ended in error or stuck, and ErrRunning if a Run is already in
	// progress. Cancelling ctx pauses the conversation.
	Run(ctx context.Context) error
	// Pause asks a running conversation to stop: the step in progress is
	// cancelled through its context (a running tool is interrupted), a
	// PauseEvent is written and the status becomes paused. It returns at
	// once; Run returns when the pause has taken effect. Pausing an idle
	// conversation pauses it at once; in any other status Pause does
	// nothing. ctx bounds the request only (a remote conversation's call to
	// its server), so a cancelled one does not undo a pause.
	Pause(ctx context.Context) error
	// Interrupt is Pause recorded as the reference records an interrupt:
	// the in-flight model call and running tools are cancelled at once,
	// their actions answered, and an InterruptEvent written. With no Run
	// in progress it is Pause.
	Interrupt(ctx context.Context) error
	// AskAgent answers a side question from the conversation's history
	// without appending or persisting anything. It is safe during Run.
	AskAgent(ctx context.Context, question string) (string, error)
	// SetConfirmationPolicy sets the policy deciding which actions wait
	// for confirmation.
	SetConfirmationPolicy(ctx context.Context, p security.ConfirmationPolicy) error
	// RejectPendingActions answers every pending action with a
	// UserRejectObservation giving reason (a default reason if empty). A
	// conversation waiting for confirmation becomes idle.
	RejectPendingActions(ctx context.Context, reason string) error
	// UpdateSecrets adds or replaces named secrets, also mid-run.
	UpdateSecrets(ctx context.Context, sources map[string]secret.Source) error
	// NavigateTo moves the HEAD of the event tree to eventID ("": empty
	// HEAD), so that the next message starts a branch there. It fails
	// with ErrRunning during a Run and ErrNotFound for an unknown event.
	NavigateTo(ctx context.Context, eventID string) error
	// Fork copies the conversation into a new, independent one (see
	// ForkOptions) and returns it opened. A LocalConversation's fork is a
	// *LocalConversation, a remote one's is remote.
	Fork(ctx context.Context, opts *ForkOptions) (Conversation, error)
	// SwitchLLM makes the agent use the model cfg configures from the
	// next step on; ErrCannotSwitch for an agent whose model cannot be
	// replaced.
	SwitchLLM(ctx context.Context, cfg llm.Config) error
	// SwitchProfile switches the model to the named LLM profile.
	SwitchProfile(ctx context.Context, name string) error
	// Condense forces a condensation of the history: the condenser
	// replaces the older events with a summary in one step (during a Run,
	// in its next step). It fails with ErrCannotCondense for an agent
	// without a condenser acting on requests, and with
	// ErrWaitingForConfirmation while actions wait.
	Condense(ctx context.Context) error
	// LoadPlugin adds a plugin of the marketplaces the agent's context
	// registers to the conversation; ref is "name" or
	// "name@marketplace". Its skills and MCP servers join the agent,
	// which is stored with them, and its hooks the conversation's, from
	// the next step on: during a Run, from the step after the one in
	// progress (LoadPlugin does not wait for it). A plugin or marketplace
	// that is not there is an error matching plugin.ErrNotFound; one that
	// cannot be resolved, fetched or loaded, ErrCannotLoadPlugin.
	LoadPlugin(ctx context.Context, ref string) error
	// Subscribe registers fn to be called with every event committed from
	// now on, in commit order, until the returned function is called.
	// fn runs apart from the committing goroutine, so a slow fn never
	// delays the agent; one that falls too far behind is dropped.
	// unsubscribe returns once fn has been called for every event committed
	// before it and will not be called again; it must not be called from fn.
	Subscribe(fn func(event.Event)) (unsubscribe func())
	// Close stops using the conversation: it releases the agent's tools
	// and the store (and its lock). A Run in progress is paused first.
	Close() error
}

// Agent is what a conversation drives. The default implementation is
// agent.Agent, the other agent/acp's; conversation imports neither.
// agent/agenttest is the suite both pass.
//
// An Agent is an immutable configuration value of a registered kind (it is
// persisted in base_state.json as Fields.Agent). Start binds it to one
// conversation and returns the Runner that does the work. Every method is
// part of the contract: an agent without an ability says so through the
// method's answer (nil, ErrCannotSwitch, Started.CondensesOnRequest), so a
// missing ability is a compile error, not a run-time surprise.
type Agent interface {
	// Start prepares the agent for the conversation behind sess: it
	// materialises the tools and, unless the log already has it (a resumed
	// conversation), emits the SystemPromptEvent. It is called once per
	// opened conversation, before the first step.
	Start(ctx context.Context, sess *Session) (Started, error)
	// Verify reports whether the agent may take over a conversation
	// persisted with persisted, the agent decoded from base_state.json
	// (the reference's rule: same kind, and the tool set may only grow).
	Verify(persisted any) error
	// ForkAgent returns the agent a fork of the conversation runs with: a
	// copy that shares no runtime part with this one (a model accumulating
	// metrics), or the agent itself when it has none.
	ForkAgent() (Agent, error)
	// Marketplaces returns the plugin marketplaces the agent's context
	// registers, where LoadPlugin finds plugins (none: nil).
	Marketplaces() ([]plugin.Registration, error)
	// AddPlugins returns a copy of the agent with the skills and MCP
	// servers of set added (their hooks are the conversation's). An agent
	// that takes no plugins returns an error matching ErrUnsupported.
	AddPlugins(set *plugin.Set) (Agent, error)
}

// Started is what Agent.Start returns: the runner, and what the
// conversation needs to know of it besides its methods.
type Started struct {
	Runner Runner
	// CondensesOnRequest is set when the agent's condenser acts on
	// CondensationRequests (the reference's
	// handles_condensation_requests); Condense fails with
	// ErrCannotCondense without it.
	CondensesOnRequest bool
	// Agent, when set, is the agent with what it loaded at its start
	// (the ambient plugins, the registered marketplaces' skills) merged
	// in. The conversation stores it as its agent, as the reference does
	// on the first run, so that its state lists their skills and MCP
	// servers.
	Agent Agent
}

// Runner is an Agent bound to one conversation.
type Runner interface {
	// Step does one step of the agent loop: it executes pending actions,
	// or asks the model for the next move and carries it out. Events are
	// emitted through the Session; status changes (finished,
	// waiting_for_confirmation) are made through Session.SetStatus.
	//
	// A nil error means the step is done, whatever happened to the
	// tools (their failures are events the model sees). An error means
	// the step could not be done (the LLM failed): the run loop records
	// it as a ConversationErrorEvent and stops with status error; the
	// event's code is the error's ErrorCode() string if it has that
	// method, else derived from the llm error kinds. When ctx
	// is cancelled Step returns promptly with ctx's error, after
	// answering the actions it interrupted.
	Step(ctx context.Context) error
	// Ask answers question from view (the model's view of the history,
	// see Session.View) without emitting anything.
	Ask(ctx context.Context, view []event.Event, question string) (string, error)
	// PrepareMessage adds to a user message before it is logged, such as
	// the skills its words trigger (in its extended content and activated
	// skills); a runner with nothing to add returns nil. SendMessage calls
	// it; an error means the message is not sent.
	PrepareMessage(ctx context.Context, m *event.MessageEvent) error
	// Model returns the model the runner lends for side calls (a title, a
	// goal's judge), or nil if it has none to lend.
	Model() llm.Model
	// SaveStats copies the metrics the runner keeps apart from the state
	// into Fields.Stats (nil if it keeps none). The run loop calls it
	// before it checks the budget, so the check sees every call so far.
	SaveStats() error
	// SwitchLLM starts using a model made from cfg and returns the agent
	// configuration to persist (the old one with cfg as its LLM), or
	// ErrCannotSwitch for a runner whose model cannot be replaced.
	SwitchLLM(cfg llm.Config) (Agent, error)
	// Close releases the tools.
	Close() error
}

// Errors of the conversation API.
var (
	// ErrRunning is returned by Run when another Run is in progress.
	ErrRunning = errors.New("conversation: already running")
	// ErrConversationClosed is returned by methods of a closed
	// conversation.
	ErrConversationClosed = errors.New("conversation: closed")
	// ErrNoAgent is returned by New for a new conversation without an
	// agent, or a persisted one whose agent cannot run.
	ErrNoAgent = errors.New("conversation: no agent")
	// ErrUnsupported is returned (wrapped) by a method, or by an option
	// of one, that this kind of conversation cannot carry out, such as a
	// fork to another agent of a conversation on a server. It matches
	// errors.ErrUnsupported too.
	ErrUnsupported = fmt.Errorf("conversation: %w", errors.ErrUnsupported)
)

// RunError is returned by Run when the run ended with status error or
// stuck. Code is the ConversationErrorEvent's code (e.g.
// "MaxIterationsReached", "LLMError") or "Stuck".
type RunError struct {
	Status ExecutionStatus
	Code   string
	Detail string
	// Err is the underlying error, if any (e.g. the LLM's).
	Err error
}

// Error implements error.
func (e *RunError) Error() string {
	return fmt.Sprintf("conversation %s: %s: %s", e.Status, e.Code, e.Detail)
}

// Unwrap returns the underlying error.
func (e *RunError) Unwrap() error { return e.Err }

// Error codes of ConversationErrorEvents written by the run loop.
const (
	CodeMaxIterations = "MaxIterationsReached"
	CodeMaxBudget     = "MaxBudgetReached"
	CodeStuck         = "Stuck"
)

// LocalOptions configure a LocalConversation. A nil *LocalOptions is the
// default: a new in-memory conversation.
type LocalOptions struct {
	// ID is the conversation id. Empty means a new random id, or, with a
	// Store that holds a conversation, that conversation's id. A
	// conversation already stored under the id is resumed.
	ID string
	// Backend is where the conversation is kept (opened by its id);
	// filestore.NewBackend keeps conversations in a directory in the
	// reference's layout. Nil (and no Store) keeps it in memory only.
	Backend Backend
	// Store, if set, is the conversation's store, used instead of
	// Backend. The conversation owns it from then on: Close, or a failed
	// New, closes it.
	Store Store
	// Cipher encrypts secrets in base_state.json; without one they are
	// redacted there.
	Cipher *secret.Cipher
	// MaxIterations bounds the steps of one Run (0: the persisted value,
	// or DefaultMaxIterations).
	MaxIterations int
	// MaxBudgetPerRun, if positive, ends a Run with a MaxBudgetReached
	// error once the conversation's combined model cost in USD (every
	// usage id, sub-agents' included) reaches it. As in the reference it
	// is not persisted.
	MaxBudgetPerRun float64
	// DisableStuckDetection turns the stuck detector off.
	DisableStuckDetection bool
	// StuckThresholds configure the stuck detector (nil: defaults).
	StuckThresholds *StuckThresholds
	// ConfirmationPolicy, if set, replaces the persisted policy.
	ConfirmationPolicy security.ConfirmationPolicy
	// HookConfig, if set, replaces the persisted hook configuration
	// (hook_config: the JSON of a hook.Config). Without one the agent reads
	// the workspace's .openhands/hooks.json.
	HookConfig json.RawMessage
	// SecurityAnalyzer, if set, replaces the persisted analyzer. It must
	// be a value of a registered kind, so that it is persisted.
	SecurityAnalyzer security.Analyzer
	// Plugins are fetched (git sources into PluginFetch's cache) and
	// loaded by New, as a start request's plugins: their skills, MCP
	// servers and sub-agents are merged into the agent given to New
	// (Agent.AddPlugins), their hooks after the conversation's
	// (HookConfig, or else the workspace's hooks file). The reference
	// loads them on the first run; New does so that a plugin that cannot
	// be loaded fails the opening (an error wrapping ErrCannotLoadPlugin),
	// before anything is stored.
	//
	// Resuming the persisted agent (a nil agent), whose stored skills, MCP
	// servers and hook_config have them already, New loads them again for
	// their sub-agents only, which are not stored; as the reference's
	// sub-agent registry, the sub-agents of a plugin added by LoadPlugin
	// are not back after a restart. A plugin that cannot be loaded then is
	// logged and the conversation opens without its sub-agents.
	Plugins []plugin.Source
	// PluginFetch are where and how Plugins are fetched (nil: the user's
	// plugin cache, the default timeouts).
	PluginFetch *plugin.FetchOptions
	// Secrets are added to the conversation's secret registry.
	Secrets map[string]secret.Source
	// FirstMessage, if set, is sent by New (as SendMessage sends it). A
	// new conversation's base state is written only once the message is
	// stored, so a process killed during the creation never leaves a
	// conversation without its task: what it leaves is events without a
	// base state, which the next New with the same id takes up (sending
	// the message again only if they hold no user message).
	FirstMessage *event.Message
	// RecordStateChanges appends a ConversationStateUpdateEvent to the log
	// for every change of a state field (see Options.RecordChanges), as
	// the reference's agent server does.
	RecordStateChanges bool
	// OmitSecurityAnalysis leaves the SecurityAnalysisEvents out of the
	// log. The kind is the reference's since 1.58, but a reference client
	// of 1.43.1 cannot decode it: the server omits them unless told
	// otherwise.
	OmitSecurityAnalysis bool
	// ReplaceAgent makes a resume store the agent given to New in place of
	// the persisted one. By default the stored agent is left as it was
	// written (its tools, condenser and model): the given agent runs the
	// conversation, but a reference process resuming it later meets the
	// agent it started with, which it requires (it refuses a resume that
	// removes tools).
	ReplaceAgent bool
	// OnEvent, if set, is called with every event of the conversation's
	// life, from the first, in commit order, on the committing goroutine
	// before the call that committed it returns (the reference's
	// callbacks). It holds up the agent while it runs: keep it quick, and
	// use Subscribe or Watch for anything slow.
	OnEvent func(event.Event)
	// MCPOAuthWriteBack, if set, is called when an MCP server of the
	// agent's mcp_config has new OAuth tokens (a refresh), with the
	// server's URL and the JSON body the reference's agent server posts
	// to its webhooks' /mcp-oauth-state: {"server_url", "oauth_state"},
	// the state's secrets in clear. It runs on the agent's path, and must
	// not log the body.
	MCPOAuthWriteBack func(serverURL string, body []byte)
	// SubscriberBuffer is how many events a subscriber (Subscribe, Watch)
	// may fall behind before it is dropped (pubsub.DefaultBuffer if 0).
	SubscriberBuffer int
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// Profiles are the named model configurations SwitchProfile picks
	// from (the user's settings' llm_profiles).
	Profiles llm.Profiles

	// seed fills a new conversation with a fork's fields and events.
	seed *forkSeed
}
