// Command memory shows an agent's memory: one conversation writes a fact
// to the project's MEMORY.md, and the next starts with it in its system
// prompt, because its agent context says load_memory.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/memory [-workspace DIR]
//
// Memory is two files: the project's .openhands/memory/MEMORY.md in the
// workspace and the user's ~/.openhands/memory/MEMORY.md. The agent keeps
// them with its file editor; gohands only reads them at a start.
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
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tools/preset"
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

func run(ctx context.Context, cfg config) error {
	dir := cfg.Workspace
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gohands-memory-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}

	// The default agent loads the workspace's and the user's skills;
	// load_memory adds the memory files to its system prompt. The agent
	// context is kept as the reference's JSON, so we marshal ours.
	ac, err := json.Marshal(skill.AgentContext{LoadProjectSkills: true, LoadUserSkills: true, LoadMemory: true})
	if err != nil {
		return err
	}
	agent := preset.DefaultAgent(cfg.LLM, nil)
	agent.AgentContext = ac

	// Memory is read when a conversation starts, so a fact written in one
	// conversation is known from the next one on.
	for _, task := range []string{
		"Remember in the project's memory that releases are tagged vMAJOR.MINOR.PATCH, then finish.",
		"How are releases tagged here? Answer and finish.",
	} {
		fmt.Fprintf(cfg.Out, "\n== %s\n", task)
		if err := converse(ctx, agent, dir, task, cfg.Out); err != nil {
			return err
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, ".openhands", "memory", "MEMORY.md"))
	if err != nil {
		return fmt.Errorf("the agent kept no memory: %w", err)
	}
	fmt.Fprintf(cfg.Out, "\nMEMORY.md:\n%s\n", b)
	return nil
}

// converse runs one conversation with agent in dir to its end.
func converse(ctx context.Context, agent conversation.Agent, dir, task string, out io.Writer) error {
	conv, err := conversation.New(ctx, agent, dir, &conversation.LocalOptions{
		OnEvent: visualizer.New(out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	return conv.Run(ctx)
}
