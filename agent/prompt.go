package agent

import (
	"fmt"
	"strings"
	"sync"
	"time"
)

// systemPrompt is gohands' own system prompt. It is short on purpose:
// tool descriptions say how each tool works, this says how to work.
//
// It opens with the persona paragraph, which Agent.Persona replaces.
const systemPrompt = defaultPersona + "\n\n" + workPrompt

// defaultPersona says who the agent is.
const defaultPersona = `You are gohands, a software engineering agent. You complete the user's task by working in a real workspace with the tools you are given: read code, edit files, run commands.`

// workPrompt says how the agent works, whatever its persona.
const workPrompt = `How to work:
- Look before you change: find the relevant files and read them first.
- Make the smallest change that does the job, in the style of the code around it.
- Check your work: build it, run the tests or the program when you can.
- When something fails, read the error and change course rather than repeating the same call.
- Several independent tool calls may be made in one reply; dependent steps go one after the other.
- Values shown as <secret-hidden> are secrets: use them through environment variables, never print or copy them.
- When the task is done, call finish with a short account of what you did. If you need something from the user, say so in a plain message.`

// riskPrompt is added when tools take the security_risk argument.
const riskPrompt = `

Rate every action's security_risk: LOW for reading and harmless changes inside the workspace, MEDIUM for changes that are hard to undo or reach outside the workspace, HIGH for destructive or dangerous actions (deleting data, sending secrets or data elsewhere, changing the system).`

// memoryPrompt is added when the agent context sets load_memory.
const memoryPrompt = `

You keep notes across sessions in two places: .openhands/memory/ in the workspace for this project, and ~/.openhands/memory/ ($OH_PERSISTENCE_DIR/memory/ when that is set) for what holds everywhere. In each, MEMORY.md is a short index of lasting facts that is shown to you at the start of every session, so keep it brief and append to it; dated logs (YYYY-MM-DD.md) hold working notes that you read only when needed. Before you finish a task, note what is worth keeping (create the files if needed). Instructions for every agent still belong in AGENTS.md.`

// dynamicContext is the part of the prompt that depends on where and when
// the conversation starts; it is computed once, when the conversation is
// initialised.
func dynamicContext(workDir string, now time.Time, secretNames []string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Workspace directory: %s\nDate: %s", workDir, now.Format("2006-01-02"))
	if len(secretNames) > 0 {
		fmt.Fprintf(&b, "\nSecrets available as environment variables in commands that name them: %s", strings.Join(secretNames, ", "))
	}
	return b.String()
}

// promptTemplates maps the file names of the reference's system prompt
// templates (Agent.SystemPromptFilename) to the text gohands gives an
// agent that names one. The reference renders its Jinja template of that
// name; gohands has none, and may not put the text in SystemPrompt beside
// a non-default file name: the reference 1.58.2 refuses an agent with both
// (422 from its server, and it cannot load such a conversation).
var promptTemplates sync.Map // string → string

// RegisterSystemPrompt makes prompt the system prompt of agents whose
// SystemPromptFilename is filename and whose SystemPrompt is empty. A
// preset that stands for one of the reference's (the planning agent's
// system_prompt_planning.j2) registers its text from an init function.
func RegisterSystemPrompt(filename, prompt string) {
	promptTemplates.Store(filename, prompt)
}

// templatePrompt returns the prompt registered for filename.
func templatePrompt(filename string) (string, bool) {
	p, ok := promptTemplates.Load(filename)
	if !ok {
		return "", false
	}
	return p.(string), true
}
