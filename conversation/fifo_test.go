package conversation

import (
	"slices"
	"sync"
	"testing"
	"testing/synctest"
)

func TestFIFOMutexOrder(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		m := newFIFOMutex()
		m.Lock()
		var order []int
		var wg sync.WaitGroup
		for i := range 50 {
			wg.Go(func() {
				m.Lock()
				order = append(order, i) // guarded by m
				m.Unlock()
			})
			// Start the next waiter only once this one is queued: every
			// goroutine of the bubble but this one is blocked in Lock.
			synctest.Wait()
		}
		m.Unlock()
		wg.Wait()
		if !slices.IsSorted(order) || len(order) != 50 {
			t.Fatalf("lock granted out of order: %v", order)
		}
	})
}

func TestFIFOMutexExcludes(t *testing.T) {
	m := newFIFOMutex()
	n := 0
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			for range 1000 {
				m.Lock()
				n++
				m.Unlock()
			}
		})
	}
	wg.Wait()
	if n != 8000 {
		t.Fatalf("n = %d", n)
	}
}

func TestFIFOMutexUnlockUnlocked(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("Unlock of an unlocked fifoMutex did not panic")
		}
	}()
	newFIFOMutex().Unlock()
}
