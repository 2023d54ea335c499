package main

import (
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
	gows "github.com/gohands/gohands/workspace"
)

// pluginsCmd manages the installed plugins, as the agent server's
// /api/plugins/install and /api/plugins/installed routes do, and loads a
// plugin into a running conversation of a server.
func (a *app) pluginsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "plugins",
		Short: "Install, list, enable, disable and uninstall plugins; load one into a server's conversation",
		Long: `Install plugins for every conversation: their skills, hooks and MCP servers
join the agent of each gohands run and each conversation of gohands serve.

Installed plugins live in ~/.openhands/plugins/installed (under
$OH_PERSISTENCE_DIR when set), with .installed.json recording where each came
from and whether it is enabled, where the agent server's /api/plugins/installed
finds them.`,
	}
	k := installedKind{noun: "plugin", cmd: "plugins", store: a.pluginStore}
	cmd.AddCommand(a.installCmd(k, `  gohands plugins install github:owner/repo/plugins/city
  gohands plugins install --ref v1.2 --repo-path plugins/city https://example.com/tools.git
  gohands plugins install ./my-plugin`), a.installedListCmd(k),
		a.installedToggleCmd(k, true), a.installedToggleCmd(k, false), a.uninstallCmd(k, "uninstall"),
		a.pluginsLoadCmd())
	return cmd
}

// pluginStore is the user's installed plugins, which the agents load with
// the ambient plugins (plugin.Ambient).
func (a *app) pluginStore() *plugin.Store {
	return &plugin.Store{Dir: plugin.InstalledDir(skill.PersistenceDir(a.getenv("HOME"))), Load: plugin.PluginLoader}
}

// installedKind is what an installation store holds: skills or plugins.
type installedKind struct {
	noun  string // "skill"
	cmd   string // "skills": the gohands command
	store func() *plugin.Store
}

// installCmd is `gohands skills|plugins install`: fetched (bounded by the
// fetch timeout), checked, then copied into the store, or nothing.
func (a *app) installCmd(k installedKind, example string) *cobra.Command {
	var ref, repoPath string
	var force bool
	cmd := &cobra.Command{
		Use:     "install SOURCE",
		Short:   fmt.Sprintf("Install a %s from github:owner/repo[/path], a git URL or a directory", k.noun),
		Example: example,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			src := plugin.Source{Source: args[0]}
			if ref != "" {
				src.Ref = &ref
			}
			if repoPath != "" {
				src.RepoPath = &repoPath
			}
			if err := src.Validate(); err != nil {
				return usageErr("%v", err)
			}
			dir, commit, err := plugin.Fetch(cmd.Context(), src, a.fetchOptions())
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			info, err := k.store().Install(dir, src, commit, force)
			switch {
			case errors.Is(err, fs.ErrExist):
				return usageErr("%s already installed: give --force to replace it", k.noun)
			case err != nil:
				return &exitErr{code: exitError, msg: fmt.Sprintf("invalid %s: %v", k.noun, err)}
			}
			fmt.Fprintf(a.stdout, "Installed %s %s in %s\n", k.noun, info.Name, info.InstallPath)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&ref, "ref", "", "branch, tag or commit of a git SOURCE")
	fl.StringVar(&repoPath, "repo-path", "", "the "+k.noun+"'s `directory` inside the repository")
	fl.BoolVar(&force, "force", false, "replace an installed "+k.noun+" of the same name (it stays enabled or disabled)")
	return cmd
}

func (a *app) installedListCmd(k installedKind) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: fmt.Sprintf("List the installed %ss, enabled or not", k.noun),
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := k.store().List()
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			if len(list) == 0 {
				fmt.Fprintf(a.stdout, "No installed %ss: add one with gohands %s install SOURCE.\n", k.noun, k.cmd)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tENABLED\tVERSION\tSOURCE\tDESCRIPTION")
			for _, i := range list {
				fmt.Fprintf(tw, "%s\t%t\t%s\t%s\t%s\n", i.Name, i.Enabled, cmpOr(i.Version, "-"), plugin.Redact(i.Source), oneLine(i.Description))
			}
			return tw.Flush()
		},
	}
}

