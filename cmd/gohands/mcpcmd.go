package main

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
)

// mcpCmd edits the MCP servers of the settings file.
func (a *app) mcpCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "mcp",
		Short: "Manage the MCP servers whose tools the agent gets",
		Long: `Manage the MCP servers of the settings file. Their tools are given to the
agent in every run (--mcp-config replaces them for one run).`,
	}
	add := a.mcpAddCmd()
	list := a.mcpListCmd()
	remove := &cobra.Command{
		Use:   "remove NAME",
		Short: "Remove an MCP server",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.editSettings(func(st *settings) error {
				if _, ok := st.MCPServers[args[0]]; !ok {
					return usageErr("no MCP server %q", args[0])
				}
				delete(st.MCPServers, args[0])
				return nil
			})
		},
	}
	toggle := func(use string, disabled bool) *cobra.Command {
		return &cobra.Command{
			Use:   use + " NAME",
			Short: strings.ToUpper(use[:1]) + use[1:] + " an MCP server",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				return a.editSettings(func(st *settings) error {
					raw, ok := st.MCPServers[args[0]]
					if !ok {
						return usageErr("no MCP server %q", args[0])
					}
					var m map[string]json.RawMessage
					if err := json.Unmarshal(raw, &m); err != nil {
						return usageErr("MCP server %q: %v", args[0], err)
					}
					if disabled {
						m["disabled"] = json.RawMessage("true")
					} else {
						delete(m, "disabled")
					}
					b, err := json.Marshal(m)
					st.MCPServers[args[0]] = b
					return err
				})
			},
		}
	}
	cmd.AddCommand(add, list, remove, toggle("enable", false), toggle("disable", true), a.mcpLoginCmd())
	return cmd
}

// mcpAddCmd is gohands mcp add.
func (a *app) mcpAddCmd() *cobra.Command {
	var env []string
	var url string
	var oauth bool
	add := &cobra.Command{
		Use:   "add NAME [--url URL | -- COMMAND [ARGS...]]",
		Short: "Add (or replace) an MCP server: a command to start, or a URL",
		Example: `  gohands mcp add fetch -- uvx mcp-server-fetch
  gohands mcp add github --env GITHUB_TOKEN=... -- npx -y @modelcontextprotocol/server-github
  gohands mcp add docs --url http://localhost:8931/mcp
  gohands mcp add linear --url https://mcp.linear.app/mcp --oauth && gohands mcp login linear`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := args[0]
			server := map[string]any{}
			switch {
			case url != "" && len(args) > 1:
				return usageErr("mcp add: give a --url or a command, not both")
			case url != "":
				server["url"] = url
			case len(args) > 1:
				server["command"] = args[1]
				server["args"] = args[2:]
			default:
				return usageErr("mcp add %s: give the server's command after --, or --url", name)
			}
			if oauth {
				if url == "" {
					return usageErr("--oauth goes with --url")
				}
				server["auth"] = map[string]string{"strategy": "oauth2"}
			}
			if len(env) > 0 {
				vars := map[string]string{}
				for _, kv := range env {
					k, v, ok := strings.Cut(kv, "=")
					if !ok || !envName.MatchString(k) {
						return usageErr("--env %q: want NAME=VALUE", kv)
					}
					vars[k] = v
				}
				server["env"] = vars
			}
			raw, err := json.Marshal(server)
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			return a.editSettings(func(st *settings) error {
				if st.MCPServers == nil {
					st.MCPServers = map[string]json.RawMessage{}
				}
				st.MCPServers[name] = raw
				return nil
			})
		},
	}
	add.Flags().StringArrayVar(&env, "env", nil, "environment variable of the server's process, `NAME=VALUE` (repeatable)")
	add.Flags().StringVar(&url, "url", "", "`URL` of a server reached over HTTP")
	add.Flags().BoolVar(&oauth, "oauth", false, "with --url: the server signs in with OAuth (auth strategy oauth2); sign in with gohands mcp login NAME")

	return add
}

// mcpListCmd is gohands mcp list.
func (a *app) mcpListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the MCP servers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			st, path, err := a.loadSettings()
			if err != nil {
				return err
			}
			if len(st.MCPServers) == 0 {
				fmt.Fprintf(a.stderr, "gohands: no MCP servers in %s; add one with gohands mcp add\n", path)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tSTATE\tSERVER")
			for _, name := range slices.Sorted(maps.Keys(st.MCPServers)) {
				var s struct {
					Command  string   `json:"command"`
					Args     []string `json:"args"`
					URL      string   `json:"url"`
					Disabled bool     `json:"disabled"`
				}
				_ = json.Unmarshal(st.MCPServers[name], &s) // shown as far as it reads
				state := "enabled"
				if s.Disabled {
					state = "disabled"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\n", name, state, cmpOr(s.URL, strings.Join(append([]string{s.Command}, s.Args...), " ")))
			}
			return tw.Flush()
		},
	}
}

// editSettings changes the settings file with edit and saves it.
func (a *app) editSettings(edit func(*settings) error) error {
	st, path, err := a.loadSettings()
	if err != nil {
		return err
	}
	if path == "" {
		return usageErr("no settings file: set $HOME or $XDG_CONFIG_HOME")
	}
	if err := edit(&st); err != nil {
		return err
	}
	if err := saveSettings(path, st); err != nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("saving %s: %v", path, err)}
	}
	return nil
}
