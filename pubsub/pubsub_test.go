package pubsub_test

import (
	"context"
	"errors"
	"log/slog"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/pubsub"
)

func TestDeliversInOrder(t *testing.T) {
	b := pubsub.NewBroker[int](&pubsub.Options{Buffer: 8})
	s1 := b.Subscribe(context.Background())
	s2 := b.Subscribe(context.Background())
	for i := range 5 {
		b.Publish(i)
	}
	s1.Close()
	s2.Close()
	for _, s := range []*pubsub.Subscription[int]{s1, s2} {
		if got := slices.Collect(s.All()); !slices.Equal(got, []int{0, 1, 2, 3, 4}) {
			t.Errorf("got %v", got)
		}
		if err := s.Err(); err != nil {
			t.Errorf("Err after Close = %v", err)
		}
	}
	if b.Len() != 0 {
		t.Errorf("Len = %d after both closed", b.Len())
	}
}

// A subscriber that never reads does not block Publish: it is dropped once
// its buffer is full, keeps what was buffered, and can tell why it ended.
// The other subscriber gets everything.
func TestStalledSubscriberIsDropped(t *testing.T) {
	b := pubsub.NewBroker[int](&pubsub.Options{Buffer: 3})
	stalled := b.Subscribe(context.Background())
	live := b.Subscribe(context.Background())
	var got []int
	for i := range 100 {
		b.Publish(i) // would deadlock here if Publish waited for stalled
		got = append(got, <-live.C())
	}
	if len(got) != 100 {
		t.Fatalf("live subscriber got %d values", len(got))
	}
	if kept := slices.Collect(stalled.All()); !slices.Equal(kept, []int{0, 1, 2}) {
		t.Errorf("stalled subscriber kept %v, want its buffer [0 1 2]", kept)
	}
	if err := stalled.Err(); !errors.Is(err, pubsub.ErrSlow) {
		t.Errorf("stalled Err = %v, want ErrSlow", err)
	}
	if err := live.Err(); err != nil {
		t.Errorf("live Err = %v", err)
	}
	if n := b.Dropped(); n != 1 {
		t.Errorf("Dropped = %d, want 1", n)
	}
	if n := b.Len(); n != 1 {
		t.Errorf("Len = %d, want 1", n)
	}
}

func TestContextEndsSubscription(t *testing.T) {
	b := pubsub.NewBroker[string](nil)
	ctx, cancel := context.WithCancel(context.Background())
	s := b.Subscribe(ctx)
	b.Publish("a")
	cancel()
	if got := slices.Collect(s.All()); !slices.Equal(got, []string{"a"}) {
		t.Errorf("got %v", got)
	}
	if err := s.Err(); !errors.Is(err, context.Canceled) {
		t.Errorf("Err = %v, want context.Canceled", err)
	}
	b.Publish("b") // no subscriber left; must not panic on the closed channel
}

func TestClose(t *testing.T) {
	b := pubsub.NewBroker[int](nil)
	s := b.Subscribe(context.Background())
	b.Publish(1)
	b.Close()
	b.Publish(2)
	if got := slices.Collect(s.All()); !slices.Equal(got, []int{1}) {
		t.Errorf("got %v", got)
	}
	if err := s.Err(); !errors.Is(err, pubsub.ErrClosed) {
		t.Errorf("Err = %v, want ErrClosed", err)
	}
	late := b.Subscribe(context.Background())
	if _, ok := <-late.C(); ok || !errors.Is(late.Err(), pubsub.ErrClosed) {
		t.Errorf("subscription to a closed broker: open %v, Err %v", ok, late.Err())
	}
	late.Close() // harmless
}

// SubscribeFunc delivers in order on its own goroutine, stop waits for the
// callback, and a subscriber that falls behind is dropped with a warning.
func TestSubscribeFunc(t *testing.T) {
	b := pubsub.NewBroker[int](&pubsub.Options{Buffer: 2})
	var logs strings.Builder
	log := slog.New(slog.NewTextHandler(&logs, nil))
	got := make(chan int, 10)
	stop := b.SubscribeFunc(func(v int) { got <- v }, log)
	for i := range 3 {
		b.Publish(i)
		if v := <-got; v != i {
			t.Fatalf("got %d, want %d", v, i)
		}
	}
	stop()
	if strings.Contains(logs.String(), "fell behind") {
		t.Errorf("a stopped subscriber was reported slow: %s", logs.String())
	}

	release := make(chan struct{})
	stop = b.SubscribeFunc(func(int) { <-release }, log)
	for i := range 10 {
		b.Publish(i) // the first blocks the callback, the rest overflow the buffer
	}
	close(release)
	stop()
	if !strings.Contains(logs.String(), "fell behind") || !strings.Contains(logs.String(), "buffer=2") {
		t.Errorf("the slow subscriber was not reported: %q", logs.String())
	}
}

// A SubscribeFunc subscriber's buffer takes memory only as far as it falls
// behind: a large one (the command line's 1<<16 events) is not allocated
// up front, and everything queued while the callback is busy arrives, in
// order, without the subscriber being dropped.
func TestSubscribeFuncBufferGrowsAsNeeded(t *testing.T) {
	const buffer = 1 << 16
	b := pubsub.NewBroker[int](&pubsub.Options{Buffer: buffer})
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	release := make(chan struct{})
	var got []int
	stop := b.SubscribeFunc(func(v int) {
		<-release
		got = append(got, v)
	}, nil)
	runtime.ReadMemStats(&after)
	if n := after.TotalAlloc - before.TotalAlloc; n > buffer {
		t.Errorf("SubscribeFunc with a buffer of %d allocated %d bytes up front", buffer, n)
	}
	const n = 5000
	for i := range n {
		b.Publish(i)
	}
	close(release)
	stop()
	if len(got) != n || !slices.IsSorted(got) || got[0] != 0 {
		t.Errorf("got %d values (first %v), want 0..%d in order", len(got), got[:min(len(got), 3)], n-1)
	}
	if d := b.Dropped(); d != 0 {
		t.Errorf("Dropped = %d", d)
	}

	// A broker closed before the subscription ends it at once.
	b.Close()
	called := false
	b.SubscribeFunc(func(int) { called = true }, nil)()
	if called {
		t.Error("a subscriber to a closed broker was called")
	}
}
