// Command customtool gives the agent a tool written in Go: count_lines,
// which counts the lines of the files matching a pattern. A tool is an
// action struct (its fields and their json, desc and optional tags become
// the JSON schema the model sees; Go doc comments do not), an observation,
// and a function from one to the other.
//
//	LLM_MODEL=openai/gpt-5.5 LLM_API_KEY=... go run ./examples/customtool
package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/preset"
)

// CountLines is the tool's action: the arguments the model sends.
type CountLines struct {
	Pattern string `json:"pattern" desc:"A glob pattern relative to the workspace, e.g. *.go or src/*.py."`
}

// LineCounts is the tool's observation: what the model reads back.
type LineCounts struct {
	event.ObservationBase
	Total int `json:"total"`
}

func init() {
	// Actions and observations are persisted with a kind name, so a
	// stored conversation can be read back.
	event.RegisterKind[CountLines]("CountLinesAction")
	event.RegisterKind[LineCounts]("LineCountsObservation")
}

// countLinesTool returns the tool, working in dir.
func countLinesTool(dir string) tool.Tool {
	return tool.New("count_lines", "Count the lines of the workspace files matching a glob pattern.",
		func(ctx context.Context, a *CountLines) (*LineCounts, error) {
			names, err := filepath.Glob(filepath.Join(dir, a.Pattern))
			if err != nil {
				return nil, fmt.Errorf("pattern %q: %w", a.Pattern, err)
			}
			var b strings.Builder
			total := 0
			for _, n := range names {
				data, err := os.ReadFile(n)
				if err != nil {
					continue // directories and unreadable files
				}
				lines := bytes.Count(data, []byte("\n"))
				total += lines
				fmt.Fprintf(&b, "%6d %s\n", lines, filepath.Base(n))
			}
			fmt.Fprintf(&b, "%6d total (%d files)", total, len(names))
			return &LineCounts{ObservationBase: event.ObservationBase{Content: []event.Content{event.Text(b.String())}}, Total: total}, nil
		},
		&tool.Options{Annotations: &event.ToolAnnotations{Title: "count lines", ReadOnlyHint: true}})
}

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

func run(ctx context.Context, cfg config) error {
	// Extra tools are Go values: they are offered to the model next to
	// the registered ones but not persisted with the agent's spec.
	a := preset.DefaultAgent(cfg.LLM, nil).WithOptions(&agent.Options{ExtraTools: []tool.Tool{countLinesTool(cfg.Workspace)}})
	conv, err := conversation.New(ctx, a, cfg.Workspace, &conversation.LocalOptions{
		OnEvent: visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	if err := conv.SendMessage(ctx, event.UserMessage("How many lines of Go are in this directory? Use count_lines.")); err != nil {
		return err
	}
	return conv.Run(ctx)
}
