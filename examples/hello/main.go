// Command hello is gohands' hello world: the default agent (terminal, file
// editor, task tracker) writes a file in a workspace and finishes.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/hello [-workspace DIR]
//
// LLM_BASE_URL points it at an OpenAI-compatible server. Without
// -workspace it works in a temporary directory.
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
	"github.com/gohands/gohands/tools/preset"
)

// config is what run needs; main reads it from flags and the environment,
// tests build it around a scripted model server.
type config struct {
	LLM       llm.Config
	Workspace string    // "" means a temporary directory
	Out       io.Writer // the transcript
}

func main() {
	workspace := flag.String("workspace", "", "directory the agent works in (default: a temporary directory)")
	flag.Parse()
	cfg, err := llmFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), config{LLM: cfg, Workspace: *workspace, Out: os.Stdout}); err != nil {
		log.Fatal(err)
	}
}

// llmFromEnv reads the model configuration from LLM_MODEL, LLM_API_KEY and
// LLM_BASE_URL.
func llmFromEnv() (llm.Config, error) {
	cfg := llm.DefaultConfig(os.Getenv("LLM_MODEL"))
	if cfg.Model == "" {
		return cfg, errors.New("set LLM_MODEL (e.g. anthropic/claude-sonnet-4-5) and LLM_API_KEY")
	}
	cfg.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
	cfg.BaseURL = os.Getenv("LLM_BASE_URL")
	return cfg, nil
}

func run(ctx context.Context, cfg config) error {
	dir := cfg.Workspace
	if dir == "" {
		tmp, err := os.MkdirTemp("", "gohands-hello-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		dir = tmp
	}

	// The default agent, and a conversation with it in dir, shown as a
	// transcript as events happen.
	agent := preset.DefaultAgent(cfg.LLM, nil)
	conv, err := conversation.New(ctx, agent, dir, &conversation.LocalOptions{
		OnEvent: visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()

	task := "Write a file hello.txt in " + dir + " saying hello to the world, then finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	b, err := os.ReadFile(filepath.Join(dir, "hello.txt"))
	if err != nil {
		return fmt.Errorf("the agent did not write hello.txt: %w", err)
	}
	fmt.Fprintf(cfg.Out, "\nhello.txt: %s\nstatus: %s\n", b, conv.Status())
	return nil
}
