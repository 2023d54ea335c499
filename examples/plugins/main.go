// Command plugins shows plugins: bundles of skills, hooks and MCP servers
// that extend an agent. One plugin is given to the conversation when it
// starts; another is loaded from a registered marketplace while the
// conversation lives, between two turns.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/plugins [-marketplace DIR]
//
// The marketplace (default: ./team next to this file) is a directory with
// .plugin/marketplace.json listing its plugins; a git URL or
// "github:owner/repo" works as well, fetched into the user's plugin cache.
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
	"runtime"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tools/preset"
)

// config is what run needs; main reads it from flags and the environment,
// tests build it around a scripted model server.
type config struct {
	LLM         llm.Config
	Marketplace string // the marketplace's directory or URL
	Workspace   string // "" means a temporary directory
	Out         io.Writer
}

func main() {
	_, file, _, _ := runtime.Caller(0)
	market := flag.String("marketplace", filepath.Join(filepath.Dir(file), "team"), "the marketplace: a directory, git URL or github:owner/repo")
	workspace := flag.String("workspace", "", "directory the agent works in (default: a temporary directory)")
	flag.Parse()
	cfg := llm.DefaultConfig(os.Getenv("LLM_MODEL"))
	if cfg.Model == "" {
		log.Fatal(errors.New("set LLM_MODEL (e.g. anthropic/claude-sonnet-4-5) and LLM_API_KEY"))
	}
	cfg.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
	cfg.BaseURL = os.Getenv("LLM_BASE_URL")
	if err := run(context.Background(), config{LLM: cfg, Marketplace: *market, Workspace: *workspace, Out: os.Stdout}); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg config) error {
	dir := cfg.Workspace
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gohands-plugins-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}

	// LoadPlugin finds plugins in the marketplaces the agent's context
	// registers. auto_load is left unset: nothing is loaded until asked.
	ac, err := json.Marshal(skill.AgentContext{
		LoadProjectSkills: true,
		RegisteredMarketplaces: []json.RawMessage{
			json.RawMessage(fmt.Sprintf(`{"name": "team", "source": %q}`, cfg.Marketplace)),
		},
	})
	if err != nil {
		return err
	}
	agent := preset.DefaultAgent(cfg.LLM, nil)
	agent.AgentContext = ac

	// A plugin named by its source is loaded when the conversation
	// starts: New fails if it cannot be, before anything is stored.
	conv, err := conversation.New(ctx, agent, dir, &conversation.LocalOptions{
		Plugins: []plugin.Source{{Source: filepath.Join(cfg.Marketplace, "greeter")}},
		OnEvent: visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	if err := turn(ctx, conv, "hello!"); err != nil {
		return err
	}

	// A plugin of a registered marketplace, by name@marketplace, added to
	// the running conversation: its skills, hooks and MCP servers apply
	// from the next step on.
	if err := conv.LoadPlugin(ctx, "release@team"); err != nil {
		return err
	}
	if err := turn(ctx, conv, "How do we release this project?"); err != nil {
		return err
	}
	_, err = os.Stat(filepath.Join(dir, "release-hook.log"))
	fmt.Fprintf(cfg.Out, "\nthe release plugin's hook ran: %v\nstatus: %s\n", err == nil, conv.Status())
	return nil
}

// turn sends a message and runs the agent until it finishes.
func turn(ctx context.Context, conv conversation.Conversation, text string) error {
	if err := conv.SendMessage(ctx, event.UserMessage(text)); err != nil {
		return err
	}
	return conv.Run(ctx)
}
