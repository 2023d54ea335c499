package conversation

import (
	"runtime"
	"slices"
	"sync"
	"testing"
)

func TestFIFOMutexOrder(t *testing.T) {
	var m fifoMutex
	m.Lock()
	var order []int
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			m.Lock()
			order = append(order, i) // guarded by m
			m.Unlock()
		})
		// Start the next waiter only once this one is queued.
		for {
			m.mu.Lock()
			n := len(m.waiters)
			m.mu.Unlock()
			if n == i+1 {
				break
			}
			runtime.Gosched()
		}
	}
	m.Unlock()
	wg.Wait()
	if !slices.IsSorted(order) || len(order) != 50 {
		t.Fatalf("lock granted out of order: %v", order)
	}
}

func TestFIFOMutexExcludes(t *testing.T) {
	var m fifoMutex
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