func (a *app) installedToggleCmd(k installedKind, on bool) *cobra.Command {
	verb := "disable"
	if on {
		verb = "enable"
	}
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: fmt.Sprintf("%s an installed %s (conversations started after it see the change)", map[bool]string{true: "Enable", false: "Disable"}[on], k.noun),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found, err := k.store().SetEnabled(args[0], on)
			switch {
			case err != nil:
				return &exitErr{code: exitError, msg: err.Error()}
			case !found:
				return usageErr("no installed %s %q (see gohands %s list)", k.noun, args[0], k.cmd)
			}
			fmt.Fprintf(a.stdout, "%s %s %s\n", map[bool]string{true: "Enabled", false: "Disabled"}[on], k.noun, args[0])
			return nil
		},
	}
}

func (a *app) uninstallCmd(k installedKind, verb string) *cobra.Command {
	return &cobra.Command{
		Use:   verb + " NAME",
		Short: fmt.Sprintf("Uninstall a %s (its directory and its record)", k.noun),
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			found, err := k.store().Uninstall(args[0])
			switch {
			case err != nil:
				return &exitErr{code: exitError, msg: err.Error()}
			case !found:
				return usageErr("no installed %s %q (see gohands %s list)", k.noun, args[0], k.cmd)
			}
			fmt.Fprintf(a.stdout, "Uninstalled %s %s\n", k.noun, args[0])
			return nil
		},
	}
}

// pluginsLoadCmd loads a plugin of a conversation's registered
// marketplaces into that conversation of an agent server, through the
// SDK's remote conversation.
func (a *app) pluginsLoadCmd() *cobra.Command {
	var server, id, key string
	cmd := &cobra.Command{
		Use:   "load NAME[@MARKETPLACE] --server URL --conversation ID",
		Short: "Load a plugin of a conversation's registered marketplaces into that conversation of an agent server",
		Long: `Load a plugin into a conversation an agent server (gohands serve or the
reference's) runs: its skills, hooks and MCP servers join the conversation's
agent, before its next step when it is running. The plugin is looked up in the
marketplaces the conversation's agent context registers
(registered_marketplaces): NAME@MARKETPLACE names one, NAME alone must be in
exactly one.`,
		Example: `  gohands plugins load city@company --server http://127.0.0.1:8000 --conversation 1b7e...`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if server == "" || id == "" {
				return usageErr("plugins load: give --server URL and --conversation ID")
			}
			key, from := a.sessionKey(key)
			ctx := cmd.Context()
			c, err := remote.Attach(ctx, &gows.Remote{Host: server, APIKey: key}, id, nil)
			if err != nil {
				msg := err.Error()
				if h := sessionKeyHint(err, from); h != "" {
					msg += " — " + h
				}
				return &exitErr{code: exitError, msg: msg}
			}
			defer c.Close()
			err = c.LoadPlugin(ctx, args[0])
			switch {
			case errors.Is(err, plugin.ErrNotFound):
				return &exitErr{code: exitError, msg: fmt.Sprintf("plugin %s: not found in the conversation's registered marketplaces: %v", args[0], err)}
			case errors.Is(err, conversation.ErrCannotLoadPlugin):
				return &exitErr{code: exitError, msg: fmt.Sprintf("plugin %s cannot be loaded: %v", args[0], err)}
			case err != nil:
				return &exitErr{code: exitError, msg: err.Error()}
			}
			fmt.Fprintf(a.stdout, "Loaded plugin %s into conversation %s\n", args[0], id)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&server, "server", "", "the agent server's `URL`")
	fl.StringVar(&id, "conversation", "", "the conversation's `id`")
	fl.StringVar(&key, "session-key", "", "the agent server's session `key` (default $SESSION_API_KEY)")
	return cmd
}
