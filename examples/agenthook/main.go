// Command agenthook shows a hook of type agent: before each terminal
// command, a small sub-agent with its own instructions reads the call and
// answers allow or deny. A denied command does not run, and the model is
// told why.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/agenthook [-workspace DIR]
//
// The same configuration in a workspace's .openhands/hooks.json applies
// to every conversation there; here it is the conversation's own.
package main

import (
	"context"
	"encoding/json"
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
	"github.com/gohands/gohands/tools/preset"
)

// hooks guards the terminal with an agent hook. The hook's sub-agent has
// finish as its only tool and the event (tool name, arguments) as its
// task; a finish message {"decision":"deny","reason":...} blocks the
// call. max_iterations keeps the review cheap.
const hooks = `{"PreToolUse": [{"matcher": "terminal", "hooks": [{
	"type": "agent", "name": "guard", "max_iterations": 3,
	"system_prompt": "You review shell commands before they run. Deny any command that deletes files, with the reason; allow the rest. Answer with finish and {\"decision\": \"allow\"|\"deny\", \"reason\": \"...\"}."
}]}]}`

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

func run(ctx context.Context, cfg config) error {
	dir := cfg.Workspace
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gohands-agenthook-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}
	keep := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(keep, []byte("keep me\n"), 0o644); err != nil {
		return err
	}

	// The hook's sub-agent uses the conversation's model; its costs are
	// the conversation's, under "agent-hook:guard".
	agent := preset.DefaultAgent(cfg.LLM, nil)
	conv, err := conversation.New(ctx, agent, dir, &conversation.LocalOptions{
		HookConfig: json.RawMessage(hooks),
		OnEvent:    visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	task := "Delete notes.txt, then list the workspace and finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	_, err = os.Stat(keep)
	fmt.Fprintf(cfg.Out, "\nnotes.txt kept: %v\nstatus: %s\n", err == nil, conv.Status())
	return nil
}
