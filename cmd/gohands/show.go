package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/visualizer"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

func (a *app) showCmd() *cobra.Command {
	var dir string
	var asJSON, all bool
	cmd := &cobra.Command{
		Use:   "show [flags] ID",
		Short: "Show a stored conversation",
		Long: `Show a stored conversation as gohands run shows one: each event in turn, with
the system prompt and token counts. ID may be a unique prefix of the id
(gohands ls lists them). With --json, the events as stored, one a line.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := a.persistenceDir(dir)
			if err != nil {
				return err
			}
			info, err := findConversation(base, args[0])
			if err != nil {
				return usageErr("%v", err)
			}
			events, fields, err := readStored(cmd.Context(), info.Dir)
			if err != nil {
				return &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s: %v", info.ID, err)}
			}
			if asJSON {
				j := visualizer.NewJSONL(a.stdout)
				for _, e := range events {
					j.OnEvent(e)
				}
				return j.Err()
			}
			opts := &visualizer.Options{}
			if all {
				opts.MaxLines = -1
			}
			if fields != nil {
				opts.Stats = func() map[string]*llm.Metrics { return fields.Stats.UsageToMetrics }
			}
			v := visualizer.New(a.stdout, opts)
			for _, e := range events {
				v.OnEvent(e)
			}
			fmt.Fprintf(a.stderr, "gohands: conversation %s · %s · %d events · %s\n", info.ID, info.Status, len(events), info.Workspace)
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the events as JSON lines, exactly as stored")
	cmd.Flags().BoolVar(&all, "all", false, "show long outputs whole instead of their head and tail")
	return cmd
}

// readStored reads a stored conversation's events and fields. A
// conversation in use by another process is read from its event files
// without its lock (the newest events may not be there yet).
func readStored(ctx context.Context, dir string) ([]event.Event, *conversation.Fields, error) {
	var fields *conversation.Fields
	if data, err := os.ReadFile(filepath.Join(dir, filestore.BaseStateFile)); err == nil {
		fields, _ = conversation.DecodeFields(data, nil) // the events show even if the state does not decode
	}
	st, err := filestore.Open(dir, &filestore.Options{LockTimeout: 200 * time.Millisecond})
	if err == nil {
		defer st.Close()
		log, err := conversation.LoadLog(ctx, st)
		if err != nil {
			return nil, fields, err
		}
		var out []event.Event
		for e, err := range conversation.EventsFrom(ctx, log, 0) {
			if err != nil {
				return out, fields, err
			}
			out = append(out, e)
		}
		return out, fields, nil
	}
	if !errors.Is(err, conversation.ErrLocked) {
		return nil, fields, err
	}
	events, err := filestore.ReadEvents(dir)
	return events, fields, err
}

func (a *app) rmCmd() *cobra.Command {
	var dir string
	var yes bool
	cmd := &cobra.Command{
		Use:   "rm [flags] ID...",
		Short: "Delete stored conversations",
		Long: `Delete stored conversations: their events, state and files. ID may be a
unique prefix of the id. Each is shown and confirmed on standard input
unless --yes is given. A conversation in use by another process is not
deleted.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := a.persistenceDir(dir)
			if err != nil {
				return err
			}
			var infos []convInfo
			for _, id := range args {
				info, err := findConversation(base, id)
				if err != nil {
					return usageErr("%v", err)
				}
				infos = append(infos, info)
			}
			in := bufio.NewReader(a.stdin)
			failed := 0
			for _, info := range infos {
				if !yes {
					fmt.Fprintf(a.stderr, "Delete conversation %s (%s, %s, %q in %s)? [y/N] ", info.ID, info.Status,
						shortTime(info.UpdatedAt), clip(info.FirstMessage, 40), a.tildePath(info.Workspace))
					ans, _ := in.ReadString('\n')
					if s := strings.ToLower(strings.TrimSpace(ans)); s != "y" && s != "yes" {
						fmt.Fprintln(a.stderr, "gohands: kept", info.ID)
						continue
					}
				}
				if err := removeConversation(info.Dir); err != nil {
					fmt.Fprintf(a.stderr, "gohands: %s: %v\n", info.ID, err)
					failed++
					continue
				}
				fmt.Fprintf(a.stdout, "deleted %s\n", info.ID)
			}
			if failed > 0 {
				return &exitErr{code: exitError}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	cmd.Flags().BoolVarP(&yes, "yes", "y", false, "do not ask")
	return cmd
}

// removeConversation deletes a conversation's directory unless another
// process has it open: its lock is taken first and held until the files
// are gone.
func removeConversation(dir string) error {
	st, err := filestore.Open(dir, &filestore.Options{LockTimeout: 200 * time.Millisecond})
	if errors.Is(err, conversation.ErrLocked) {
		return errors.New("in use by another process (a running gohands): stop it first")
	}
	if err != nil {
		return err
	}
	err = os.RemoveAll(dir)
	st.Close() // the directory is gone; what Close would write has nowhere to go
	if err != nil {
		return err
	}
	return os.RemoveAll(dir)
}
