package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/security"
	"github.com/gohands/gohands/tools/preset"
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
	maxIterations          int
	json                   bool
	secrets                []string
	verbose                bool
	mcpConfig              string
	confirm                string
	acp                    string
	preset                 string
	browser                bool
}

func (a *app) runCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run [flags] TASK",
		Short: "Run the agent on a task until it finishes",
		Long: `Run the agent on TASK in the workspace directory until it finishes.

TASK is the rest of the command line; "-" reads it from standard input. With
--conversation-id, a stored conversation continues (TASK, if given, is sent to
it first); a new conversation gets that id.

Interrupt (Ctrl-C) pauses the conversation, which can then be continued with
--conversation-id; a second interrupt quits at once. Events are shown as a
readable transcript, or with --json as JSON lines exactly as stored.

With --confirm always or risky, actions wait for an answer: each is shown
with its risk and "y" on standard input runs them, "n" rejects them (the
agent is told and continues). The prompt goes to standard error with
--json. --mcp-config adds the tools of MCP servers, started for the run.

Exit status: 0 when the agent finished; 1 on error, 2 on bad usage, 3 when the
agent is stuck, 4 when it reached --max-iterations, 5 when actions wait for
confirmation, 130 when paused by an interrupt.`,
		Example: `  gohands run "add a --verbose flag to main.go and test it"
  gohands run --workspace ~/src/app --json "fix the failing test" > events.jsonl
  gohands run --conversation-id 2b1c... "now update the README"
  gohands run --secret GITHUB_TOKEN "open an issue for the bug you found"
  gohands run --confirm risky --mcp-config mcp.json "tidy the repository"
  gohands run --acp "npx -y @zed-industries/claude-agent-acp" "fix the failing test"`,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.run(cmd.Context(), &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model, e.g. anthropic/claude-sonnet-4-5 (default $"+envModel+")")
	fl.StringVar(&f.apiKey, "api-key", "", "the model provider's API key (default $"+envAPIKey+")")
	fl.StringVar(&f.baseURL, "base-url", "", "base URL of the model's API, for OpenAI-compatible servers (default $"+envBaseURL+")")
	fl.StringVar(&f.llmConfig, "llm-config", "", "JSON `file` with a full LLM configuration (the OpenHands LLM object); the flags above override it")
	fl.StringVar(&f.workspace, "workspace", "", "`directory` the agent works in (default: the current directory)")
	fl.StringVar(&f.persistenceDir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	fl.StringVar(&f.conversationID, "conversation-id", "", "continue the stored conversation with this `id`, or start one with it")
	fl.IntVar(&f.maxIterations, "max-iterations", 0, "maximum agent steps per run (default: the conversation's, 500 for a new one)")
	fl.BoolVar(&f.json, "json", false, "print events as JSON lines, exactly as stored")
	fl.StringArrayVar(&f.secrets, "secret", nil, "make a secret available to commands as an environment variable: `NAME=VALUE`, or NAME to take the value of $NAME; its value is hidden from the model and the stored events (repeatable)")
	fl.StringVar(&f.mcpConfig, "mcp-config", "", "JSON `file` of MCP servers ({\"mcpServers\": {...}}) whose tools the agent gets")
	fl.StringVar(&f.confirm, "confirm", "never", "which actions wait for a y/n answer on standard input: `never`, always, or risky (HIGH or unknown risk by the rule-based analyzer)")
	fl.StringVar(&f.acp, "acp", "", "run the task through this Agent Client Protocol server `command` (e.g. \"npx -y @zed-industries/claude-agent-acp\"), which brings its own model and tools, instead of gohands' agent")
	fl.StringVar(&f.preset, "preset", preset.Default, "the agent: `NAME` of a preset, one of "+strings.Join(preset.Names(), ", ")+" (all but planning can hand work to sub-agents with the task tool)")
	fl.BoolVar(&f.browser, "browser", false, "give the agent a web browser: the browser tools drive a headless Chromium (Debian's chromium package), started on first use and stopped with the run")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log diagnostics to standard error")
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

// llmConfig builds the model configuration from --llm-config, the flags
// and the environment, in increasing order of precedence below the flags.
func (a *app) llmConfig(f *runFlags) (llm.Config, error) {
	cfg := llm.DefaultConfig("")
	if f.llmConfig != "" {
		data, err := os.ReadFile(f.llmConfig)
		if err != nil {
			return cfg, usageErr("--llm-config: %v", err)
		}
		if err := json.Unmarshal(data, &cfg); err != nil {
			return cfg, usageErr("--llm-config %s: %v", f.llmConfig, err)
		}
	}
	pick := func(flag, env, cur string) string {
		if flag != "" {
			return flag
		}
		if v := a.getenv(env); v != "" {
			return v
		}
		return cur
	}
	cfg.Model = pick(f.model, envModel, cfg.Model)
	cfg.BaseURL = pick(f.baseURL, envBaseURL, cfg.BaseURL)
	if key := pick(f.apiKey, envAPIKey, ""); key != "" {
		cfg.APIKey = secret.New(key)
	}
	if strings.TrimSpace(cfg.Model) == "" {
		return cfg, usageErr("%s", noModelHelp)
	}
	return cfg, nil
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

func (a *app) run(ctx context.Context, f *runFlags, args []string) error {
	task, err := a.readTask(args)
	if err != nil {
		return err
	}
	var cfg llm.Config
	if f.acp == "" {
		if cfg, err = a.llmConfig(f); err != nil {
			return err
		}
	} else if f.mcpConfig != "" {
		return usageErr("--mcp-config cannot be used with --acp: the ACP server brings its own tools")
	}
	sources, err := a.parseSecrets(f.secrets)
	if err != nil {
		return err
	}
	// The agent's commands inherit this process's environment: keep the
	// model's key out of it, and the secrets too, which the terminal
	// exports only to the commands that name them.
	hide := []string{envAPIKey}
	for name := range sources {
		hide = append(hide, name)
	}
	for _, name := range hide {
		if err := a.unsetenv(name); err != nil {
			return &exitErr{code: exitError, msg: fmt.Sprintf("unsetting $%s: %v", name, err)}
		}
	}
	if f.maxIterations < 0 {
		return usageErr("--max-iterations %d: must not be negative", f.maxIterations)
	}
	base, err := a.persistenceDir(f.persistenceDir)
	if err != nil {
		return err
	}
	secretNames := make([]string, 0, len(sources))
	for name := range sources {
		secretNames = append(secretNames, name)
	}
	policy, analyzer, err := confirmPolicy(f.confirm, "", nil)
	if err != nil {
		return err
	}
	workDir := f.workspace
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return &exitErr{code: exitError, msg: fmt.Sprintf("workspace: %v", err)}
		}
	}
	if workDir, err = filepath.Abs(workDir); err != nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("workspace: %v", err)}
	}

	id := f.conversationID
	resume := false
	if id != "" {
		u, err := uuid.Parse(id)
		if err != nil {
			return usageErr("--conversation-id %q: not a conversation id (a UUID)", id)
		}
		id = u.String()
		_, err = os.Stat(filepath.Join(conversation.ConversationDir(base, id), conversation.BaseStateFile))
		resume = err == nil
	}
	if task == "" && !resume {
		if id != "" {
			return usageErr("no conversation %s in %s, and no task to start one", id, base)
		}
		return usageErr("no task given: gohands run [flags] TASK")
	}

	level := slog.LevelWarn
	if f.verbose {
		level = slog.LevelDebug
	}
	logger := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	llmLog := logger
	if !f.verbose {
		// Retries are reported by onRetry below, in one readable line.
		llmLog = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	}
	if analyzer != nil {
		policy, analyzer, _ = confirmPolicy(f.confirm, workDir, secretNames)
	}
	var ag conversation.Agent
	var model *llm.LLM
	if f.acp != "" {
		if ag, err = acpAgent(f.acp); err != nil {
			return err
		}
	} else {
		model, err = llm.New(cfg, &llm.Options{
			Logger: llmLog,
			OnRetry: func(attempt int, wait time.Duration, err error) {
				fmt.Fprintf(a.stderr, "gohands: model call failed (attempt %d of %d), retrying in %s: %v\n",
					attempt, max(cfg.NumRetries, 1), wait.Round(time.Millisecond), err)
			},
		})
		if err != nil {
			return usageErr("model %q: %v", cfg.Model, err)
		}
		def, err := preset.New(f.preset, cfg, &preset.Options{SubAgents: true, Browser: f.browser})
		if err != nil {
			return usageErr("--preset: %v", err)
		}
		def.Model = model
		mcpSet, err := a.connectMCP(ctx, f.mcpConfig, def, llmLog)
		if mcpSet != nil {
			defer mcpSet.Close() // stops the servers' processes
		}
		if err != nil {
			return err
		}
		ag = def
	}

	var onEvent func(event.Event)
	var vErr func() error
	if f.json {
		j := visualizer.NewJSONL(a.stdout)
		onEvent, vErr = j.OnEvent, j.Err
	} else {
		v := visualizer.New(a.stdout, &visualizer.Options{Stats: func() map[string]*llm.Metrics {
			if model == nil {
				return nil
			}
			m := model.Metrics()
			return map[string]*llm.Metrics{model.UsageID(): &m}
		}})
		onEvent, vErr = v.OnEvent, v.Err
	}
	prompt := a.stdout
	if f.json {
		prompt = a.stderr
	}
	ask := &asker{in: a.stdin, out: prompt, done: make(chan struct{})}
	defer ask.close()
	ask.analyzer, _ = analyzer.(security.Analyzer)

	// The first interrupt cancels runCtx, which pauses the conversation
	// (even before Run has started); the second quits at once.
	runCtx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := make(chan struct{})
	defer close(done)
	interrupted := make(chan struct{})
	go func() {
		n := 0
		for {
			select {
			case <-done:
				return
			case <-a.signals:
				n++
				if n == 1 {
					fmt.Fprintln(a.stderr, "gohands: pausing the conversation (interrupt again to quit at once)")
					close(interrupted)
					cancel()
					continue
				}
				fmt.Fprintln(a.stderr, "gohands: quitting")
				a.exit(exitPaused)
				return
			}
		}
	}()

	conv, err := conversation.New(ctx, ag, workDir, &conversation.LocalOptions{
		ID:             id,
		PersistenceDir: base,
		MaxIterations:  f.maxIterations,
		Secrets:        sources,
		OnEvent:        onEvent,
		Logger:         logger,

		ConfirmationPolicy: policy,
		SecurityAnalyzer:   analyzer,
	})
	if err != nil {
		if errors.Is(err, conversation.ErrLocked) {
			return &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s is in use by another process", id)}
		}
		return &exitErr{code: exitError, msg: err.Error()}
	}
	id = conv.ID()
	if model != nil {
		if m := conv.State().Fields().Stats.UsageToMetrics[model.UsageID()]; m != nil {
			model.RestoreMetrics(*m)
		}
	}
	verb := "starting"
	if resume {
		verb = "continuing"
	}
	fmt.Fprintf(a.stderr, "gohands: %s conversation %s in %s\n", verb, id, workDir)

	runErr := func() error {
		if task != "" {
			if err := conv.SendMessage(runCtx, event.UserMessage(task)); err != nil {
				return err
			}
		}
		// A resumed conversation may already wait: ask before running,
		// since running approves.
		asking := f.confirm != "never" && conv.Status() == conversation.StatusWaitingForConfirmation
		for {
			if !asking {
				if err := conv.Run(runCtx); err != nil {
					return err
				}
				if conv.Status() != conversation.StatusWaitingForConfirmation || f.confirm == "never" {
					return nil
				}
			}
			asking = false
			pending, err := pendingActions(conv.State())
			if err != nil {
				return err
			}
			ok, err := ask.ask(runCtx, pending)
			if err != nil {
				if errors.Is(err, errNoAnswer) {
					return nil // the status tells: waiting for confirmation
				}
				return err
			}
			if !ok {
				if err := conv.RejectPendingActions(runCtx, ""); err != nil {
					return err
				}
			}
		}
	}()
	status := conv.Status()
	closeErr := conv.Close()
	if err := vErr(); err != nil && !errors.Is(err, os.ErrClosed) {
		fmt.Fprintf(a.stderr, "gohands: writing events: %v\n", err)
	}

	resumeHint := "gohands run --conversation-id " + id
	if f.persistenceDir != "" {
		resumeHint += " --persistence-dir " + base
	}
	var re *conversation.RunError
	switch {
	case status == conversation.StatusFinished && runErr == nil:
		if closeErr != nil {
			return &exitErr{code: exitError, msg: fmt.Sprintf("closing the conversation: %v", closeErr)}
		}
		return nil
	case status == conversation.StatusPaused:
		why := "paused"
		select {
		case <-interrupted:
			why = "paused by interrupt"
		default:
		}
		return &exitErr{code: exitPaused, msg: fmt.Sprintf("%s; continue with: %s", why, resumeHint)}
	case status == conversation.StatusWaitingForConfirmation:
		return &exitErr{code: exitConfirmation, msg: "actions are waiting for confirmation; continue with: " + resumeHint}
	case errors.As(runErr, &re):
		code := exitError
		switch {
		case re.Status == conversation.StatusStuck:
			code = exitStuck
		case re.Code == conversation.CodeMaxIterations:
			code = exitMaxIter
		}
		return &exitErr{code: code, msg: fmt.Sprintf("%s: %s: %s", re.Status, re.Code, oneLine(re.Detail))}
	case runErr != nil:
		select {
		case <-interrupted:
			return &exitErr{code: exitPaused, msg: fmt.Sprintf("interrupted: %v", oneLine(runErr.Error()))}
		default:
		}
		return &exitErr{code: exitError, msg: oneLine(runErr.Error())}
	default:
		return &exitErr{code: exitError, msg: fmt.Sprintf("the run stopped with status %s; continue with: %s", status, resumeHint)}
	}
}

// oneLine keeps the first line of s, for the one-line exit reason.
func oneLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i] + " …"
	}
	return s
}
