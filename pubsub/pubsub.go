// Package pubsub is a small generic broker for fanning values out to
// subscribers that must never hold up the publisher.
//
// Publish never blocks: each subscriber has a bounded buffer, and a
// subscriber whose buffer is full when a value is published has fallen
// behind. It is dropped: its channel is closed (after the values already
// buffered, which it can still read) and its Err reports [ErrSlow]. The
// broker counts the subscribers it dropped. A conversation publishes its
// committed events through a Broker so that a slow reader (a terminal, a
// WebSocket) never delays the agent.
//
// The package lives at the top of the module, not under conversation,
// because it knows nothing of events: the agent server uses it for its own
// fan-out as well.
package pubsub

import (
	"context"
	"errors"
	"iter"
	"log/slog"
	"sync"
	"sync/atomic"
)

// DefaultBuffer is the buffer of a subscription when Options.Buffer is 0.
const DefaultBuffer = 1024

// Errors reported by Subscription.Err.
var (
	// ErrSlow means the subscriber fell more than its buffer behind and
	// was dropped.
	ErrSlow = errors.New("pubsub: subscriber fell behind and was dropped")
	// ErrClosed means the broker was closed.
	ErrClosed = errors.New("pubsub: broker closed")
)

// Options configure a Broker. A nil *Options is the default.
type Options struct {
	// Buffer is the number of values a subscriber may fall behind before
	// it is dropped (DefaultBuffer if 0).
	Buffer int
}

// A Broker delivers published values to its current subscribers. The zero
// value is not usable; make one with NewBroker. A Broker is safe for
// concurrent use.
type Broker[T any] struct {
	buffer  int
	dropped atomic.Uint64

	mu     sync.Mutex
	subs   map[*Subscription[T]]struct{}
	closed bool
}

// NewBroker returns a broker with no subscribers.
func NewBroker[T any](opts *Options) *Broker[T] {
	b := &Broker[T]{buffer: DefaultBuffer, subs: make(map[*Subscription[T]]struct{})}
	if opts != nil && opts.Buffer > 0 {
		b.buffer = opts.Buffer
	}
	return b
}

// A Subscription receives the values published after it was made, in
// publication order, until it ends: it is closed, its context is done, it
// falls behind, or the broker is closed.
type Subscription[T any] struct {
	b    *Broker[T]
	c    chan T
	err  error // set, under b.mu, before c is closed
	stop func() bool

	// A SubscribeFunc subscription has no channel (c is nil): its values
	// wait in q[head:], under b.mu, which grows only as far as the
	// subscriber falls behind. A channel allocates its whole buffer at
	// once, and the command line asks for 1<<16 values (1 MB) so that its
	// transcript never drops one.
	q     []T
	head  int
	wake  chan struct{} // signalled when a value is queued or the subscription ends
	ended bool
}

// Subscribe adds a subscriber. The subscription ends when ctx is done, or
// earlier by Close.
func (b *Broker[T]) Subscribe(ctx context.Context) *Subscription[T] {
	s := &Subscription[T]{b: b, c: make(chan T, b.buffer)}
	b.mu.Lock()
	if b.closed {
		s.err = ErrClosed
		close(s.c)
		b.mu.Unlock()
		return s
	}
	b.subs[s] = struct{}{}
	b.mu.Unlock()
	s.stop = context.AfterFunc(ctx, func() { b.end(s, context.Cause(ctx)) })
	return s
}

// SubscribeFunc calls fn with each value published after it, in order, on
// a goroutine of its own, until the returned stop is called (stop waits
// for fn to return) or the subscription ends otherwise. A subscriber that
// falls behind is dropped with a warning in log (nil: slog.Default()).
func (b *Broker[T]) SubscribeFunc(fn func(T), log *slog.Logger) (stop func()) {
	if log == nil {
		log = slog.Default()
	}
	s := &Subscription[T]{b: b, wake: make(chan struct{}, 1)}
	b.mu.Lock()
	if b.closed {
		s.err, s.ended = ErrClosed, true
	} else {
		b.subs[s] = struct{}{}
	}
	b.mu.Unlock()
	done := make(chan struct{})
	go func() {
		defer close(done)
		for v := range s.All() {
			fn(v)
		}
		if errors.Is(s.Err(), ErrSlow) {
			log.Warn("event subscriber fell behind and was dropped", "buffer", b.buffer)
		}
	}()
	return func() {
		s.Close()
		<-done
	}
}

