package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/internal/proctree"
)

// crowd runs c.Concurrent conversations at once on side's agent server,
// each c.CrowdSteps think steps on a model answering in c.Latency, and
// adds the rows: wall time, steps per second, the agent's own time per
// step (from a reply to the next request, p50 and p99), peak RSS and RSS
// per running conversation. It fails, leaving the side's cells empty, when
// a conversation fails or the whole does not finish in time.
func (r *runner) crowd(ctx context.Context, t *table, side string) error {
	dir, err := r.dir("crowd")
	if err != nil {
		return err
	}
	p, err := r.startServer(ctx, side, dir, r.c.Concurrent)
	if err != nil {
		return err
	}
	defer p.stop()
	return r.crowdOn(ctx, t, side, p)
}

// crowdOn runs the crowd job on the running server p, which may hold
// conversations already (none of them running).
func (r *runner) crowdOn(ctx context.Context, t *table, side string, p *serverProc) error {
	c := r.c
	n := c.Concurrent
	var err error
	// The conversations the server holds already, finished or in error.
	var finished0, failed0 int
	if err := call(ctx, "GET", p.url+"/api/conversations/count?status=finished", nil, &finished0); err != nil {
		return err
	}
	if err := call(ctx, "GET", p.url+"/api/conversations/count?status=error", nil, &failed0); err != nil {
		return err
	}
	idle := r.settledRSS(p.pid)
	jobs := make([]*job, n)
	tasks := make([]string, n)
	for i := range n {
		tasks[i] = r.task("crowd")
		jobs[i] = r.model.expect(tasks[i], "think", c.CrowdSteps)
		jobs[i].delay = c.Latency
	}
	wss := make([]string, n)
	for i := range n {
		if wss[i], err = r.dir("ws"); err != nil {
			return err
		}
	}
	// The whole has n × (steps+1) replies of c.Latency to wait for, in
	// parallel; far more than that is a server that does not keep up.
	limit := 10*time.Minute + time.Duration(c.CrowdSteps+1)*c.Latency*4
	ctx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()

	var peak int64
	stopWatch := make(chan struct{})
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		tk := time.NewTicker(200 * time.Millisecond)
		defer tk.Stop()
		for {
			peak = max(peak, proctree.RSS(p.pid))
			select {
			case <-stopWatch:
				return
			case <-tk.C:
			}
		}
	}()
	start := time.Now()
	ids := make([]string, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	sem := make(chan struct{}, 32) // a client's connection pool
	for i := range n {
		wg.Go(func() {
			sem <- struct{}{}
			defer func() { <-sem }()
			ids[i], errs[i] = createConversation(ctx, p.url, r.modelURL, wss[i], tasks[i])
		})
	}
	wg.Wait()
	if err := firstErr(errs); err != nil {
		close(stopWatch)
		<-watched
		return fmt.Errorf("creating %d running conversations: %w", n, err)
	}
	created := time.Since(start)
	// Done when every conversation is finished; a conversation in error
	// fails the job.
	for {
		var finished, failed int
		if err := call(ctx, "GET", p.url+"/api/conversations/count?status=finished", nil, &finished); err != nil {
			close(stopWatch)
			<-watched
			return fmt.Errorf("after %s: %w\n%s", time.Since(start).Round(time.Second), err, p.out.tail())
		}
		finished -= finished0
		if err := call(ctx, "GET", p.url+"/api/conversations/count?status=error", nil, &failed); err == nil && failed > failed0 {
			failed -= failed0
			close(stopWatch)
			<-watched
			return fmt.Errorf("%d of %d conversations ended in error (%d finished) after %s", failed, n, finished, time.Since(start).Round(time.Second))
		}
		if finished == n {
			break
		}
		select {
		case <-ctx.Done():
			close(stopWatch)
			<-watched
			return fmt.Errorf("%d of %d conversations finished in %s", finished, n, limit)
		case <-time.After(250 * time.Millisecond):
		}
	}
	wall := time.Since(start)
	close(stopWatch)
	<-watched
	var over []float64
	r.model.mu.Lock()
	for _, j := range jobs {
		for _, d := range j.overheads {
			over = append(over, float64(d)/1e6)
		}
	}
	r.model.mu.Unlock()
	slices.Sort(over)
	row := fmt.Sprintf("server: %d conversations running at once, %d steps each, model latency %s", n, c.CrowdSteps, c.Latency)
	t.add(row+": wall (s)", side, wall.Seconds())
	t.add(row+": steps per second", side, float64(n*(c.CrowdSteps+1))/wall.Seconds())
	t.add(row+": agent's time per step p50 (ms)", side, pct(over, 0.50))
	t.add(row+": agent's time per step p99 (ms)", side, pct(over, 0.99))
	t.add(row+": peak RSS (MB)", side, float64(peak)/1e6)
	t.add(row+": RSS per running conversation (MB)", side, float64(peak-idle)/float64(n)/1e6)
	fmt.Fprintf(c.Log, "%s crowd: created in %s, all finished in %s, %d step samples\n", side, created.Round(time.Millisecond), wall.Round(time.Millisecond), len(over))
	return nil
}

// pct returns the q-quantile of sorted v.
func pct(v []float64, q float64) float64 {
	if len(v) == 0 {
		return 0
	}
	return v[min(len(v)-1, int(q*float64(len(v))))]
}

