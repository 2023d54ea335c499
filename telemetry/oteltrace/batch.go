package oteltrace

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"time"
)

// A processor takes ended spans to an exporter.
type processor interface {
	onEnd(*SpanData)
	shutdown(context.Context) error
}

// syncProcessor exports each span as it ends.
type syncProcessor struct {
	mu   sync.Mutex
	e    Exporter
	res  *Resource
	log  *slog.Logger
	done bool
}

func (p *syncProcessor) onEnd(d *SpanData) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return
	}
	if err := p.e.Export(context.Background(), p.res, []*SpanData{d}); err != nil {
		p.log.Warn("oteltrace: exporting a span", "err", err)
	}
}

func (p *syncProcessor) shutdown(ctx context.Context) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.done {
		return nil
	}
	p.done = true
	return p.e.Shutdown(ctx)
}

// batcher exports spans in batches from a goroutine of its own, as
// OpenTelemetry's batch span processor does: every OTEL_BSP_SCHEDULE_DELAY
// (5 s), or at once when OTEL_BSP_MAX_EXPORT_BATCH_SIZE (512) spans wait.
// Beyond OTEL_BSP_MAX_QUEUE_SIZE (2048) waiting spans, new ones are
// dropped (counted, and logged at shutdown): a slow collector never holds
// the agent.
type batcher struct {
	e       Exporter
	res     *Resource
	log     *slog.Logger
	delay   time.Duration
	max     int
	queue   int
	timeout time.Duration

	mu      sync.Mutex
	spans   []*SpanData
	dropped int
	closed  bool

	wake chan struct{}
	stop chan struct{}
	done chan struct{}
	once sync.Once
}

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

func newBatcher(e Exporter, res *Resource, log *slog.Logger) *batcher {
	b := &batcher{
		e: e, res: res, log: log,
		delay:   time.Duration(envInt("OTEL_BSP_SCHEDULE_DELAY", 5000)) * time.Millisecond,
		queue:   envInt("OTEL_BSP_MAX_QUEUE_SIZE", 2048),
		max:     envInt("OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512),
		timeout: time.Duration(envInt("OTEL_BSP_EXPORT_TIMEOUT", 30000)) * time.Millisecond,
		wake:    make(chan struct{}, 1),
		stop:    make(chan struct{}),
		done:    make(chan struct{}),
	}
	b.max = min(b.max, b.queue)
	go b.loop()
	return b
}

func (b *batcher) onEnd(d *SpanData) {
	b.mu.Lock()
	if b.closed || len(b.spans) >= b.queue {
		b.dropped++
		b.mu.Unlock()
		return
	}
	b.spans = append(b.spans, d)
	full := len(b.spans) >= b.max
	b.mu.Unlock()
	if full {
		select {
		case b.wake <- struct{}{}:
		default:
		}
	}
}

func (b *batcher) loop() {
	defer close(b.done)
	t := time.NewTimer(b.delay)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.wake:
		case <-t.C:
		}
		b.flush(context.Background())
		t.Reset(b.delay)
	}
}

// flush exports every waiting span, a batch at a time.
func (b *batcher) flush(ctx context.Context) error {
	var last error
	for {
		b.mu.Lock()
		n := min(len(b.spans), b.max)
		batch := b.spans[:n:n]
		b.spans = b.spans[n:]
		if len(b.spans) == 0 {
			b.spans = nil
		}
		b.mu.Unlock()
		if n == 0 {
			return last
		}
		ectx, cancel := context.WithTimeout(ctx, b.timeout)
		err := b.e.Export(ectx, b.res, batch)
		cancel()
		if err != nil {
			last = err
			b.log.Warn("oteltrace: exporting spans", "spans", n, "err", err)
			if ctx.Err() != nil {
				return err
			}
		}
	}
}

func (b *batcher) shutdown(ctx context.Context) error {
	var err error
	b.once.Do(func() {
		close(b.stop)
		<-b.done
		b.mu.Lock()
		b.closed = true
		dropped := b.dropped
		b.mu.Unlock()
		err = b.flush(ctx)
		if dropped > 0 {
			b.log.Warn("oteltrace: spans dropped while the exporter fell behind", "spans", dropped)
		}
		if serr := b.e.Shutdown(ctx); serr != nil && err == nil {
			err = serr
		}
		if err != nil {
			err = fmt.Errorf("oteltrace: %w", err)
		}
	})
	return err
}
