package freeport

import (
	"net"
	"strconv"
	"testing"
)

func TestPickOutsideEphemeralRange(t *testing.T) {
	elo, ehi := ephemeral()
	seen := map[int]bool{}
	for range 50 {
		p, err := Pick()
		if err != nil {
			t.Fatal(err)
		}
		if p >= elo && p <= ehi {
			t.Fatalf("port %d is in the ephemeral range %d-%d", p, elo, ehi)
		}
		if seen[p] {
			t.Fatalf("port %d handed out twice", p)
		}
		seen[p] = true
		// Nothing listens there: it can be bound.
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			t.Fatalf("port %d: %v", p, err)
		}
		l.Close()
	}
}

// A listener on port 0 is never given a port Pick could return.
func TestListenZeroNeverPicked(t *testing.T) {
	lo, hi := span()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		p := l.Addr().(*net.TCPAddr).Port
		l.Close()
		if p >= lo && p < hi {
			t.Fatalf("a port-0 listener got %d, inside Pick's span %d-%d", p, lo, hi)
		}
	}
}

// A port something listens on, or one handed out before, is passed over.
func TestPickSkipsTaken(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	taken := l.Addr().(*net.TCPAddr).Port
	given, err := Pick()
	if err != nil {
		t.Fatal(err)
	}
	free, err := Pick()
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	delete(handed, free)
	mu.Unlock()
	candidates := []int{taken, given, free}
	p, err := pick(func() int { c := candidates[0]; candidates = candidates[1:]; return c })
	if err != nil {
		t.Fatal(err)
	}
	if p != free {
		t.Fatalf("pick = %d, want %d (%d is listened on, %d was handed out)", p, free, taken, given)
	}
}
