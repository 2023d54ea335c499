package conversation

import "sync"

// fifoMutex is a mutual-exclusion lock granted in the order it was
// requested, like the reference's FIFOLock (sync.Mutex makes no such
// promise). Unlock hands the lock directly to the longest waiter, so a
// stream of writers cannot starve one that came first.
type fifoMutex struct {
	mu      sync.Mutex
	locked  bool
	waiters []chan struct{}
}

func (m *fifoMutex) Lock() {
	m.mu.Lock()
	if !m.locked {
		m.locked = true
		m.mu.Unlock()
		return
	}
	ch := make(chan struct{})
	m.waiters = append(m.waiters, ch)
	m.mu.Unlock()
	<-ch // the lock is ours: Unlock handed it over without releasing it
}

func (m *fifoMutex) Unlock() {
	m.mu.Lock()
	if !m.locked {
		m.mu.Unlock()
		panic("conversation: unlock of unlocked fifoMutex")
	}
	if len(m.waiters) == 0 {
		m.locked = false
		m.mu.Unlock()
		return
	}
	ch := m.waiters[0]
	m.waiters[0] = nil
	m.waiters = m.waiters[1:]
	m.mu.Unlock()
	close(ch)
}
