package server

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
)

// WebhookSpec is the reference's WebhookSpec: events are POSTed in
// batches, as a JSON list, to {BaseURL}/events/{conversation id hex}, and
// conversation info to {BaseURL}/conversations.
type WebhookSpec struct {
	BaseURL string            `json:"base_url"`
	Headers map[string]string `json:"headers,omitempty"`
	// EventBufferSize events are sent at once (default 5).
	EventBufferSize int `json:"event_buffer_size,omitempty"`
	// FlushDelay sends a smaller batch after this many seconds without a
	// new event (default 30).
	FlushDelay float64 `json:"flush_delay,omitempty"`
	// NumRetries more attempts follow a failed post (default 3),
	// RetryDelay seconds apart (default 5).
	NumRetries *int `json:"num_retries,omitempty"`
	RetryDelay *int `json:"retry_delay,omitempty"`
	// MaxQueueSize bounds the events waiting; the oldest are dropped
	// (default 1000).
	MaxQueueSize int `json:"max_queue_size,omitempty"`
	// SessionAPIKey, if set, is sent as X-Session-API-Key.
	SessionAPIKey string `json:"-"`
}

type webhook struct {
	spec   WebhookSpec
	log    *slog.Logger
	client *http.Client

	mu      sync.Mutex
	queue   map[string][]json.RawMessage // conversation hex id → events
	total   int
	infos   []announcement
	wake    chan struct{}
	stop    chan struct{}
	done    chan struct{}
	dropped int
}

func newWebhook(spec WebhookSpec, log *slog.Logger) *webhook {
	if spec.EventBufferSize <= 0 {
		spec.EventBufferSize = 5
	}
	if spec.FlushDelay <= 0 {
		spec.FlushDelay = 30
	}
	if spec.NumRetries == nil {
		n := 3
		spec.NumRetries = &n
	}
	if spec.RetryDelay == nil {
		n := 5
		spec.RetryDelay = &n
	}
	if spec.MaxQueueSize <= 0 {
		spec.MaxQueueSize = 1000
	}
	h := &webhook{
		spec: spec, log: log, client: &http.Client{Timeout: 30 * time.Second},
		queue: map[string][]json.RawMessage{},
		wake:  make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}),
	}
	go h.loop()
	return h
}

func (h *webhook) addEvent(convID string, data []byte) {
	id := hexID(convID)
	h.mu.Lock()
	if h.total >= h.spec.MaxQueueSize {
		// Drop the oldest event of the largest queue.
		var big string
		for k, v := range h.queue {
			if len(v) > len(h.queue[big]) {
				big = k
			}
		}
		h.queue[big] = h.queue[big][1:]
		h.total--
		h.dropped++
	}
	h.queue[id] = append(h.queue[id], data)
	h.total++
	h.mu.Unlock()
	h.kick()
}

// announcement is a conversation's info waiting to be posted; done is
// closed once it was (or given up on).
type announcement struct {
	c    *conv
	done chan struct{}
}

// addConversation queues c's info; the channel is closed once it has been
// posted, or given up on.
func (h *webhook) addConversation(c *conv) <-chan struct{} {
	a := announcement{c, make(chan struct{})}
	h.mu.Lock()
	h.infos = append(h.infos, a)
	h.mu.Unlock()
	h.kick()
	return a.done
}

// kick wakes the sender, which sends the full batches and restarts its
// flush timer.
func (h *webhook) kick() {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

func (h *webhook) loop() {
	defer close(h.done)
	delay := time.Duration(h.spec.FlushDelay * float64(time.Second))
	timer := time.NewTimer(delay)
	defer timer.Stop()
	for {
		flushAll := false
		select {
		case <-h.stop:
			h.flush(true)
			return
		case <-h.wake:
		case <-timer.C:
			flushAll = true
		}
		h.flush(flushAll)
		if !timer.Stop() {
			select {
			case <-timer.C:
			default:
			}
		}
		timer.Reset(delay)
	}
}

// flush sends the full batches, or every queued event when all is set,
// and the queued conversation infos.
func (h *webhook) flush(all bool) {
	h.mu.Lock()
	batches := map[string][]json.RawMessage{}
	for id, evs := range h.queue {
		if all || len(evs) >= h.spec.EventBufferSize {
			batches[id] = evs
			delete(h.queue, id)
			h.total -= len(evs)
		}
	}
	infos := h.infos
	h.infos = nil
	h.mu.Unlock()
	base := strings.TrimRight(h.spec.BaseURL, "/")
	for id, evs := range batches {
		body, _ := json.Marshal(evs)
		h.post(base+"/events/"+id, body)
	}
	for _, a := range infos {
		if info, err := a.c.info(false); err == nil {
			h.post(base+"/conversations", info)
		}
		close(a.done)
	}
}

// post sends body with retries.
func (h *webhook) post(url string, body []byte) {
	for attempt := 0; attempt <= *h.spec.NumRetries; attempt++ {
		if attempt > 0 {
			select {
			case <-time.After(time.Duration(*h.spec.RetryDelay) * time.Second):
			case <-h.stop:
				if attempt > 1 {
					return
				}
			}
		}
		err := h.postOnce(context.Background(), url, body)
		if err == nil {
			return
		}
		h.log.Warn("webhook post failed", "url", url, "attempt", attempt+1, "err", err)
	}
	h.log.Error("webhook post abandoned", "url", url, "attempts", *h.spec.NumRetries+1)
}

// oauthWriteBackTimeout bounds the post of an MCP server's refreshed
// OAuth state (the reference's 10 seconds).
const oauthWriteBackTimeout = 10 * time.Second

// postMCPOAuthState posts body, the refreshed OAuth state of an MCP
// server a conversation's agent carries inline (mcp.OAuthWriteBack), to
// {BaseURL}/mcp-oauth-state, as the reference's agent server does: once,
// at once, a failure only logged (the conversation keeps using the new
// tokens). The body holds tokens in clear: it is never logged.
func (h *webhook) postMCPOAuthState(serverURL string, body []byte) {
	ctx, cancel := context.WithTimeout(context.Background(), oauthWriteBackTimeout)
	defer cancel()
	url := strings.TrimRight(h.spec.BaseURL, "/") + "/mcp-oauth-state"
	if err := h.postOnce(ctx, url, body); err != nil {
		h.log.Warn("could not write back an MCP server's OAuth state", "server", serverURL, "url", url, "err", err)
	}
}

func (h *webhook) postOnce(ctx context.Context, url string, body []byte) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	for k, v := range h.spec.Headers {
		req.Header.Set(k, v)
	}
	if h.spec.SessionAPIKey != "" {
		req.Header.Set("X-Session-API-Key", h.spec.SessionAPIKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return fmt.Errorf("status %s", resp.Status)
	}
	return nil
}

// close sends what is queued and stops, within ctx.
func (h *webhook) close(ctx context.Context) {
	close(h.stop)
	select {
	case <-h.done:
	case <-ctx.Done():
	}
}
