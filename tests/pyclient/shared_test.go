package pyclient_test

import (
	"os"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/freeport"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
)

// The reference's servers take seconds of CPU to start (the import of
// openhands.agent_server.api alone: 35 s of CPU at load 30 for 1.58.2;
// minutes of wall time): the tests that only work within conversations of
// their own share one 1.58.2 server, started by the first of them to ask
// and stopped when the package's tests are done (TestMain).
//
// A test may use a shared server when it creates its own conversations
// and reads only them, sets no environment of the server's, needs no
// fresh server (conversation counts or lists, settings, profiles, secrets
// of the server's, fixed conversation ids) and does not stop or kill it.
// Anything else starts its own with startReferenceServer.
//
// The programs of testdata built on client.py (TestReferenceServer158)
// keep a server of their own: the reference's client gives a workspace
// command only seconds to answer, which a shared server busy with other
// tests' conversations at load 30 did not (httpx.ReadTimeout).
var sharedRef158 sharedServer

// sharedReference158 returns the reference 1.58.2 agent server the
// package's tests share (see above), starting it on the first call. It
// takes the session key apiKey, as startReferenceServer's.
func sharedReference158(t testing.TB) *server {
	t.Helper()
	return sharedRef158.get(t, testenv.Reference158Python(t))
}

// sharedServer is a reference server started once for the tests.
type sharedServer struct {
	once sync.Once
	srv  *server
	home string // its HOME, with its tmux server
	err  error
}

func (s *sharedServer) get(t testing.TB, py string) *server {
	t.Helper()
	s.once.Do(func() {
		dir, err := os.MkdirTemp("", "pyclient-shared-")
		if err != nil {
			s.err = err
			return
		}
		shared.add(func() error { return os.RemoveAll(dir) })
		s.home = dir + "/home"
		if s.err = os.Mkdir(s.home, 0o755); s.err != nil {
			return
		}
		shared.add(func() error { refenv.Cleanup(s.home); return nil })
		port, err := freeport.Pick()
		if err != nil {
			s.err = err
			return
		}
		// The hang guard of startReferenceServer's.
		s.srv, s.err = start("reference (shared)",
			[]string{py, "-m", "openhands.agent_server", "--host", "127.0.0.1", "--port", strconv.Itoa(port)},
			refenv.Env(s.home, "OH_SESSION_API_KEYS_0="+apiKey, "OH_MAX_CONCURRENT_RUNS=100"), dir, port, 50*time.Millisecond, 8*time.Minute)
		if s.srv != nil {
			shared.add(s.srv.stop)
		}
	})
	if s.err != nil {
		t.Fatal(s.err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("shared reference server log (tail; other tests' lines too):\n%s", s.srv.logTail())
		}
	})
	return s.srv
}

// shared is what TestMain undoes when the tests are done, in reverse.
var shared undoList

type undoList struct {
	mu   sync.Mutex
	undo []func() error
}

func (u *undoList) add(f func() error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.undo = append(u.undo, f)
}

// run undoes everything added, last first, and returns the first error.
func (u *undoList) run() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	var first error
	for i := len(u.undo) - 1; i >= 0; i-- {
		if err := u.undo[i](); err != nil && first == nil {
			first = err
		}
	}
	u.undo = nil
	return first
}
