package task

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
)

func init() {
	conversation.RegisterForkCopy(copyTasks)
}

// copyTasks copies the stored sub-conversations of the conversation srcID
// into its fork, each under the id derived from the fork's, so that the
// fork's task tool resumes the tasks its copied history names and numbers
// new ones after them. The 1.58.2 reference keeps its tasks in memory, so
// its forks (and restarts) find none. A sub-conversation that cannot be
// copied (one running in the source right now holds its lock) is left
// out; the others are copied.
func copyTasks(ctx context.Context, srcID, srcDir, forkID, forkDir string) error {
	src := filestore.NewBackend(filepath.Join(srcDir, "subagents"), nil)
	dst := filestore.NewBackend(filepath.Join(forkDir, "subagents"), nil)
	m := &manager{}
	var errs []error
	for n := 1; ; n++ {
		tid := m.taskID(n)
		from := subConversationID(srcID, tid)
		if _, err := os.Stat(filepath.Join(filestore.Dir(src.Base(), from), filestore.BaseStateFile)); err != nil {
			return errors.Join(errs...)
		}
		if err := copyStored(ctx, src, from, dst, subConversationID(forkID, tid)); err != nil {
			errs = append(errs, fmt.Errorf("task %s: %w", tid, err))
		}
	}
}

// copyStored copies the conversation from, stored by src, to a new one
// with the id to in dst: its fields and its events, nothing in the source
// written.
func copyStored(ctx context.Context, src *filestore.Backend, from string, dst *filestore.Backend, to string) error {
	in, err := src.Open(ctx, from)
	if err != nil {
		return err
	}
	defer in.Close()
	st, err := conversation.OpenID(ctx, in, from, nil)
	if err != nil {
		return err
	}
	out, err := dst.Open(ctx, to)
	if err != nil {
		return err
	}
	f := *st.Fields()
	leaf, empty := f.LeafEventID, f.HeadIsEmpty
	f.ID, f.PersistenceDir, f.LeafEventID, f.HeadIsEmpty = to, "", "", false
	ns, err := conversation.Create(ctx, out, &f, nil)
	if err != nil {
		out.Close()
		return errors.Join(err, os.RemoveAll(filestore.Dir(dst.Base(), to)))
	}
	log := st.Events()
	err = ns.Do(func(tx *conversation.Tx) error {
		for i := range log.Len() {
			e, err := log.Event(ctx, i)
			if err != nil {
				return err
			}
			if _, err := tx.Append(e); err != nil {
				return err
			}
		}
		nf := tx.Fields()
		nf.LeafEventID, nf.HeadIsEmpty = leaf, empty
		return nil
	})
	if err = errors.Join(err, ns.Close()); err != nil {
		// No half copy: the fork's task tool would take it for the task.
		err = errors.Join(err, os.RemoveAll(filestore.Dir(dst.Base(), to)))
	}
	return err
}
