// Command mcp shows MCP servers as agent tools: it starts the reference
// "everything" MCP server over stdio, lists its tools, calls echo, and,
// when LLM_MODEL is set, asks an agent to use one of the tools.
//
//	go run ./examples/mcp [-config mcp.json]
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/mcp
//
// Without -config it runs the server installed by scripts/deps.sh
// (mcp/testdata/npm). A config file has the usual format:
//
//	{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}
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

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
	_ "github.com/gohands/gohands/llm/providers"
	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/secret"
)

// config is what run needs; main reads it from flags and the environment.
type config struct {
	MCP mcp.Config
	LLM *llm.Config // nil: no agent run
	Out io.Writer
}

func main() {
	path := flag.String("config", "", "MCP configuration file (default: the pinned server-everything over stdio)")
	flag.Parse()
	cfg := config{Out: os.Stdout}
	var err error
	if *path != "" {
		cfg.MCP, err = mcp.LoadConfigFile(*path)
	} else {
		cfg.MCP, err = defaultConfig()
	}
	if err != nil {
		log.Fatal(err)
	}
	if model := os.Getenv("LLM_MODEL"); model != "" {
		c := llm.DefaultConfig(model)
		c.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
		c.BaseURL = os.Getenv("LLM_BASE_URL")
		cfg.LLM = &c
	}
	if err := run(context.Background(), cfg); err != nil {
		log.Fatal(err)
	}
}

// defaultConfig runs server-everything from the repository's npm
// directory.
func defaultConfig() (mcp.Config, error) {
	_, file, _, _ := runtime.Caller(0)
	script := filepath.Join(filepath.Dir(file), "..", "..", "mcp", "testdata", "npm",
		"node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		return nil, fmt.Errorf("server-everything is not installed (run scripts/deps.sh) or pass -config: %w", err)
	}
	return mcp.Config{"everything": {Command: "node", Args: []string{script, "stdio"}}}, nil
}

func run(ctx context.Context, cfg config) error {
	var a *agent.Agent
	var reserved []string
	if cfg.LLM != nil {
		a = agent.New(*cfg.LLM, nil, nil)
		reserved = a.ToolNames() // MCP tools may not take the built-ins' names
	}
	set, err := mcp.Connect(ctx, cfg.MCP, &mcp.Options{Reserved: reserved})
	if err != nil {
		// The set still holds the servers that did start.
		fmt.Fprintf(cfg.Out, "some servers failed: %v\n", err)
	}
	defer set.Close() // stops the servers and their processes
	tools := set.Tools()
	if len(tools) == 0 {
		return errors.New("no MCP tools")
	}
	fmt.Fprintf(cfg.Out, "%d tools from %v:\n", len(tools), set.Servers())
	for _, t := range tools {
		fmt.Fprintf(cfg.Out, "  %-32s %s\n", t.Name(), firstLine(t.Description()))
	}

	// Call a tool directly, as the agent would.
	for _, t := range tools {
		if t.Name() != "echo" {
			continue
		}
		args, _ := json.Marshal(map[string]string{"message": "hello from gohands"})
		action, err := t.ParseAction(args)
		if err != nil {
			return err
		}
		obs, err := t.Execute(ctx, action)
		if err != nil {
			return err
		}
		fmt.Fprintf(cfg.Out, "echo -> %s\n", event.TextOf(event.ObservationContent(obs)))
	}

	if a == nil {
		fmt.Fprintln(cfg.Out, "(set LLM_MODEL and LLM_API_KEY to let an agent use these tools)")
		return nil
	}
	a = a.WithOptions(&agent.Options{ExtraTools: tools})
	dir, err := os.MkdirTemp("", "gohands-mcp-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conv, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{OnEvent: visualizer.New(cfg.Out, nil).OnEvent})
	if err != nil {
		return err
	}
	defer conv.Close()
	task := "Use the get-sum tool to add 19 and 23, tell me the result, then finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	return conv.Run(ctx)
}

func firstLine(s string) string {
	for i, r := range s {
		if r == '\n' {
			return s[:i]
		}
	}
	return s
}