// end removes s and closes its channel, recording why. Values already
// buffered stay readable.
func (b *Broker[T]) end(s *Subscription[T], err error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.endLocked(s, err)
}

func (b *Broker[T]) endLocked(s *Subscription[T], err error) {
	if _, ok := b.subs[s]; !ok {
		return
	}
	delete(b.subs, s)
	s.err = err
	if s.c == nil {
		s.ended = true
		s.signal()
		return
	}
	close(s.c)
}

// Publish offers v to every subscriber without waiting for any of them.
// A subscriber with a full buffer is dropped.
func (b *Broker[T]) Publish(v T) {
	b.mu.Lock()
	defer b.mu.Unlock()
	for s := range b.subs {
		if s.c == nil {
			if len(s.q)-s.head >= b.buffer {
				b.dropped.Add(1)
				b.endLocked(s, ErrSlow)
				continue
			}
			s.q = append(s.q, v)
			s.signal()
			continue
		}
		select {
		case s.c <- v:
		default:
			b.dropped.Add(1)
			b.endLocked(s, ErrSlow)
		}
	}
}

// Len returns the number of current subscribers.
func (b *Broker[T]) Len() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.subs)
}

// Dropped returns how many subscribers were dropped for falling behind.
func (b *Broker[T]) Dropped() uint64 { return b.dropped.Load() }

// Close ends every subscription with ErrClosed; later subscriptions end at
// once. Publishing to a closed broker does nothing.
func (b *Broker[T]) Close() {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.closed = true
	for s := range b.subs {
		b.endLocked(s, ErrClosed)
	}
}

// C returns the channel the values arrive on. It is closed when the
// subscription ends, after the values already buffered.
func (s *Subscription[T]) C() <-chan T { return s.c }

// All returns the values as they arrive, until the subscription ends. Call
// Err afterwards to learn why it ended.
func (s *Subscription[T]) All() iter.Seq[T] {
	return func(yield func(T) bool) {
		if s.c == nil {
			for {
				v, ok := s.next()
				if !ok || !yield(v) {
					return
				}
			}
		}
		for v := range s.c {
			if !yield(v) {
				return
			}
		}
	}
}

// next waits for the next queued value of a SubscribeFunc subscription;
// it reports false once the subscription has ended and its queue is empty.
func (s *Subscription[T]) next() (T, bool) {
	for {
		s.b.mu.Lock()
		if s.head < len(s.q) {
			v := s.q[s.head]
			var zero T
			s.q[s.head] = zero
			s.head++
			if s.head == len(s.q) {
				// Empty: reuse the array, unless a burst made it large.
				s.q, s.head = s.q[:0], 0
				if cap(s.q) > 1024 {
					s.q = nil
				}
			}
			s.b.mu.Unlock()
			return v, true
		}
		ended := s.ended
		s.b.mu.Unlock()
		if ended {
			var zero T
			return zero, false
		}
		<-s.wake
	}
}

// signal wakes next without waiting; called under b.mu.
func (s *Subscription[T]) signal() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// Close ends the subscription. Values already buffered stay readable on C.
func (s *Subscription[T]) Close() {
	if s.stop != nil {
		s.stop()
	}
	s.b.end(s, nil)
}

// Err reports why the subscription ended: nil if it is live or was
// closed by Close, ErrSlow if it fell behind, ErrClosed if the broker was
// closed, or the cause of its context.
func (s *Subscription[T]) Err() error {
	s.b.mu.Lock()
	defer s.b.mu.Unlock()
	return s.err
}
