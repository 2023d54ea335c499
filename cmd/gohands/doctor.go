package main

import (
	"errors"
	"fmt"
	"os"

	"github.com/google/uuid"
	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
)

func (a *app) doctorCmd() *cobra.Command {
	var dir string
	var repair bool
	cmd := &cobra.Command{
		Use:   "doctor ID",
		Short: "Check a stored conversation, and repair it with --repair",
		Long: `Check the stored conversation ID: every event file is read and checked
against the size and checksum it was written with, the events must be
numbered without gaps or doubles, and base_state.json must be readable.

With --repair, the event files from the first damaged one on are moved to a
damaged-<time> directory in the conversation's directory (nothing is
deleted), so the conversation continues from the events before the damage,
and a damaged base_state.json is replaced by the one written before it or,
when there is none, by one rebuilt from the events (what they recorded; the
model and tools are then the ones the next run is given).
Run it while the conversation is not running.

Exit status: 0 when the conversation is whole (or was repaired), 1 when it
is damaged.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			base, err := a.persistenceDir(dir)
			if err != nil {
				return err
			}
			id, err := uuid.Parse(args[0])
			if err != nil {
				return usageErr("%q: not a conversation id (a UUID)", args[0])
			}
			cdir := filestore.Dir(base, id.String())
			if _, err := os.Stat(cdir); err != nil {
				return &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s: %v", id, err)}
			}
			check := filestore.Check
			if repair {
				check = filestore.Repair
			}
			r, err := check(cdir)
			if errors.Is(err, conversation.ErrLocked) {
				return &exitErr{code: exitError, msg: fmt.Sprintf("conversation %s is open in another process; stop it first", id)}
			}
			if r != nil {
				a.printReport(r, repair)
			}
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			if !repair && !r.OK() {
				return &exitErr{code: exitError, msg: "the conversation is damaged; gohands doctor --repair " + id.String() + " sets the damage aside"}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	cmd.Flags().BoolVar(&repair, "repair", false, "set the damage aside so that the conversation can continue")
	return cmd
}

func (a *app) printReport(r *filestore.Report, repaired bool) {
	w := a.stdout
	fmt.Fprintf(w, "conversation directory: %s\n", r.Dir)
	if r.Damage != nil {
		fmt.Fprintf(w, "events: damaged at event %d", r.Damage.Index)
		if r.Damage.File != "" {
			fmt.Fprintf(w, " (%s)", r.Damage.File)
		}
		fmt.Fprintf(w, ": %v\n", r.Damage.Err)
	}
	if r.BaseState != nil {
		fmt.Fprintf(w, "base state: %v\n", r.BaseState)
	}
	if r.SetAside != "" {
		fmt.Fprintf(w, "set aside in %s: %d files\n", r.SetAside, len(r.Moved))
	}
	if r.Restored {
		fmt.Fprintf(w, "base state: restored from %s\n", filestore.PrevBaseStateFile)
	}
	if r.Rebuilt {
		fmt.Fprintln(w, "base state: rebuilt from the events")
	}
	switch {
	case r.OK():
		fmt.Fprintf(w, "ok: %d events\n", r.Events)
	case repaired:
		fmt.Fprintf(w, "repaired: %d events\n", r.Events)
	default:
		fmt.Fprintf(w, "intact: %d events before the damage\n", r.Events)
	}
}
