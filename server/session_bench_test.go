package server_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"

	"github.com/gohands/gohands/llm/llmtest"
)

// BenchmarkSessionSocketFanout: 100 clients on one conversation's
// /sockets/session, live; four senders post b.N user messages (no run);
// every client must get each one as a durable frame. events/s is the
// frames delivered per second across all clients (b.N × 100 / time), and
// no client may be dropped as a slow consumer.
func BenchmarkSessionSocketFanout(b *testing.B) {
	const clients, senders = 100, 4
	ts := newTestServer(b, nil)
	var info map[string]any
	ts.must(201, "POST", "/api/conversations", ts.startBody(llmtest.NewChat(b), nil), &info)
	id := info["id"].(string)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	conns := make([]*websocket.Conn, clients)
	for i := range conns {
		c, err := dial(b, ts, "/sockets/session/"+id)
		if err != nil {
			b.Fatal(err)
		}
		defer c.CloseNow()
		// Live: the sync frame, then the state snapshot.
		for range 2 {
			if _, _, err := c.Read(ctx); err != nil {
				b.Fatal(err)
			}
		}
		conns[i] = c
	}
	msg := []byte(`{"role":"user","content":[{"type":"text","text":"fan out"}],"run":false}`)
	post := func() error {
		resp, err := http.Post(ts.http.URL+"/api/conversations/"+id+"/events", "application/json", bytes.NewReader(msg))
		if err != nil {
			return err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 {
			return fmt.Errorf("POST events: %d", resp.StatusCode)
		}
		return nil
	}
	b.ResetTimer()
	start := time.Now()
	var readers sync.WaitGroup
	errs := make(chan error, clients+senders)
	for _, c := range conns {
		readers.Go(func() {
			for got := 0; got < b.N; {
				_, data, err := c.Read(ctx)
				if err != nil {
					errs <- err
					return
				}
				var f struct {
					Type  string `json:"type"`
					Event struct {
						Kind string `json:"kind"`
					} `json:"event"`
				}
				if json.Unmarshal(data, &f) == nil && f.Type == "durable" && f.Event.Kind == "MessageEvent" {
					got++
				}
			}
		})
	}
	var sent sync.WaitGroup
	for s := range senders {
		sent.Go(func() {
			for i := s; i < b.N; i += senders {
				if err := post(); err != nil {
					errs <- err
					cancel() // the readers wait no more
					return
				}
			}
		})
	}
	sent.Wait()
	readers.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	close(errs)
	for err := range errs {
		b.Fatal(err)
	}
	b.ReportMetric(float64(b.N)*clients/elapsed.Seconds(), "events/s")
}
