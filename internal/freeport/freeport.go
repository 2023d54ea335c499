// Package freeport picks loopback ports for servers that another process
// binds later: a Python agent server, a container, PostgreSQL, a mock.
//
// The usual way, listening on port 0 and closing, yields a port from the
// system's ephemeral range, the range every listener on port 0 and every
// outgoing connection draws from. Between the close and the other
// process's bind (seconds for a Python server under load), a test's
// httptest server can be given the same port, and the health checks meant
// for the new server reach it instead. Pick draws from below that range,
// where only explicit binds go.
package freeport

import (
	"errors"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
)

// floor is the lowest port Pick returns, above the ports well-known
// services listen on.
const floor = 10000

var (
	mu     sync.Mutex
	handed = map[int]bool{} // ports this process was given
)

// Pick returns a TCP port on 127.0.0.1 that nothing listens on now,
// outside the ephemeral range when the system leaves room for that. A
// port is not handed out twice by one process.
func Pick() (int, error) {
	lo, hi := span()
	if hi-lo < 1000 {
		// No room outside the ephemeral range: the usual way.
		return listenZero()
	}
	return pick(func() int { return lo + rand.IntN(hi-lo) })
}

// pick tries the candidates next yields.
func pick(next func() int) (int, error) {
	mu.Lock()
	defer mu.Unlock()
	for range 100 {
		p := next()
		if handed[p] {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(p)))
		if err != nil {
			continue
		}
		l.Close()
		handed[p] = true
		return p, nil
	}
	return 0, errors.New("freeport: no free port on 127.0.0.1 below the ephemeral range")
}

// Addr returns "127.0.0.1:port" for a port from Pick.
func Addr() (string, error) {
	p, err := Pick()
	if err != nil {
		return "", err
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(p)), nil
}

// span returns the ports [lo, hi) to draw from: from floor up to the
// ephemeral range, or above it when it starts too low.
func span() (lo, hi int) {
	elo, ehi := ephemeral()
	if elo-floor >= 1000 {
		return floor, elo
	}
	return max(ehi+1, floor), 65536
}

// ephemeral returns the system's ephemeral port range. Linux says it in
// /proc; elsewhere (BSDs, macOS, Windows: 49152 and up) the IANA range
// is assumed, with Linux's default low end so both are avoided.
func ephemeral() (lo, hi int) {
	b, err := os.ReadFile("/proc/sys/net/ipv4/ip_local_port_range")
	if err == nil {
		if f := strings.Fields(string(b)); len(f) == 2 {
			l, err1 := strconv.Atoi(f[0])
			h, err2 := strconv.Atoi(f[1])
			if err1 == nil && err2 == nil && l <= h {
				return l, h
			}
		}
	}
	return 32768, 65535
}

func listenZero() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
