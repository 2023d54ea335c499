package main

import (
	"errors"
	"fmt"
	"io/fs"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// skillsCmd installs skills and syncs the public skills, as the agent
// server's /api/skills/install and /api/skills/sync do.
func (a *app) skillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "Install skills and sync the public skills",
		Long: `Install skills for every conversation, and fetch the public skills again.

Installed skills live in ~/.openhands/skills/installed (under
$OH_PERSISTENCE_DIR when set), where gohands and the agent server load them
with the user's skills.`,
	}
	cmd.AddCommand(a.skillsInstallCmd(), a.skillsListCmd(), a.skillsSyncCmd())
	return cmd
}

// skillStore is the user's installed skills.
func (a *app) skillStore() *plugin.Store {
	return &plugin.Store{Dir: skill.InstalledDir(skill.PersistenceDir(a.getenv("HOME"))), Load: plugin.SkillLoader}
}

// fetchOptions are where fetched repositories are kept, as the agent's.
func (a *app) fetchOptions() *plugin.FetchOptions {
	return &plugin.FetchOptions{CacheDir: plugin.CacheDir(skill.PersistenceDir(a.getenv("HOME")))}
}

func (a *app) skillsInstallCmd() *cobra.Command {
	var ref, repoPath string
	var force bool
	cmd := &cobra.Command{
		Use:   "install SOURCE",
		Short: "Install a skill (a directory with a SKILL.md) from github:owner/repo[/path], a git URL or a directory",
		Example: `  gohands skills install github:OpenHands/extensions/skills/github
  gohands skills install --ref v1.2 https://example.com/skills.git
  gohands skills install ./my-skill`,
		Args: cobra.ExactArgs(1),
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
			info, err := a.skillStore().Install(dir, src, commit, force)
			switch {
			case errors.Is(err, fs.ErrExist):
				return usageErr("skill already installed: give --force to replace it")
			case err != nil:
				return &exitErr{code: exitError, msg: fmt.Sprintf("invalid skill: %v", err)}
			}
			fmt.Fprintf(a.stdout, "Installed skill %s in %s\n", info.Name, info.InstallPath)
			return nil
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&ref, "ref", "", "branch, tag or commit of a git SOURCE")
	fl.StringVar(&repoPath, "repo-path", "", "the skill's `directory` inside the repository")
	fl.BoolVar(&force, "force", false, "replace an installed skill of the same name")
	return cmd
}

func (a *app) skillsListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the installed skills",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, err := a.skillStore().List()
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			if len(list) == 0 {
				fmt.Fprintln(a.stdout, "No installed skills: add one with gohands skills install SOURCE.")
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tENABLED\tSOURCE\tDESCRIPTION")
			for _, i := range list {
				fmt.Fprintf(tw, "%s\t%t\t%s\t%s\n", i.Name, i.Enabled, plugin.Redact(i.Source), oneLine(i.Description))
			}
			return tw.Flush()
		},
	}
}

func (a *app) skillsSyncCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "sync",
		Short: "Fetch the public skills repository again ($EXTENSIONS_REPO at $EXTENSIONS_REF, default github.com/OpenHands/extensions at main)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			dir, err := plugin.PublicRepo(cmd.Context(), a.fetchOptions())
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			fmt.Fprintf(a.stdout, "Synced the public skills in %s\n", dir)
			return nil
		},
	}
}
