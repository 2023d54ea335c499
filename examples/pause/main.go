// Command pause pauses a running agent from another goroutine and resumes
// it. Pause interrupts the tool that is running (here a long command)
// through its context, records a PauseEvent and leaves the conversation
// paused; the next Run continues from there, and the model is told that
// its command was interrupted.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/pause
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"time"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/preset"
)

type config struct {
	LLM       llm.Config
	Workspace string
	Out       io.Writer
}

func main() {
	cfg, err := llmFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	dir, err := os.MkdirTemp("", "gohands-pause-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(dir)
	if err := run(context.Background(), config{LLM: cfg, Workspace: dir, Out: os.Stdout}); err != nil {
		log.Fatal(err)
	}
}

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
	// The first terminal action tells us the long command has started.
	started := make(chan struct{}, 1)
	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg.LLM, nil), cfg.Workspace, &conversation.LocalOptions{
		OnEvent: func(e event.Event) {
			if a, ok := e.(*event.ActionEvent); ok && a.ToolName == "terminal" {
				select {
				case started <- struct{}{}:
				default:
				}
			}
		},
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	task := "Run `sleep 60 && touch slept` in the terminal (timeout 120), then finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}

	runErr := make(chan error, 1)
	go func() { runErr <- conv.Run(ctx) }()
	select {
	case <-started:
	case err := <-runErr:
		return fmt.Errorf("the run ended before the command started: %v", err)
	}
	time.Sleep(500 * time.Millisecond) // let the command get going
	t0 := time.Now()
	if err := conv.Pause(ctx); err != nil {
		return err
	}
	if err := <-runErr; err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "paused after %s: status %s\n", time.Since(t0).Round(100*time.Millisecond), conv.Status())

	// Run again: the agent continues from where it was paused.
	if err := conv.SendMessage(ctx, event.UserMessage("Never mind the wait; finish now.")); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "resumed: status %s\n", conv.Status())
	return nil
}
