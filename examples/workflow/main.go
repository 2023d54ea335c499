// Command workflow shows the workflow tool: the agent writes a short
// Python script that fans work out to sub-agents (one per file here) and
// reduces their answers, and gets what the script returns as the tool's
// result.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/workflow [-workspace DIR]
//
// Scripts run in python3, which must be on PATH. Each sub-agent is a
// stored sub-conversation with the caller's model, budget and policy;
// the same workflow run again after a crash takes up the sub-agents that
// finished instead of running them again.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/tools/workflow"
)

// config is what run needs; main reads it from flags and the environment,
// tests build it around a scripted model server.
type config struct {
	LLM       llm.Config
	Workspace string // "" means a temporary directory
	Out       io.Writer
}

func main() {
	workspace := flag.String("workspace", "", "directory the agent works in (default: a temporary directory)")
	flag.Parse()
	cfg := llm.DefaultConfig(os.Getenv("LLM_MODEL"))
	if cfg.Model == "" {
		log.Fatal(errors.New("set LLM_MODEL (e.g. anthropic/claude-sonnet-4-5) and LLM_API_KEY"))
	}
	cfg.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
	cfg.BaseURL = os.Getenv("LLM_BASE_URL")
	if err := run(context.Background(), config{LLM: cfg, Workspace: *workspace, Out: os.Stdout}); err != nil {
		log.Fatal(err)
	}
}

// docs are the files the sub-agents summarise.
var docs = map[string]string{
	"docs/auth.md":    "Sessions are signed cookies valid for 12 hours; API clients use bearer keys.",
	"docs/storage.md": "Events are appended to one JSON file each; the base state is rewritten atomically.",
	"docs/deploy.md":  "Deploys go through CI on every tag; rollbacks redeploy the previous tag.",
}

func run(ctx context.Context, cfg config) error {
	dir := cfg.Workspace
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gohands-workflow-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	for name, text := range docs {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(path, []byte(text+"\n"), 0o644); err != nil {
			return err
		}
	}

	// The workflow tool set is a tool spec like any other; the tools
	// package registers it.
	agent := preset.DefaultAgent(cfg.LLM, &preset.Options{
		ExtraTools: []tool.Spec{{Name: workflow.ToolSetName}},
	})
	conv, err := conversation.New(ctx, agent, dir, &conversation.LocalOptions{
		OnEvent: visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	task := "Use a workflow: one sub-agent per file in docs/ summarises it in one line, " +
		"then one sub-agent writes a one-paragraph overview from the summaries. Report the overview and finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nstatus: %s\n", conv.Status())
	return nil
}
