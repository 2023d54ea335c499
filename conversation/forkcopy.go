package conversation

import (
	"context"
	"sync"
)

// ForkCopyFunc copies into a fork what a tool keeps in the directory of
// the conversation forked (srcID, stored in srcDir), under the fork's
// (forkID, forkDir): the task tool's sub-conversations, say.
type ForkCopyFunc func(ctx context.Context, srcID, srcDir, forkID, forkDir string) error

var (
	forkCopiesMu sync.Mutex
	forkCopies   []ForkCopyFunc
)

// RegisterForkCopy makes Fork call f for a conversation and a fork both
// stored in directories. A tool package calls it from init.
func RegisterForkCopy(f ForkCopyFunc) {
	forkCopiesMu.Lock()
	defer forkCopiesMu.Unlock()
	forkCopies = append(forkCopies, f)
}

// copyIntoFork runs the registered ForkCopyFuncs; what one cannot copy
// is logged, and the fork stands without it.
func (c *LocalConversation) copyIntoFork(ctx context.Context, fork *LocalConversation) {
	if c.dir == "" || fork.dir == "" {
		return
	}
	forkCopiesMu.Lock()
	fs := forkCopies
	forkCopiesMu.Unlock()
	for _, f := range fs {
		if err := f(ctx, c.id, c.dir, fork.id, fork.dir); err != nil {
			fork.log.Warn("conversation: fork: a tool's data was not copied", "from", c.id, "err", err)
		}
	}
}
