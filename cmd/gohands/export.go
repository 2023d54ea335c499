package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/conversation/pgstore"
)

// storeFlags choose where conversations are kept: a persistence directory
// (the default) or a PostgreSQL database (--store).
type storeFlags struct {
	persistenceDir string
	store          string
}

func (f *storeFlags) add(cmd *cobra.Command) {
	cmd.Flags().StringVar(&f.persistenceDir, "persistence-dir", "", "`directory` conversations are stored in (default $XDG_DATA_HOME/gohands/conversations)")
	cmd.Flags().StringVar(&f.store, "store", "", "a shared store instead of the directory: a PostgreSQL `URL` (postgres://user@host/db)")
}

// backend opens the store the flags choose; close releases it.
func (a *app) backend(ctx context.Context, f *storeFlags) (b conversation.Backend, close func(), err error) {
	if f.store != "" {
		if !strings.HasPrefix(f.store, "postgres://") && !strings.HasPrefix(f.store, "postgresql://") {
			return nil, nil, usageErr("--store %q: want a postgres:// URL", f.store)
		}
		pb, err := pgstore.Open(ctx, f.store, nil)
		if err != nil {
			return nil, nil, &exitErr{code: exitError, msg: err.Error()}
		}
		return pb, pb.Close, nil
	}
	dir, err := a.persistenceDir(f.persistenceDir)
	if err != nil {
		return nil, nil, err
	}
	return filestore.NewBackend(dir, nil), func() {}, nil
}

func (a *app) exportCmd() *cobra.Command {
	var f storeFlags
	cmd := &cobra.Command{
		Use:   "export ID DIR",
		Short: "Copy a stored conversation into a directory, in the OpenHands layout",
		Long: `Copy conversation ID from the store (the persistence directory, or --store)
into DIR/<id>, in the layout the file store and the Python reference read:
base_state.json and one file per event. DIR can be another machine's
persistence directory, or the reference's.`,
		Args: cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			b, closeB, err := a.backend(cmd.Context(), &f)
			if err != nil {
				return err
			}
			defer closeB()
			ctx := cmd.Context()
			src, err := b.Open(ctx, args[0])
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			defer src.Close()
			log, err := conversation.LoadLog(ctx, src)
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			if log.Len() == 0 {
				if base, _ := src.ReadBase(ctx); base == nil {
					return &exitErr{code: exitError, msg: fmt.Sprintf("no conversation %s in the store", args[0])}
				}
			}
			dst, err := filestore.Open(filestore.Dir(args[1], args[0]), nil)
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			defer dst.Close()
			if err := conversation.Copy(ctx, dst, log); err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			fmt.Fprintf(a.stdout, "exported %s (%d events) to %s\n", args[0], log.Len(), dst.Dir())
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func (a *app) importCmd() *cobra.Command {
	var f storeFlags
	cmd := &cobra.Command{
		Use:   "import DIR",
		Short: "Copy a conversation directory into the store",
		Long: `Copy the conversation in DIR (a directory holding base_state.json and
events/, as gohands, the reference or gohands export write it) into the store
(the persistence directory, or --store), under its own id.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			src, err := filestore.Open(args[0], nil)
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			defer src.Close()
			id, err := conversation.StoredID(ctx, src)
			if err != nil {
				return &exitErr{code: exitError, msg: fmt.Sprintf("%s is not a conversation directory: %v", args[0], err)}
			}
			b, closeB, err := a.backend(cmd.Context(), &f)
			if err != nil {
				return err
			}
			defer closeB()
			log, err := conversation.LoadLog(ctx, src)
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			dst, err := b.Open(ctx, id)
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			defer dst.Close()
			if err := conversation.Copy(ctx, dst, log); err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			fmt.Fprintf(a.stdout, "imported %s (%d events)\n", id, log.Len())
			return nil
		},
	}
	f.add(cmd)
	return cmd
}