func firstErr(errs []error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// startup stores c.Stored conversations (copies of one that ran, written
// by gohands in the reference's layout), starts side's server over them,
// and adds the rows: the time to answer /health, then to list the first
// page of 100, and the RSS once listed.
func (r *runner) startup(ctx context.Context, t *table, side string) error {
	p, err := r.startupServer(ctx, t, side, 10)
	if err != nil {
		return err
	}
	p.stop()
	return nil
}

// startupServer is the startup job on a server allowing maxRuns
// conversations to run at once, which it leaves running.
func (r *runner) startupServer(ctx context.Context, t *table, side string, maxRuns int) (*serverProc, error) {
	c := r.c
	tmpl, err := r.storedTemplate(ctx)
	if err != nil {
		return nil, fmt.Errorf("writing the conversation to copy: %w", err)
	}
	dir, err := r.dir("startup")
	if err != nil {
		return nil, err
	}
	convs := filepath.Join(dir, "workspace", "conversations")
	if err := cloneConversations(tmpl, convs, c.Stored); err != nil {
		return nil, err
	}
	start := time.Now()
	p, err := r.startServer(ctx, side, dir, maxRuns)
	if err != nil {
		return nil, err
	}
	healthy := time.Since(start)
	if err := r.listPages(ctx, t, side, p, start, healthy); err != nil {
		p.stop()
		return nil, err
	}
	return p, nil
}

// listPages lists the first pages of the server p started at start and
// healthy after that, and adds the startup job's rows.
func (r *runner) listPages(ctx context.Context, t *table, side string, p *serverProc, start time.Time, healthy time.Duration) error {
	c := r.c
	var page struct {
		Items      []any   `json:"items"`
		NextPageID *string `json:"next_page_id"`
	}
	if err := call(ctx, "GET", p.url+"/api/conversations/search?limit=100", nil, &page); err != nil {
		return err
	}
	listed := time.Since(start)
	if len(page.Items) != min(100, c.Stored) {
		return fmt.Errorf("the first page lists %d conversations, want %d", len(page.Items), min(100, c.Stored))
	}
	// The first ten pages again, now that the server is up: a page
	// further on should cost what the first does.
	pages := 0
	t0 := time.Now()
	for q := "limit=100"; pages < 10; pages++ {
		page.NextPageID = nil
		if err := call(ctx, "GET", p.url+"/api/conversations/search?"+q, nil, &page); err != nil {
			return err
		}
		if page.NextPageID == nil {
			pages++
			break
		}
		q = "limit=100&page_id=" + *page.NextPageID
	}
	perPage := time.Since(t0) / time.Duration(pages)
	row := fmt.Sprintf("server: start-up over %d stored conversations", c.Stored)
	t.add(row+": to /health (ms)", side, float64(healthy)/1e6)
	t.add(row+": to the first page of 100 listed (ms)", side, float64(listed)/1e6)
	t.add(row+": each of the first pages of 100 (ms)", side, float64(perPage)/1e6)
	t.add(row+": RSS (MB)", side, float64(r.settledRSS(p.pid))/1e6)
	return nil
}

// storedTemplate returns the directory of one conversation that ran two
// think steps, written once by gohands' server.
func (r *runner) storedTemplate(ctx context.Context) (string, error) {
	if r.template != "" {
		return r.template, nil
	}
	dir, err := r.dir("template")
	if err != nil {
		return "", err
	}
	p, err := r.startServer(ctx, "gohands", dir, 10)
	if err != nil {
		return "", err
	}
	task := r.task("stored")
	r.model.expect(task, "think", 2)
	ws, err := r.dir("ws")
	if err != nil {
		p.stop()
		return "", err
	}
	id, err := createConversation(ctx, p.url, r.modelURL, ws, task)
	for err == nil {
		var info struct {
			Status string `json:"execution_status"`
		}
		if err = call(ctx, "GET", p.url+"/api/conversations/"+id, nil, &info); err == nil && info.Status == "finished" {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.stop()
	if err != nil {
		return "", err
	}
	r.template = filepath.Join(dir, "workspace", "conversations", strings.ReplaceAll(id, "-", ""))
	return r.template, nil
}

// cloneConversations writes n copies of the conversation in tmpl under
// dir, each with an id of its own.
func cloneConversations(tmpl, dir string, n int) error {
	hexID := filepath.Base(tmpl)
	dashed := hexID[:8] + "-" + hexID[8:12] + "-" + hexID[12:16] + "-" + hexID[16:20] + "-" + hexID[20:]
	files := map[string][]byte{}
	err := filepath.WalkDir(tmpl, func(path string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(tmpl, path)
		if strings.HasSuffix(rel, ".lock") {
			return nil
		}
		b, err := os.ReadFile(path)
		files[rel] = b
		return err
	})
	if err != nil {
		return err
	}
	for i := range n {
		nh := fmt.Sprintf("%08x%s", i, hexID[8:])
		nd := nh[:8] + dashed[8:]
		base := filepath.Join(dir, nh)
		for rel, b := range files {
			path := filepath.Join(base, rel)
			if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
				return err
			}
			s := strings.ReplaceAll(string(b), filepath.Dir(tmpl), dir) // persistence_dir
			s = strings.ReplaceAll(strings.ReplaceAll(s, dashed, nd), hexID, nh)
			if err := os.WriteFile(path, []byte(s), 0o644); err != nil {
				return err
			}
		}
	}
	return nil
}
