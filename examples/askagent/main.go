// Command askagent asks the agent a side question while it works. The
// answer comes from the conversation's history as the model sees it, and
// the question leaves no trace: nothing is appended or persisted, and the
// run in progress goes on undisturbed.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/askagent
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

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
	dir, err := os.MkdirTemp("", "gohands-ask-")
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
	// Ask while the agent runs its first terminal command.
	acted := make(chan struct{}, 1)
	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg.LLM, nil), cfg.Workspace, &conversation.LocalOptions{
		OnEvent: func(e event.Event) {
			if a, ok := e.(*event.ActionEvent); ok && a.ToolName == "terminal" {
				select {
				case acted <- struct{}{}:
				default:
				}
			}
		},
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	task := "Create notes.md with a three-item checklist for releasing a Go module, then run `sleep 2` and finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	runErr := make(chan error, 1)
	go func() { runErr <- conv.Run(ctx) }()

	select {
	case <-acted:
	case err := <-runErr:
		return fmt.Errorf("the run ended before the agent acted: %v", err)
	}
	before := conv.State().Events().Len()
	answer, err := conv.AskAgent(ctx, "In one sentence: what are you doing right now?")
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "asked mid-run: %s\n", answer)
	if err := <-runErr; err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "the question added no events (%d before it, %d at the end, all from the run)\n", before, conv.State().Events().Len())
	fmt.Fprintf(cfg.Out, "status: %s\n", conv.Status())
	return nil
}
