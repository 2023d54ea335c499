package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/remote"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/termtext"
	gows "github.com/gohands/gohands/workspace"
)

func (a *app) lsCmd() *cobra.Command {
	var dir, workspace, server, key string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "ls",
		Short: "List stored conversations",
		Long: `List the conversations stored in the persistence directory, most recently
updated first: id, status, last activity, total model cost, workspace and the
first user message. With --workspace, only the conversations of that directory
(use . for the current one). Conversations being run are listed too: ls only
reads. With --server, the conversations of that agent server (gohands serve or
the reference's) are listed instead, with their titles for tasks.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var base string
			var infos []convInfo
			if server != "" {
				base = server
				key, from := a.sessionKey(key)
				list, err := remote.List(cmd.Context(), &gows.Remote{Host: server, APIKey: key})
				if err != nil {
					msg := err.Error()
					if h := sessionKeyHint(err, from); h != "" {
						msg += " — " + h
					}
					return &exitErr{code: exitError, msg: msg}
				}
				for _, c := range list {
					info := convInfo{ID: c.ID, Status: string(c.ExecutionStatus), CreatedAt: c.CreatedAt, UpdatedAt: c.UpdatedAt, Workspace: c.Workspace.WorkingDir}
					if c.Title != nil {
						info.FirstMessage = termtext.Strip(*c.Title)
					}
					infos = append(infos, info)
				}
			} else {
				var err error
				if base, err = a.persistenceDir(dir); err != nil {
					return err
				}
				infos, err = listConversations(base, func(path string, err error) {
					fmt.Fprintf(a.stderr, "gohands: skipping %s: %v\n", path, err)
				})
				if err != nil {
					return &exitErr{code: exitError, msg: err.Error()}
				}
				for i := range infos {
					if infos[i].Status == "error" {
						infos[i].Error = lastError(infos[i].Dir)
					}
				}
			}
			if workspace != "" {
				w, err := filepath.Abs(workspace)
				if err != nil {
					return usageErr("--workspace: %v", err)
				}
				infos = slices.DeleteFunc(infos, func(c convInfo) bool { return c.Workspace != w })
			}
			if asJSON {
				enc := json.NewEncoder(a.stdout)
				enc.SetIndent("", "  ")
				if infos == nil {
					infos = []convInfo{}
				}
				return enc.Encode(infos)
			}
			if len(infos) == 0 {
				fmt.Fprintf(a.stderr, "gohands: no conversations in %s\n", base)
				return nil
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSTATUS\tUPDATED\tCOST\tWORKSPACE\tTASK")
			for _, c := range infos {
				task := clip(c.FirstMessage, 50)
				if c.Error != "" {
					task += " ✗ " + clip(c.Error, 80)
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t$%.4f\t%s\t%s\n", c.ID, c.Status,
					shortTime(c.UpdatedAt), c.Cost, clip(a.tildePath(c.Workspace), 40), task)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array")
	cmd.Flags().StringVar(&workspace, "workspace", "", "list only the conversations of this `directory`")
	cmd.Flags().StringVar(&server, "server", "", "list the conversations of the agent server at this `URL` instead")
	cmd.Flags().StringVar(&key, "session-key", "", "the agent server's session `key` (default $SESSION_API_KEY)")
	return cmd
}

// convInfo is what ls shows of a stored conversation.
type convInfo struct {
	ID           string  `json:"id"`
	Status       string  `json:"status"`
	Model        string  `json:"model,omitempty"`
	CreatedAt    string  `json:"created_at"`
	UpdatedAt    string  `json:"updated_at"`
	Events       int     `json:"events"`
	Cost         float64 `json:"accumulated_cost"`
	FirstMessage string  `json:"first_message"`
	Dir          string  `json:"dir"`
	Workspace    string  `json:"workspace"`
	BaseURL      string  `json:"base_url,omitempty"`
	// Error is what ended a conversation in error (ls only).
	Error string `json:"error,omitempty"`
}

// lastError is the code and detail of the last error event stored in
// dir, "" if none is.
func lastError(dir string) string {
	events, _ := filestore.ReadEvents(dir) // what reads is enough
	for i := len(events) - 1; i >= 0; i-- {
		if e, ok := events[i].(*event.ConversationErrorEvent); ok {
			return e.Code + ": " + e.Detail
		}
	}
	return ""
}

// listConversations lists the conversations under base (see
// filestore.List) as ls shows them.
func listConversations(base string, skip func(path string, err error)) ([]convInfo, error) {
	list, err := filestore.List(base, skip)
	if err != nil {
		return nil, err
	}
	out := make([]convInfo, len(list))
	for i, s := range list {
		out[i] = infoOf(s)
	}
	return out, nil
}

func infoOf(s filestore.Summary) convInfo {
	return convInfo{ID: s.ID, Status: s.ExecutionStatus, Model: s.Model, CreatedAt: s.CreatedAt,
		UpdatedAt: s.UpdatedAt, Events: s.Events, Cost: s.Cost, FirstMessage: s.FirstMessage,
		Dir: s.Dir, Workspace: s.WorkingDir, BaseURL: s.BaseURL}
}

// shortTime shows an event timestamp to the minute.
func shortTime(ts string) string {
	if len(ts) >= 16 {
		return strings.Replace(ts[:16], "T", " ", 1)
	}
	if ts == "" {
		return "-"
	}
	return ts
}

// clip shortens s to one line of at most n characters.
func clip(s string, n int) string {
	// A sub-agent's task, for one, is written by the model.
	s = strings.Join(strings.Fields(termtext.Strip(s)), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}

// tildePath shows a path under the home directory as ~/….
func (a *app) tildePath(p string) string {
	home := a.getenv("HOME")
	if home != "" && (p == home || strings.HasPrefix(p, home+string(filepath.Separator))) {
		return "~" + p[len(home):]
	}
	return p
}

// storedConversation reads what a resume needs of a stored conversation
// (its workspace, model and base URL); ok is false when there is none.
func storedConversation(base, id string) (info convInfo, ok bool, err error) {
	s, ok, err := filestore.Describe(base, id)
	if err != nil {
		return info, false, err
	}
	if !ok {
		// Events without a base state: a creation stopped before the
		// base state was written (see conversation.LocalOptions.FirstMessage).
		// Once the task is among them, it is taken up without one.
		dir := filestore.Dir(base, id)
		ok, err := hasTask(dir)
		return convInfo{ID: id, Dir: dir}, ok, err
	}
	return infoOf(s), true, nil
}

// hasTask reports whether the events in dir hold a message from the user.
func hasTask(dir string) (bool, error) {
	if _, err := os.Stat(dir); err != nil {
		return false, nil
	}
	s, err := filestore.Open(dir, &filestore.Options{WriteThrough: true})
	if err != nil {
		return false, err
	}
	defer s.Close()
	for batch, err := range s.Load(context.Background()) {
		if err != nil {
			return false, err
		}
		for _, e := range batch {
			if e.Kind == event.KindMessage && e.Source == event.SourceUser {
				return true, nil
			}
		}
	}
	return false, nil
}
