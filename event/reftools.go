package event

// Tool kinds of the reference 1.58 that gohands has no tool for. They are
// declared here, field for field, so that a conversation the reference
// wrote with them is read, checked and written back as any other; a tool
// gohands does not run answers such an action with an error (unknown
// tool), as the reference does for a tool it does not have.

// AskOracleAction asks a second model (the reference's "oracle" LLM
// profile) for advice.
type AskOracleAction struct {
	Question string `json:"question" required:"true" desc:"What you want advice on: the problem, the choice or the doubt."`
	Context  string `json:"context,omitempty" desc:"What the oracle should know: what you tried, constraints, the option you lean to."`
}

// AskOracleObservation is the oracle's answer, as text content.
type AskOracleObservation struct {
	ObservationBase
}

// ClassifyAndSwitchLLMAction asks the agent to classify the task and switch
// to the LLM profile of its class. It has no arguments.
type ClassifyAndSwitchLLMAction struct{}

// ClassifyAndSwitchLLMObservation reports the class chosen and the model
// switched to.
type ClassifyAndSwitchLLMObservation struct {
	ObservationBase
	ChosenClass string `json:"chosen_class,omitempty"`
	Model       string `json:"model,omitempty"`
	ActiveModel string `json:"active_model,omitempty"`
}

// Isolation of a child conversation's workspace.
const (
	IsolationWorktree = "worktree"
	IsolationShared   = "shared"
)

// StartChildConversationAction starts a child conversation on a task, in a
// git worktree of its own ("worktree", the default) or in the parent's
// workspace ("shared").
// (The tool is tools/childconversation; the descriptions are its schema's.)
type StartChildConversationAction struct {
	Task      string `json:"task" required:"true" desc:"The child's whole brief: goal, files, constraints, expected result. It does not see this conversation."`
	Title     string `json:"title,omitempty" desc:"A short title for the child."`
	Isolation string `json:"isolation" default:"worktree" enum:"worktree,shared" desc:"worktree: its own git worktree and branch (from the default branch) when the workspace is a repository; shared: this directory, with its uncommitted changes."`
}

// SetDefaults gives Isolation the reference's default.
func (a *StartChildConversationAction) SetDefaults() { a.Isolation = IsolationWorktree }

// StartChildConversationObservation reports the child conversation started.
type StartChildConversationObservation struct {
	ObservationBase
	ConversationID       string `json:"conversation_id,omitempty"`
	ParentConversationID string `json:"parent_conversation_id,omitempty"`
	Status               string `json:"status,omitempty"`
	Title                string `json:"title,omitempty"`
	URL                  string `json:"url,omitempty"`
	Workspace            string `json:"workspace,omitempty"`
	Isolation            string `json:"isolation,omitempty"`
}

func init() {
	RegisterKind[AskOracleAction]("AskOracleAction")
	RegisterKind[AskOracleObservation]("AskOracleObservation")
	RegisterKind[ClassifyAndSwitchLLMAction]("ClassifyAndSwitchLLMAction")
	RegisterKind[ClassifyAndSwitchLLMObservation]("ClassifyAndSwitchLLMObservation")
	RegisterKind[StartChildConversationAction]("StartChildConversationAction")
	RegisterKind[StartChildConversationObservation]("StartChildConversationObservation")
}
