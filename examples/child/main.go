// Command child shows child conversations: an agent on an agent server
// hands a task to a conversation of its own (the start_child_conversation
// tool), which the server runs beside it with the parent's settings; the
// program then follows the child from the same client.
//
//	gohands serve &  # then:
//	LLM_MODEL=... LLM_API_KEY=... AGENT_SERVER=http://127.0.0.1:8000 go run ./examples/child
//
// SESSION_API_KEY is the server's session key, if it has one; WORKSPACE
// is the directory the agents work in (default: a new temporary one).
// The tool works on a server only: it asks the server it runs in to start
// the child (gohands serve tells it where with $OH_INTERNAL_SERVER_URL; a
// server.New in a program, from Options.InternalURL or its listener).
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"

	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/childconversation"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/workspace"
)

// config is what run needs; main reads it from the environment.
type config struct {
	LLM    llm.Config
	Server string // the agent server's URL
	Key    string // its session key
	Dir    string // where the agents work
	Out    io.Writer
}

func main() {
	cfg := config{
		LLM:    llm.DefaultConfig(os.Getenv("LLM_MODEL")),
		Server: os.Getenv("AGENT_SERVER"),
		Key:    os.Getenv("SESSION_API_KEY"),
		Dir:    os.Getenv("WORKSPACE"),
		Out:    os.Stdout,
	}
	if cfg.LLM.Model == "" || cfg.Server == "" {
		log.Fatal(errors.New("set LLM_MODEL, LLM_API_KEY and AGENT_SERVER"))
	}
	cfg.LLM.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
	cfg.LLM.BaseURL = os.Getenv("LLM_BASE_URL")
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "gohands-child-")
		if err != nil {
			log.Fatal(err)
		}
		cfg.Dir = dir
	}
	if err := run(context.Background(), cfg); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg config) error {
	agent := preset.DefaultAgent(cfg.LLM, &preset.Options{
		ExtraTools: []tool.Spec{{Name: childconversation.Name}},
	})
	ws := &workspace.Remote{Host: cfg.Server, APIKey: cfg.Key, WorkingDir: cfg.Dir}

	parent, err := remote.New(ctx, agent, ws, &remote.Options{OnEvent: visualizer.New(cfg.Out, nil).OnEvent})
	if err != nil {
		return err
	}
	defer parent.Close()
	task := "Start a child conversation that writes NOTES.md with three release checklist items; do not wait for it. Then finish."
	if err := parent.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := parent.Run(ctx); err != nil {
		return err
	}
	children, err := parent.Children(ctx)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nparent %s: %s, children %v\n", parent.ID(), parent.Status(), children)

	// Each child runs on the server on its own: attach to it and wait
	// for that run to end. (parent.StartChild starts one from the
	// program.)
	for _, id := range children {
		child, err := remote.Attach(ctx, ws, id, nil)
		if err != nil {
			return err
		}
		st, err := child.Wait(ctx)
		child.Close()
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.Out, "child %s: %s\n", id, st)
	}
	return nil
}
