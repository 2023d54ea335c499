package server

import (
	"time"

	"github.com/gohands/gohands/conversation"
)

// WrapBackend makes the server open conversations through wrap(backend),
// so that a test can make their stores fail. Call it before any request.
func WrapBackend(s *Server, wrap func(conversation.Backend) conversation.Backend) {
	s.cat = wrappedCatalog{s.cat, wrap}
}

type wrappedCatalog struct {
	catalog
	wrap func(conversation.Backend) conversation.Backend
}

func (w wrappedCatalog) backend() conversation.Backend { return w.wrap(w.catalog.backend()) }

// Loaded reports whether conversation id is loaded (not released).
func Loaded(s *Server, id string) bool {
	s.mu.RLock()
	c := s.convs[id]
	s.mu.RUnlock()
	return c != nil && c.isLoaded()
}

// SetEndedGrace sets how long after a run's end a poll sends no snapshot.
// Call it before any request.
func SetEndedGrace(s *Server, d time.Duration) { s.endedGrace = d }

// SetRunReturned makes the server call f when a conversation's run has
// returned, before it records the run's end. Call it before any request.
func SetRunReturned(s *Server, f func(id string)) { s.runReturned = f }
