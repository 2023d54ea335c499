// Command resume shows persistence: a conversation is stored on disk as it
// happens (base_state.json and one file per event, the OpenHands layout),
// closed, and continued later by another Conversation value with the same
// id, as a new process would.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/resume [-dir DIR]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/preset"
)

type config struct {
	LLM            llm.Config
	Workspace      string
	PersistenceDir string // "" means a temporary directory
	Out            io.Writer
}

func main() {
	dir := flag.String("dir", "", "persistence directory (default: a temporary directory)")
	flag.Parse()
	cfg, err := llmFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		log.Fatal(err)
	}
	if err := run(context.Background(), config{LLM: cfg, Workspace: wd, PersistenceDir: *dir, Out: os.Stdout}); err != nil {
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

// say sends one message to a conversation and runs it.
func say(ctx context.Context, conv conversation.Conversation, text string) error {
	if err := conv.SendMessage(ctx, event.UserMessage(text)); err != nil {
		return err
	}
	return conv.Run(ctx)
}

func run(ctx context.Context, cfg config) error {
	base := cfg.PersistenceDir
	if base == "" {
		tmp, err := os.MkdirTemp("", "gohands-resume-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(tmp)
		base = tmp
	}
	opts := &conversation.LocalOptions{Backend: filestore.NewBackend(base, nil)}

	// First session: a new conversation, stored under base.
	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg.LLM, nil), cfg.Workspace, opts)
	if err != nil {
		return err
	}
	id := conv.ID()
	if err := say(ctx, conv, "Remember the number 42. Reply briefly."); err != nil {
		conv.Close()
		return err
	}
	n := conv.State().Events().Len()
	if err := conv.Close(); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "first session: conversation %s, %d events, stored in %s\n", id, n, filestore.Dir(base, id))

	// Later: the same id finds the stored conversation and continues it,
	// with everything the model saw before.
	opts.ID = id
	conv, err = conversation.New(ctx, preset.DefaultAgent(cfg.LLM, nil), cfg.Workspace, opts)
	if err != nil {
		return err
	}
	defer conv.Close()
	fmt.Fprintf(cfg.Out, "resumed: %d events, status %s\n", conv.State().Events().Len(), conv.Status())
	if err := say(ctx, conv, "Which number did I ask you to remember?"); err != nil {
		return err
	}
	store := conv.State().Events()
	last, err := store.Event(ctx, store.Len()-1)
	if err != nil {
		return err
	}
	if m, ok := last.(*event.MessageEvent); ok {
		fmt.Fprintf(cfg.Out, "agent: %s\n", event.TextOf(m.LLMMessage.Content))
	}
	fmt.Fprintf(cfg.Out, "second session: %d events, status %s\n", store.Len(), conv.Status())
	return nil
}
