// Command callbacks watches a conversation through event callbacks: one
// given when the conversation is made (it sees every event, the system
// prompt included) and one subscribed for a while and removed. Callbacks
// run as events are committed, in order, on the agent's goroutine, so
// they must be quick.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/callbacks
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"maps"
	"os"
	"slices"
	"sync"

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
	wd, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), config{LLM: cfg, Workspace: wd, Out: os.Stdout}); err != nil {
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

// tally counts events by kind; it is safe for concurrent use.
type tally struct {
	mu     sync.Mutex
	counts map[string]int
}

func (t *tally) add(e event.Event) {
	kind, _ := event.KindOf(e)
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.counts == nil {
		t.counts = map[string]int{}
	}
	t.counts[kind]++
}

func (t *tally) print(w io.Writer) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, k := range slices.Sorted(maps.Keys(t.counts)) {
		fmt.Fprintf(w, "  %-22s %d\n", k, t.counts[k])
	}
}

func run(ctx context.Context, cfg config) error {
	var all tally
	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg.LLM, nil), cfg.Workspace, &conversation.LocalOptions{
		OnEvent: all.add,
	})
	if err != nil {
		return err
	}
	defer conv.Close()

	// A second callback, for the first task only: print each tool call
	// as it is made.
	stop := conv.Subscribe(func(e event.Event) {
		if a, ok := e.(*event.ActionEvent); ok {
			fmt.Fprintf(cfg.Out, "tool call: %s %s\n", a.ToolName, a.ToolCall.Arguments)
		}
	})
	for i, task := range []string{
		"List the files here with the terminal, then finish.",
		"Now say goodbye.",
	} {
		if i == 1 {
			stop()
		}
		if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
			return err
		}
		if err := conv.Run(ctx); err != nil {
			return err
		}
	}
	fmt.Fprintln(cfg.Out, "events by kind:")
	all.print(cfg.Out)
	return nil
}
