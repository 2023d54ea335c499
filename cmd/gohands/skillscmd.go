package main

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// skillsCmd manages the installed skills and the public ones, as the
// agent server's /api/skills/install, /installed, /sync and /catalog do.
func (a *app) skillsCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "skills",
		Short: "Install, list, enable, disable and remove skills; list and sync the public ones",
		Long: `Install skills for every conversation, enable, disable or remove them, list
the public catalog and fetch the public skills again.

Installed skills live in ~/.openhands/skills/installed (under
$OH_PERSISTENCE_DIR when set), where gohands and the agent server load them
with the user's skills.`,
	}
	k := a.skills()
	cmd.AddCommand(a.installCmd(k, `  gohands skills install github:OpenHands/extensions/skills/github
  gohands skills install --ref v1.2 https://example.com/skills.git
  gohands skills install ./my-skill`), a.installedListCmd(k),
		a.installedToggleCmd(k, true), a.installedToggleCmd(k, false), a.uninstallCmd(k, "remove"),
		a.skillsSyncCmd(), a.skillsCatalogCmd())
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

// skills is what `gohands skills` manages.
func (a *app) skills() installedKind {
	return installedKind{noun: "skill", cmd: "skills", store: a.skillStore}
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

// skillsCatalogCmd lists the skills of the public catalog, as the agent
// server's /api/skills/catalog and /api/skills/marketplace do.
func (a *app) skillsCatalogCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "catalog",
		Short: "List the public skills and the user's: where each comes from, whether it is installed, its source for gohands skills install",
		Long: `List the skills a conversation can load with load_public_skills: the public
repository's (its default marketplace) and the user's, a user skill hiding a
public one of its name, and the other skills the public marketplace offers.
SOURCE is what gohands skills install takes; INSTALLED says whether a skill of
that name is installed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			list, warns, err := plugin.Catalog(cmd.Context(), a.getenv("HOME"), a.fetchOptions())
			for _, w := range warns {
				fmt.Fprintf(a.stderr, "warning: %v\n", w.Error())
			}
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			var offered []plugin.MarketplaceSkill
			dir, err := plugin.PublicRepo(cmd.Context(), a.fetchOptions())
			if err == nil {
				var m *plugin.Marketplace
				if m, err = plugin.PublicMarketplace(dir, true); m != nil {
					offered = m.InstallableSkills()
				}
			}
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			installed := map[string]bool{}
			if st, err := a.skillStore().List(); err == nil {
				for _, i := range st {
					installed[i.Name] = true
				}
			}
			source := map[string]string{}
			for _, o := range offered {
				source[o.Name] = o.Source
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "NAME\tORIGIN\tINSTALLED\tSOURCE\tDESCRIPTION")
			listed := map[string]bool{}
			for _, sk := range list {
				origin, src := "public", source[sk.Name]
				if sk.User {
					origin, src = "user", "-"
				}
				listed[sk.Name] = true
				fmt.Fprintf(tw, "%s\t%s\t%t\t%s\t%s\n", sk.Name, origin, installed[sk.Name], cmpOr(src, "-"), oneLine(sk.Description))
			}
			for _, o := range offered {
				if listed[o.Name] {
					continue
				}
				desc := ""
				if o.Description != nil {
					desc = *o.Description
				}
				fmt.Fprintf(tw, "%s\tmarketplace\t%t\t%s\t%s\n", o.Name, installed[o.Name], o.Source, oneLine(desc))
			}
			return tw.Flush()
		},
	}
}
