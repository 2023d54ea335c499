package main

import (
	"fmt"
	"io"
	"regexp"
	"strings"

	"github.com/gohands/gohands/tools/preset"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/workspace/docker"
)

// Environment variables read by the command line (never by the library).
const (
	envModel   = "LLM_MODEL"
	envAPIKey  = "LLM_API_KEY"
	envBaseURL = "LLM_BASE_URL"
)

// noModelHelp is printed when no model is configured.
const noModelHelp = `no model configured.
Choose one with --model or the LLM_MODEL environment variable, and give its key
with --api-key or LLM_API_KEY, for example:

    export LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=sk-ant-...
    export LLM_MODEL=openai/gpt-5.5 LLM_API_KEY=sk-...
    export LLM_MODEL=gemini/gemini-2.5-pro LLM_API_KEY=...

For an OpenAI-compatible server (vLLM, Ollama, LiteLLM, ...) also set
--base-url or LLM_BASE_URL, e.g. LLM_MODEL=openai/qwen3-coder LLM_BASE_URL=http://localhost:8000/v1`

type runFlags struct {
	model, apiKey, baseURL string
	llmConfig              string
	workspace              string
	persistenceDir         string
	conversationID         string
	cont                   bool // -c: continue the workspace's latest conversation
	maxIterations          int
	maxBudget              float64
	goal                   int
	profile                string
	json                   bool
	secrets                []string
	verbose                bool
	mcpConfig              string
	confirm                string
	allowHighRisk          bool
	acp                    string
	preset                 string
	browser                bool
	tools                  []string
	memory                 bool
	plugins                []string
	metaProfile            string
	images                 []string
	moveWorkspace          bool
	server, sessionKey     string
	sandbox, sandboxImage  string
	retry                  retryFlags
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] TASK",
		Short: "Run the agent on a task until it finishes",
		Long: `Run the agent on TASK in the workspace directory until it finishes.

TASK is the rest of the command line; "-" reads it from standard input. With
--conversation-id, a stored conversation continues (TASK, if given, is sent to
it first); a new conversation gets that id. -c continues the conversation of
the workspace updated last: gohands run -c "yes, go ahead" answers the agent's
question.

Interrupt (Ctrl-C) pauses the conversation, which can then be continued with
--conversation-id; a second interrupt quits at once. Events are shown as a
readable transcript, or with --json as JSON lines exactly as stored.

Safety: by default (--confirm never) nothing is asked, and actions rated HIGH
risk (by the model's own rating or by the rules: rm -rf outside the
workspace, sudo, package removal, force pushes, reading keys, ...) are refused
without running: the agent is told and continues, the refused actions are
printed (listed as "refused" in the --json result) and the exit status is 6.
--allow-high-risk runs them unasked instead (the old default: use it only in
a sandbox). Nothing else is sandboxed: LOW and MEDIUM risk commands run as
you (--sandbox docker runs the whole run in a container). A resumed
conversation with a security analyzer of its own (one the reference wrote,
say) keeps it, and its confirmation policy, unless --confirm is given: what
they make wait is refused if HIGH and runs otherwise.

With --confirm always or risky, actions wait for an answer: each is shown
with its risk and "y" on standard input runs them, "n" rejects them (the
agent is told and continues). The prompt goes to standard error with
--json. --mcp-config adds the tools of MCP servers, started for the run.

Exit status: 0 when the agent finished; 1 on error, 2 on bad usage, 3 when the
agent is stuck, 4 when it reached --max-iterations, 5 when actions wait for
confirmation, 6 when the agent finished but HIGH risk actions were refused,
130 when paused by an interrupt (SIGINT, Ctrl-C) and 143 when paused by
SIGTERM: the running command or model call is cancelled, the conversation is
paused and stored, and --conversation-id continues it. A second signal quits
at once.`,
		Example: `  gohands run "add a --verbose flag to main.go and test it"
  gohands run --workspace ~/src/app --json "fix the failing test" > events.jsonl
  gohands run --conversation-id 2b1c... "now update the README"
  gohands run -c "yes, use the second option"
  gohands run --secret GITHUB_TOKEN "open an issue for the bug you found"
  gohands run --confirm risky --mcp-config mcp.json "tidy the repository"
  gohands run --acp "npx -y @zed-industries/claude-agent-acp" "fix the failing test"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if f.sandbox != "" {
				return a.runSandboxed(cmd.Context(), cmd, &f, args)
			}
			return a.run(cmd.Context(), &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model, e.g. anthropic/claude-sonnet-4-5 (default $"+envModel+")")
	fl.StringVar(&f.apiKey, "api-key", "", "the model provider's API key (default $"+envAPIKey+")")
	fl.StringVar(&f.baseURL, "base-url", "", "base URL of the model's API, for OpenAI-compatible servers (default $"+envBaseURL+")")
	fl.StringVar(&f.llmConfig, "llm-config", "", "JSON `file` with a full LLM configuration (the OpenHands LLM object); the flags above override it")
	addRetryFlags(fl, &f.retry)
	fl.StringVar(&f.workspace, "workspace", "", "`directory` the agent works in (default: the current directory)")
	fl.StringVar(&f.persistenceDir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	fl.StringVar(&f.conversationID, "conversation-id", "", "continue the stored conversation with this `id`, or start one with it")
	fl.BoolVarP(&f.cont, "continue", "c", false, "continue the latest conversation of the workspace (TASK, if given, is sent to it)")
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "maximum agent steps per run (default: the conversation's, 500 for a new one)")
	fl.StringVar(&f.profile, "profile", "", "use the LLM profile `name` of the settings' llm_profiles (a full model configuration) instead of --model and the settings' model")
	fl.IntVar(&f.goal, "goal", 0, "pursue the task as a goal over up to `N` runs: after each, the model judges whether it is met and, if not, the agent is told what is missing (0: one run)")
	fl.Float64Var(&f.maxBudget, "max-budget", 0, "stop with an error once the conversation's model costs reach this many `USD` (sub-agents included; 0: no limit)")
	fl.BoolVar(&f.json, "json", false, "print events as JSON lines, exactly as stored")
	fl.StringArrayVar(&f.secrets, "secret", nil, "make a secret available to commands as an environment variable: `NAME=VALUE`, or NAME to take the value of $NAME; its value is hidden from the model and the stored events (repeatable)")
	fl.StringVar(&f.mcpConfig, "mcp-config", "", "JSON `file` of MCP servers ({\"mcpServers\": {...}}) whose tools the agent gets")
	fl.StringVar(&f.confirm, "confirm", "", "which actions wait for a y/n answer on standard input: `never` (the default, or the settings' confirm: nothing is asked and HIGH risk actions are refused), always, or risky (HIGH or unknown risk, the higher of the model's own rating and the rules)")
	fl.BoolVar(&f.allowHighRisk, "allow-high-risk", false, "with --confirm never: run HIGH risk actions unasked instead of refusing them (only in a sandbox)")
	fl.BoolVar(&f.moveWorkspace, "move-workspace", false, "let a resumed conversation work in a --workspace other than its own")
	fl.StringVar(&f.server, "server", "", "run the agent on the agent server at this `URL` (gohands serve or the reference's); --workspace is then a directory on that server")
	fl.StringVar(&f.sessionKey, "session-key", "", "the agent server's session `key` (default $SESSION_API_KEY)")
	fl.StringVar(&f.acp, "acp", "", "run the task through this Agent Client Protocol server `command` (e.g. \"npx -y @zed-industries/claude-agent-acp\"), which brings its own model and tools, instead of gohands' agent")
	fl.StringVar(&f.preset, "preset", preset.Default, "the agent: `NAME` of a preset, one of "+strings.Join(preset.Names(), ", ")+" (all but planning can hand work to sub-agents with the task tool)")
	fl.BoolVar(&f.browser, "browser", false, "give the agent a web browser: the browser tools drive a headless Chromium (Debian's chromium package), started on first use and stopped with the run")
	fl.StringArrayVar(&f.tools, "tool", nil, "give the agent a further tool or tool set by its registered `NAME`, as a start request's tools list does, e.g. switch_llm (the model moves the conversation to another of the settings' llm_profiles) or workflow_tool_set (sub-agents run by a Python script); repeatable")
	fl.StringArrayVar(&f.images, "attach-image", nil, "send the image `FILE` (PNG, JPEG, GIF or WebP; or an http(s) URL) with TASK; a model that cannot see images asks a vision model of the settings' llm_profiles with inspect_image_with_vision; repeatable")
	fl.StringVar(&f.metaProfile, "meta-profile", "", "give the agent route_task_to_model: a classifier picks the kind of task by the meta-profile `NAME` ($OH_PERSISTENCE_DIR or ~/.openhands, meta-profiles/NAME.json) and the conversation switches to that kind's profile of the settings' llm_profiles")
	fl.StringArrayVar(&f.plugins, "plugin", nil, "load the plugin at `SOURCE` (github:owner/repo[/path], a git URL or a directory; SOURCE#REF pins a branch, tag or commit) for this conversation, as a start request's plugins: its skills, hooks and MCP servers; repeatable")
	fl.BoolVar(&f.memory, "memory", false, "give the agent its memory: the indexes ~/.openhands/memory/MEMORY.md (yours) and .openhands/memory/MEMORY.md (the workspace's) are shown to it, and it is asked to keep them up to date (the agent context's load_memory)")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log diagnostics to standard error")
	fl.StringVar(&f.sandbox, "sandbox", "", "run in a sandbox: `docker` runs this command in a fresh container of the gohands image (scripts/image.sh) with the workspace mounted, on this machine's network")
	fl.StringVar(&f.sandboxImage, "image", "", "with --sandbox docker: the `image` (default $GOHANDS_IMAGE or "+docker.DefaultImage+")")
	return cmd
}

// envName is what a secret may be called: an environment variable name.
var envName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// parseSecrets reads --secret values.
func (a *app) parseSecrets(specs []string) (map[string]secret.Source, error) {
	if len(specs) == 0 {
		return nil, nil
	}
	out := make(map[string]secret.Source, len(specs))
	for _, s := range specs {
		name, value, hasValue := strings.Cut(s, "=")
		if !envName.MatchString(name) {
			return nil, usageErr("--secret %q: the name must be an environment variable name (letters, digits, _)", name)
		}
		if !hasValue {
			value = a.getenv(name)
			if value == "" {
				return nil, usageErr("--secret %s: $%s is not set (or give the value as %s=VALUE)", name, name, name)
			}
		}
		if value == "" {
			return nil, usageErr("--secret %s: empty value", name)
		}
		out[name] = &secret.StaticSecret{Value: secret.New(value)}
	}
	return out, nil
}

// readTask returns the task given on the command line.
func (a *app) readTask(args []string) (string, error) {
	if len(args) == 1 && args[0] == "-" {
		b, err := io.ReadAll(a.stdin)
		if err != nil {
			return "", &exitErr{code: exitError, msg: fmt.Sprintf("reading the task from standard input: %v", err)}
		}
		return strings.TrimSpace(string(b)), nil
	}
	return strings.TrimSpace(strings.Join(args, " ")), nil
}

// oneLine keeps the first line of s, for the one-line exit reason.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if before, _, ok := strings.Cut(s, "\n"); ok {
		return before + " …"
	}
	return s
}
