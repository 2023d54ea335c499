// Command skills shows the two shared sources of skills: a marketplace
// the user registers (a directory, git URL or "github:owner/repo" with
// .plugin/marketplace.json) and the public skills of
// github.com/OpenHands/extensions. It lists what each gives, then runs an
// agent whose context loads both.
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/skills [-marketplace DIR]
//
// Public skills are fetched with git into the user's cache (at most once
// a minute); EXTENSIONS_PATH names a local copy instead, EXTENSIONS_REPO
// and EXTENSIONS_REF another repository or version.
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
	"strings"

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
	Marketplace string // the registered marketplace's directory or URL
	Out         io.Writer
}

func main() {
	_, file, _, _ := runtime.Caller(0)
	market := flag.String("marketplace", filepath.Join(filepath.Dir(file), "company"), "the marketplace: a directory, git URL or github:owner/repo")
	flag.Parse()
	cfg := llm.DefaultConfig(os.Getenv("LLM_MODEL"))
	if cfg.Model == "" {
		log.Fatal(errors.New("set LLM_MODEL (e.g. anthropic/claude-sonnet-4-5) and LLM_API_KEY"))
	}
	cfg.APIKey = secret.New(os.Getenv("LLM_API_KEY"))
	cfg.BaseURL = os.Getenv("LLM_BASE_URL")
	if err := run(context.Background(), config{LLM: cfg, Marketplace: *market, Out: os.Stdout}); err != nil {
		log.Fatal(err)
	}
}

func run(ctx context.Context, cfg config) error {
	// auto_load true loads every skill and plugin the marketplace lists; a
	// list of names loads those only.
	reg := plugin.Registration{Name: "company", Source: cfg.Marketplace, AutoLoad: json.RawMessage(`true`)}

	// What the agent will get, listed through the same loaders it uses at
	// its start. What cannot be loaded is reported and left out.
	set, warns := plugin.LoadRegistered(ctx, []plugin.Registration{reg}, nil)
	for _, w := range warns {
		fmt.Fprintf(cfg.Out, "warning: %v\n", w.Err)
	}
	fmt.Fprintf(cfg.Out, "marketplace %s: %s\n", reg.Name, names(set.Skills))
	public, err := plugin.LoadPublicSkills(ctx, "", nil) // "": the default marketplace's list
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "public skills: %d (%s)\n", len(public), names(public))

	// The agent's context asks for both; it is kept as the reference's
	// JSON, so we marshal ours.
	r, err := json.Marshal(reg)
	if err != nil {
		return err
	}
	ac, err := json.Marshal(skill.AgentContext{
		LoadPublicSkills:       true,
		RegisteredMarketplaces: []json.RawMessage{r},
	})
	if err != nil {
		return err
	}
	agent := preset.DefaultAgent(cfg.LLM, nil)
	agent.AgentContext = ac

	dir, err := os.MkdirTemp("", "gohands-skills-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conv, err := conversation.New(ctx, agent, dir, &conversation.LocalOptions{
		OnEvent: visualizer.New(cfg.Out, nil).OnEvent,
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	// "changelog" triggers the marketplace's skill of that name: its text
	// comes with this message. Skills without triggers are listed in the
	// system prompt, for the agent to read when it needs them.
	task := "Add a changelog entry for the new --json flag of the cli package, then finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "\nstatus: %s\n", conv.Status())
	return nil
}

// names lists the skills' names, at most eight.
func names(skills []skill.Skill) string {
	var s []string
	for i, sk := range skills {
		if i == 8 {
			s = append(s, "...")
			break
		}
		s = append(s, sk.Name)
	}
	return strings.Join(s, ", ")
}
