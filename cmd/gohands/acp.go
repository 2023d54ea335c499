package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/agent"
	acpagent "github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/agent/acp/acpserver"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/tools/preset"
)

func (a *app) acpCmd() *cobra.Command {
	var f runFlags
	var mode string
	var models []string
	cmd := &cobra.Command{
		Use:   "acp [flags]",
		Short: "Serve the agent to an editor over the Agent Client Protocol on stdio",
		Long: `Serve gohands to an Agent Client Protocol client, such as the Zed editor,
on standard input and output. The editor starts it, opens sessions in a
directory (each a stored conversation, which session/load continues) and
sends prompts; the agent's messages, thoughts, tool calls and plans stream
back. MCP servers the editor passes become tools.

Session modes: always-ask (the default: every action asks permission),
ask-risky (actions the rule-based analyzer rates HIGH or unknown ask) and
always-approve. Tool calls have readable titles, and edits are sent as
diffs, which editors show as such.

The model is configured as for "gohands run". Diagnostics go to standard
error with -v; standard output carries the protocol only.`,
		Example: `  # Zed settings.json:
  "agent_servers": {"gohands": {"type": "custom", "command": "gohands", "args": ["acp"],
    "env": {"LLM_MODEL": "anthropic/claude-sonnet-4-5", "LLM_API_KEY": "..."}}}`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return a.serveACP(cmd.Context(), &f, mode, models)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.model, "model", "", "model, e.g. anthropic/claude-sonnet-4-5 (default $"+envModel+")")
	fl.StringVar(&f.apiKey, "api-key", "", "the model provider's API key (default $"+envAPIKey+")")
	fl.StringVar(&f.baseURL, "base-url", "", "base URL of the model's API, for OpenAI-compatible servers (default $"+envBaseURL+")")
	fl.StringVar(&f.llmConfig, "llm-config", "", "JSON `file` with a full LLM configuration (the OpenHands LLM object); the flags above override it")
	addRetryFlags(fl, &f.retry)
	fl.StringVar(&f.persistenceDir, "persistence-dir", "", "`directory` sessions are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	fl.StringVar(&mode, "mode", acpserver.ModeAsk, "mode of new sessions (the editor can change it): `always-ask`, ask-risky or always-approve")
	fl.StringSliceVar(&models, "models", nil, "other `models` the editor may switch a session to (its model option and /model), e.g. openai/gpt-5,anthropic/claude-sonnet-4-5")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log diagnostics to standard error")
	return cmd
}

func (a *app) serveACP(ctx context.Context, f *runFlags, mode string, models []string) error {
	st, _, err := a.loadSettings()
	if err != nil {
		return err
	}
	cfg, _, err := a.llmConfig(f, st, convInfo{})
	if err != nil {
		return err
	}
	if err := a.unsetenv(envAPIKey); err != nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("unsetting $%s: %v", envAPIKey, err)}
	}
	base, err := a.persistenceDir(f.persistenceDir)
	if err != nil {
		return err
	}
	logOut := io.Discard
	if f.verbose {
		logOut = a.stderr
	}
	logger := slog.New(slog.NewTextHandler(logOut, &slog.HandlerOptions{Level: slog.LevelDebug}))
	// A signal ends the sessions: their runs pause and are stored, and
	// the editor can resume them.
	ctx, stopSignals := a.stopOnSignal(ctx, "")
	defer stopSignals()
	err = acpserver.Serve(ctx, a.stdin, a.stdout, &acpserver.Options{
		NewAgent: func(mcp map[string]json.RawMessage) (conversation.Agent, error) {
			// Standard error is the editor's log of the agent: each retry
			// shows there, -v or not.
			model, err := llm.New(cfg, &llm.Options{Logger: logger, Retryable: worthRetrying, OnRetry: func(attempt int, wait time.Duration, err error) {
				printRetry(a.stderr, attempt, max(cfg.NumRetries, 1), wait, err)
			}})
			if err != nil {
				return nil, err
			}
			ag := preset.DefaultAgent(cfg, nil).WithOptions(&agent.Options{Model: model})
			for name, s := range mcp {
				if ag.MCPConfig == nil {
					ag.MCPConfig = map[string]json.RawMessage{}
				}
				ag.MCPConfig[name] = s
			}
			return ag, nil
		},
		PersistenceDir: base,
		Mode:           mode,
		Name:           "gohands",
		Logger:         logger,
		Model:          cfg.Model,
		Models:         models,
		SwitchModel: func(model string) (llm.Config, error) {
			c := cfg
			c.Model = model
			return c, nil
		},
	})
	if code, ok := stoppedStatus(ctx); ok {
		return &exitErr{code: code}
	}
	if err != nil {
		return &exitErr{code: exitError, msg: err.Error()}
	}
	return nil
}

// acpAgent is the agent of "run --acp": the command line split on
// spaces (quotes group words), run as an ACP server.
func acpAgent(command string) (*acpagent.Agent, error) {
	argv, err := splitWords(command)
	if err != nil || len(argv) == 0 {
		return nil, usageErr("--acp %q: want a command line, e.g. \"npx -y @zed-industries/claude-agent-acp\"", command)
	}
	return acpagent.New(argv...), nil
}

// splitWords splits s into words as a shell would for simple cases:
// spaces separate, single and double quotes group.
func splitWords(s string) ([]string, error) {
	var out []string
	var cur strings.Builder
	var quote rune
	in := false
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, in = r, true
		case r == ' ' || r == '\t' || r == '\n':
			if in {
				out = append(out, cur.String())
				cur.Reset()
				in = false
			}
		default:
			cur.WriteRune(r)
			in = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unclosed quote")
	}
	if in {
		out = append(out, cur.String())
	}
	return out, nil
}
