// Package remote runs conversations on an agent server: gohands serve or
// the reference's openhands-agent-server. [Conversation] implements
// conversation.Conversation over the server's REST API and its event
// socket, so a program drives a remote agent as it drives a local one.
//
// The client loses nothing when its socket drops: it reconnects with
// backoff and, on every (re)connect, reads the events it missed from
// events/search before taking new ones from the socket. Callbacks get every
// persisted event once, in the server's log order. A socket refused for its
// session key (close code 4001) or its conversation (4004) is not retried:
// the next call returns the error.
//
// Deviations from the reference's client: Pause is the server's pause (the
// step in progress finishes); Interrupt is its interrupt. Run ends when the
// server says the run ended, by a full-state snapshot, a status update or
// its REST state, and returns only after every event the server logged up
// to then has reached the callbacks.
package remote
