// Command secrets gives a conversation secrets: a static value, and a
// late-bound one whose value a Go function supplies when it is needed (a
// rotating token, a keychain entry), added while the conversation runs.
// The model is told the secrets' names, never their values. A terminal
// command that names a secret ($DB_PASSWORD) gets it as an environment
// variable; wherever a value shows up in tool output it is replaced by
// <secret-hidden> before the model, the callbacks or the disk see it; and
// base_state.json keeps the secrets redacted (or encrypted, with a cipher).
//
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/secrets
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"strings"

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
	PersistenceDir string
	Out            io.Writer
}

func main() {
	cfg, err := llmFromEnv()
	if err != nil {
		log.Fatal(err)
	}
	tmp, err := os.MkdirTemp("", "gohands-secrets-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	err = run(context.Background(), config{
		LLM: cfg, Workspace: filepath.Join(tmp, "work"), PersistenceDir: filepath.Join(tmp, "conversations"), Out: os.Stdout,
	})
	if err != nil {
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

// The example's secret values.
const (
	apiToken   = "tok-live-5f4e3d2c1b0a"
	dbPassword = "correct-horse-battery-staple"
)

func run(ctx context.Context, cfg config) error {
	// A configuration file holding the secrets, which the agent will read.
	if err := os.MkdirAll(cfg.Workspace, 0o755); err != nil {
		return err
	}
	env := "API_TOKEN=" + apiToken + "\nDB_PASSWORD=" + dbPassword + "\n"
	if err := os.WriteFile(filepath.Join(cfg.Workspace, "service.env"), []byte(env), 0o600); err != nil {
		return err
	}

	conv, err := conversation.New(ctx, preset.DefaultAgent(cfg.LLM, nil), cfg.Workspace, &conversation.LocalOptions{
		Backend: filestore.NewBackend(cfg.PersistenceDir, nil),
		Secrets: map[string]secret.Source{
			"API_TOKEN": &secret.StaticSecret{Value: secret.New(apiToken), Description: "the service's API token"},
		},
		OnEvent: func(e event.Event) {
			if o, ok := e.(*event.ObservationEvent); ok {
				fmt.Fprintf(cfg.Out, "%s output, as everyone but the command sees it:\n%s\n", o.ToolName,
					event.TextOf(event.ObservationContent(o.Observation)))
			}
		},
	})
	if err != nil {
		return err
	}
	defer conv.Close()
	// A late-bound secret, added to the running conversation: the
	// function is called when the value is needed.
	err = conv.UpdateSecrets(ctx, map[string]secret.Source{
		"DB_PASSWORD": &secret.Callback{Description: "the database password", Func: func(context.Context) (string, error) {
			return dbPassword, nil
		}},
	})
	if err != nil {
		return err
	}

	task := "Check the length of the database password with printf '%s' \"$DB_PASSWORD\" | wc -c, show me service.env with cat, then finish."
	if err := conv.SendMessage(ctx, event.UserMessage(task)); err != nil {
		return err
	}
	if err := conv.Run(ctx); err != nil {
		return err
	}
	conv.State().Flush()

	// Nothing stored holds a value.
	leaks := 0
	err = filepath.WalkDir(cfg.PersistenceDir, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if strings.Contains(string(b), apiToken) || strings.Contains(string(b), dbPassword) {
			fmt.Fprintf(cfg.Out, "LEAK: %s\n", path)
			leaks++
		}
		return nil
	})
	if err != nil {
		return err
	}
	fmt.Fprintf(cfg.Out, "stored files holding a secret value: %d\n", leaks)
	return nil
}
