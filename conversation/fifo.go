package conversation

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// fifoMutex is a mutual-exclusion lock granted in the order it was
// requested, like the reference's FIFOLock (sync.Mutex makes no such
// promise). It is a semaphore of weight one: semaphore.Weighted serves its
// waiters first come, first served and hands a released unit directly to
// the longest waiter, so a stream of writers cannot starve one that came
// first.
type fifoMutex struct{ sem *semaphore.Weighted }

func newFIFOMutex() fifoMutex { return fifoMutex{semaphore.NewWeighted(1)} }

// Lock cannot fail: Acquire fails only when its context is done.
func (m fifoMutex) Lock() { _ = m.sem.Acquire(context.Background(), 1) }

// Unlock panics if m is not locked.
func (m fifoMutex) Unlock() { m.sem.Release(1) }
