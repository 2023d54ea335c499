package server

import (
	"net"
	"net/http"
	"os"
	"strings"
	"sync"

	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/tools/childconversation"
)

// internalURL hands the server over to the start_child_conversation tool
// (Options.InternalURL): set in New, or learnt from the first request's
// listener when neither the option nor $OH_INTERNAL_SERVER_URL names one.
type internalURL struct {
	once sync.Once
	mu   sync.Mutex
	set  bool
	undo func()
	drop bool // released: hand nothing over any more
}

// use hands base over with the server's first session key.
func (u *internalURL) use(s *Server, base string) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.set || u.drop {
		return
	}
	var key string
	if len(s.opts.SessionAPIKeys) > 0 {
		key = s.opts.SessionAPIKeys[0]
	}
	u.set, u.undo = true, childconversation.UseServer(strings.TrimRight(base, "/"), key)
}

// learn takes the listener of r as the server's URL, the first time,
// unless one was given or is in the environment.
func (u *internalURL) learn(s *Server, r *http.Request) {
	u.once.Do(func() {
		if s.opts.InternalURL != "" || os.Getenv(secret.InternalServerURLEnv) != "" {
			return
		}
		addr, ok := r.Context().Value(http.LocalAddrContextKey).(net.Addr)
		if !ok || addr.Network() != "tcp" {
			return // a Unix socket, or a handler called without a server
		}
		scheme := "http"
		if r.TLS != nil {
			scheme = "https"
		}
		u.use(s, scheme+"://"+addr.String())
	})
}

// release takes the hand-over back (Close).
func (u *internalURL) release() {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.drop = true
	if u.undo != nil {
		u.undo()
		u.undo = nil
	}
}
