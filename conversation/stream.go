package conversation

import (
	"context"
	"iter"
	"sync"

	"github.com/gohands/gohands/event"
)

// EventsFrom returns the events of s from index from on, decoded, in log
// order. Events appended while the iteration runs are included. A decoding
// error is yielded once and ends the iteration.
func EventsFrom(ctx context.Context, s *Log, from int) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		for i := max(from, 0); i < s.Len(); i++ {
			e, err := s.Event(ctx, i)
			if err != nil {
				yield(nil, err)
				return
			}
			if !yield(e, nil) {
				return
			}
		}
	}
}

// SearchAll returns every entry matching q, fetching the pages as the
// iteration needs them; q.PageID, if set, is where it starts and q.Limit
// the page size. A search error is yielded once and ends the iteration.
func SearchAll(s *Log, q Query) iter.Seq2[Entry, error] {
	return func(yield func(Entry, error) bool) {
		for {
			p, err := s.Search(q)
			if err != nil {
				yield(Entry{}, err)
				return
			}
			for _, e := range p.Entries {
				if !yield(e, nil) {
					return
				}
			}
			if p.NextPageID == "" {
				return
			}
			q.PageID = p.NextPageID
		}
	}
}

// RunStream runs c as Run does and yields the events committed meanwhile,
// in commit order, as they come; if Run fails, its error is yielded last,
// with a nil event. Stopping the iteration early pauses the run (as
// cancelling Run's context does) and waits for it to end.
//
// The events come through c.Subscribe into a queue the iteration drains,
// so a slow loop body never holds up the agent.
func RunStream(ctx context.Context, c Conversation) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		var (
			mu    sync.Mutex
			queue []event.Event
			wake  = make(chan struct{}, 1)
		)
		unsubscribe := c.Subscribe(func(e event.Event) {
			mu.Lock()
			queue = append(queue, e)
			mu.Unlock()
			select {
			case wake <- struct{}{}:
			default:
			}
		})
		take := func() []event.Event {
			mu.Lock()
			defer mu.Unlock()
			q := queue
			queue = nil
			return q
		}
		runCtx, cancel := context.WithCancel(ctx)
		defer cancel()
		done := make(chan error, 1)
		go func() { done <- c.Run(runCtx) }()
		for {
			var runErr error
			finished := false
			select {
			case <-wake:
			case runErr = <-done:
				finished = true
				// Every event of the run has been committed; once
				// unsubscribe returns, all of them are queued.
				unsubscribe()
			}
			for _, e := range take() {
				if !yield(e, nil) {
					if !finished {
						cancel()
						<-done
						unsubscribe()
					}
					return
				}
			}
			if finished {
				if runErr != nil {
					yield(nil, runErr)
				}
				return
			}
		}
	}
}
