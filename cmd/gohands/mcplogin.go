package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os/exec"
	"runtime"
	"time"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/mcp"
	"github.com/gohands/gohands/secret"
)

// loginTimeout bounds how long gohands mcp login waits for the user to
// sign in.
const loginTimeout = 10 * time.Minute

// mcpLoginCmd is gohands mcp login: the OAuth sign-in of an MCP server
// whose auth strategy is oauth2, as the agent server's /api/mcp/oauth/*
// routes do it for a browser; the tokens are kept in the settings.
func (a *app) mcpLoginCmd() *cobra.Command {
	var noBrowser bool
	cmd := &cobra.Command{
		Use:   "login NAME",
		Short: "Sign in to an MCP server that uses OAuth (added with --oauth), in the browser",
		Long: `Sign in to the MCP server NAME of the settings, whose auth strategy is
oauth2: the authorization page opens in the browser (its address is printed
too), and after the sign-in the server's tokens are saved in the settings
file, where gohands run uses and refreshes them.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.mcpLogin(cmd.Context(), args[0], !noBrowser)
		},
	}
	cmd.Flags().BoolVar(&noBrowser, "no-browser", false, "only print the address to open")
	return cmd
}

func (a *app) mcpLogin(ctx context.Context, name string, browser bool) error {
	st, _, err := a.loadSettings()
	if err != nil {
		return err
	}
	raw, ok := st.MCPServers[name]
	if !ok {
		return usageErr("no MCP server %q", name)
	}
	cfg, err := mcp.ParseConfig(mustJSON(map[string]json.RawMessage{name: raw}))
	if err != nil {
		return usageErr("%v", err)
	}
	spec := cfg[name]
	if spec.Auth == nil || spec.Auth.Strategy != mcp.AuthOAuth2 || spec.EffectiveTransport() == mcp.TransportStdio {
		return usageErr("MCP server %q does not sign in with OAuth (add one with gohands mcp add NAME --url URL --oauth)", name)
	}
	// A new sign-in: the stored tokens and client are not used.
	auth := *spec.Auth
	auth.State = nil
	spec.Auth, spec.Disabled = &auth, false
	cfg = mcp.Config{name: spec}

	ctx, cancel := context.WithTimeout(ctx, loginTimeout)
	defer cancel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("listening for the OAuth callback: %v", err)}
	}
	redirect := fmt.Sprintf("http://127.0.0.1:%d/callback", ln.Addr().(*net.TCPAddr).Port)
	codes := make(chan url.Values, 1)
	srv := &http.Server{ReadHeaderTimeout: 10 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/callback" {
			http.NotFound(w, r)
			return
		}
		select {
		case codes <- r.URL.Query():
			io.WriteString(w, "gohands: signed in; you can close this page.\n")
		default:
			http.Error(w, "gohands: this sign-in is over", http.StatusConflict)
		}
	})}
	go srv.Serve(ln)
	defer srv.Close()

	authorize := func(ctx context.Context, authURL string) (url.Values, error) {
		fmt.Fprintf(a.stdout, "Open this address to sign in to %s:\n%s\n", name, authURL)
		if browser {
			openBrowser(authURL)
		}
		select {
		case q := <-codes:
			return q, nil
		case <-ctx.Done():
			return nil, fmt.Errorf("no sign-in: %w", context.Cause(ctx))
		}
	}
	set, err := mcp.Connect(ctx, cfg, &mcp.Options{
		OAuth:  &mcp.OAuthOptions{RedirectURL: redirect, Authorize: authorize},
		Logger: slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelError})),
	})
	if err == nil && len(set.Errors()) > 0 {
		err = set.Errors()[0].Err
	}
	var state *mcp.OAuthState
	if set != nil {
		state = set.OAuthState(name)
		set.Close()
	}
	if err != nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("MCP server %q: %v", name, err)}
	}
	if state.IsZero() || state.Tokens == nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("MCP server %q: no tokens were issued", name)}
	}
	if err := a.saveOAuthState(name, state); err != nil {
		return err
	}
	fmt.Fprintf(a.stdout, "Signed in to %s; its tokens are saved in the settings.\n", name)
	return nil
}

// saveOAuthState writes st as the auth state of the settings' MCP server
// name, its secrets in clear as the server keeps them (the settings file
// has mode 0600). gohands mcp login saves the sign-in with it, and a run
// each refresh, so a server that rotates its refresh tokens still works
// after the run.
func (a *app) saveOAuthState(name string, st *mcp.OAuthState) error {
	return a.editSettings(func(s *settings) error {
		raw, ok := s.MCPServers[name]
		if !ok {
			return usageErr("no MCP server %q in the settings", name)
		}
		b, err := mcp.WithOAuthState(raw, st, func(v secret.String) (secret.String, error) { return v.Expose(), nil })
		if err != nil {
			return usageErr("MCP server %q: %v", name, err)
		}
		s.MCPServers[name] = b
		return nil
	})
}

// openBrowser opens u in the user's browser, if there is one; the
// printed address is the way when there is not.
func openBrowser(u string) {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", u)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", u)
	default:
		cmd = exec.Command("xdg-open", u)
	}
	if cmd.Start() == nil {
		go cmd.Wait()
	}
}

// mustJSON marshals v, which cannot fail.
func mustJSON(v any) json.RawMessage {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}
