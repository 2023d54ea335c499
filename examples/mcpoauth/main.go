// Command mcpoauth connects to an MCP server behind OAuth 2: the first
// time, it registers itself with the server's authorization server, shows
// you the page to sign in and consent, and takes the code back on a
// loopback address; it keeps the tokens in a file, so later runs connect
// (refreshing the token when it expires) without asking again.
//
//	go run ./examples/mcpoauth -url https://mcp.example.com/mcp [-tokens FILE]
//	LLM_MODEL=anthropic/claude-sonnet-4-5 LLM_API_KEY=... go run ./examples/mcpoauth -url ...
//
// The tokens file is the server's entry of an MCP configuration
// ({"url": ..., "auth": {...}}), tokens in clear: keep it private.
// `gohands mcp add --oauth` and `gohands mcp login` do the same for the
// servers of gohands' settings.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"log"
	"net"
	"net/http"
	"net/url"
	"os"

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
	URL    string         // the MCP server
	Tokens string         // the file keeping the server's entry and tokens
	Open   func(u string) // shows the user the authorization page
	LLM    *llm.Config    // nil: no agent run
	Out    io.Writer
}

func main() {
	u := flag.String("url", "", "the MCP server's URL (streamable HTTP)")
	tokens := flag.String("tokens", "mcp-oauth.json", "file keeping the tokens between runs")
	flag.Parse()
	if *u == "" {
		log.Fatal(errors.New("-url is required"))
	}
	cfg := config{URL: *u, Tokens: *tokens, Out: os.Stdout, Open: func(u string) {
		fmt.Printf("Open this page to sign in:\n  %s\n", u)
	}}
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

func run(ctx context.Context, cfg config) error {
	// The server's entry: the stored one, with its tokens, or a new one
	// that has none yet.
	server := mcp.Server{URL: cfg.URL, Auth: &mcp.Auth{Strategy: mcp.AuthOAuth2, OAuth: &mcp.OAuthSettings{Type: "oauth"}}}
	b, err := os.ReadFile(cfg.Tokens)
	switch {
	case err == nil:
		if err := json.Unmarshal(b, &server); err != nil {
			return fmt.Errorf("%s: %w", cfg.Tokens, err)
		}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}

	// The authorization server sends the browser back to a loopback
	// address we listen on, with the code (RFC 8252).
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	defer ln.Close()
	callback := make(chan url.Values, 1)
	go http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case callback <- r.URL.Query():
			fmt.Fprintln(w, "Signed in: you can close this page.")
		default:
			http.Error(w, "already signed in", http.StatusConflict)
		}
	}))
	oauth := &mcp.OAuthOptions{
		RedirectURL: "http://" + ln.Addr().String() + "/callback",
		// Authorize runs only when there are no usable tokens.
		Authorize: func(ctx context.Context, authURL string) (url.Values, error) {
			cfg.Open(authURL)
			select {
			case q := <-callback:
				return q, nil
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		},
		// Save is called with new and refreshed tokens. The entry is
		// written back with its secrets in clear (Expose): a file of
		// ours, not a log.
		Save: func(_ string, st *mcp.OAuthState) error {
			entry, err := json.Marshal(mcp.Server{URL: server.URL, Auth: &mcp.Auth{Strategy: mcp.AuthOAuth2, OAuth: server.Auth.OAuth}})
			if err != nil {
				return err
			}
			b, err := mcp.WithOAuthState(entry, st, func(v secret.String) (secret.String, error) { return v.Expose(), nil })
			if err != nil {
				return err
			}
			return os.WriteFile(cfg.Tokens, b, 0o600)
		},
	}

	var a *agent.Agent
	var reserved []string
	if cfg.LLM != nil {
		a = agent.New(*cfg.LLM, nil, nil)
		reserved = a.ToolNames()
	}
	set, err := mcp.Connect(ctx, mcp.Config{"secure": server}, &mcp.Options{OAuth: oauth, Reserved: reserved})
	if err != nil {
		set.Close() // the servers that did connect
		return err
	}
	defer set.Close()
	for _, t := range set.Tools() {
		fmt.Fprintf(cfg.Out, "tool %s\n", t.Name())
	}
	if a == nil {
		return nil
	}

	// The agent calls the server's tools with the same connection, and
	// so the same tokens.
	a = a.WithOptions(&agent.Options{ExtraTools: set.Tools()})
	dir, err := os.MkdirTemp("", "gohands-mcpoauth-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	conv, err := conversation.New(ctx, a, dir, &conversation.LocalOptions{OnEvent: visualizer.New(cfg.Out, nil).OnEvent})
	if err != nil {
		return err
	}
	defer conv.Close()
	if err := conv.SendMessage(ctx, event.UserMessage("Ask the server who I am, tell me, then finish.")); err != nil {
		return err
	}
	return conv.Run(ctx)
}
