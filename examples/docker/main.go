// Command docker is examples/local with the agent in a container: the same
// program, and the only line that differs is the workspace (plus closing
// it, which removes the container).
//
//	sudo scripts/image.sh   # once: the gohands image
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/docker
//
// WORKSPACE is the directory the agent works in (default: a new temporary
// one), mounted into the container at the same path.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"

	"github.com/gohands/gohands"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/workspace/docker"
)

// config is what run needs; main reads it from the environment.
type config struct {
	LLM    llm.Config
	Dir    string // where the agent works
	Out    io.Writer
	Docker docker.Options // the container (image, labels, limits)
}

func main() {
	cfg := config{
		LLM: llm.DefaultConfig(os.Getenv("LLM_MODEL")),
		Dir: os.Getenv("WORKSPACE"),
		Out: os.Stdout,
	}
	if cfg.LLM.Model == "" {
		log.Fatal(errors.New("set LLM_MODEL (e.g. anthropic/claude-sonnet-4-5) and LLM_API_KEY"))
	}
	cfg.LLM.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
	cfg.LLM.BaseURL = os.Getenv("LLM_BASE_URL")
	if cfg.Dir == "" {
		dir, err := os.MkdirTemp("", "gohands-docker-")
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
	agent := preset.DefaultAgent(cfg.LLM, nil)

	// The one line: a container instead of &workspace.Local{WorkingDir: cfg.Dir}.
	// It shares this machine's network, so a model server on 127.0.0.1 is reachable.
	ws, err := docker.New(ctx, &docker.Options{Image: cfg.Docker.Image, Labels: cfg.Docker.Labels, Volumes: []string{cfg.Dir + ":" + cfg.Dir}, WorkingDir: cfg.Dir, Network: "host"})
	if err != nil {
		return err
	}
	defer ws.Close()

	conv, err := gohands.NewConversation(ctx, agent, ws, &conversation.LocalOptions{
		OnEvent: visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	task := "Write a file hello.txt in " + cfg.Dir + " saying hello to the world, then finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	// The file is in the workspace, wherever that is.
	res, err := ws.Execute(ctx, "cat "+filepath.Join(cfg.Dir, "hello.txt"), nil)
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nhello.txt: %s\nstatus: %s\n", res.Stdout, conv.State().Fields().ExecutionStatus)
	return nil
}
