// Command compare runs the same jobs through gohands and the Python
// reference (openhands-sdk 1.58.2, or 1.43.1), alternating A B A B, and prints one
// Markdown table of medians and ratios. scripts/compare.sh builds gohands,
// finds the reference's venv and runs it:
//
//	compare -gohands ./gohands -python venv/bin/python [-steps 200] [-runs 3]
//
// Both sides talk to the same scripted model: llmtest's server, started
// in this process. It answers by the task (the first user message) and
// counts the agent's calls itself, so a job has exactly -steps steps even
// when the condenser (both default agents have one) shortens the history;
// a request offering no tools (a summary, a title) gets a short text.
//
// The jobs: start-up (one model call, then exit); -steps think steps;
// -steps terminal steps (wall, CPU and peak RSS of the process); full
// replay of a conversation the reference wrote (its event log opened and
// every event decoded) and resume of it to the first model request, both
// timed inside a fresh process after its start-up on each side (gohands'
// is a child of this program); and on each agent server, -conversations
// conversations created one after another and the memory each adds (after
// one unmeasured first conversation); -concurrent conversations running at
// once, -crowd-steps think steps each on a model answering in -latency
// (wall, steps per second, the agent's own time per step from a reply to
// the next request, p50 and p99, peak RSS and RSS per running
// conversation; a side that cannot finish them gets a note saying where it
// stopped instead of figures); and a server started over -stored copies of
// a conversation (to /health, to its first page of 100 listed, each page
// after, RSS); and, gohands only, two nodes on one PostgreSQL server
// (started here from its binaries, as tests/cluster does), node A killed
// with SIGKILL after finishing -cluster-conversations conversations, and
// their reads through node B (answered, latency). -jobs and -sides pick
// what runs.
package main

import (
	"cmp"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/llm/llmtest"

	"golang.org/x/sys/unix"
)

//go:embed reference.py
var referenceScript []byte

// config is one comparison.
type config struct {
	Gohands       string // the gohands binary
	Python        string // the reference venv's python
	RefVersion    string // its openhands-sdk version, for the table
	Steps         int    // steps of the think and terminal jobs
	Runs          int    // runs of each job on each side (the median is shown)
	ReplaySteps   int    // think steps of the conversation replayed (2 events each)
	Replays       int    // replays and resumes in each run on each side
	Conversations int    // conversations created on each server
	Jobs          string // the jobs to run: a comma list of process, replay, server, crowd, startup, cluster
	Sides         string // the sides to run: reference,gohands (default both)
	Concurrent    int    // conversations running at once in the crowd job
	CrowdSteps    int    // think steps of each of them
	Latency       time.Duration
	Stored        int // conversations stored before the start-up job starts a server
	Log           io.Writer
	// ClusterConversations are finished on node A before it is killed,
	// then read through node B ClusterRounds times (the cluster job).
	ClusterConversations, ClusterRounds int
	// Settle is how long a server goes quiet before its RSS is read
	// (2 s when zero).
	Settle time.Duration
	// OneServer runs the startup, server and crowd jobs of a side on one
	// server, started over the stored conversations, instead of one
	// server each: two start-ups fewer (the reference's take seconds),
	// for the test, whose figures then include one another's
	// conversations.
	OneServer bool
}

// has reports whether the comma list list holds name.
func has(list, name string) bool {
	for f := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(f) == name {
			return true
		}
	}
	return false
}

func main() {
	if runChild() {
		return
	}
	log.SetFlags(0)
	log.SetPrefix("compare: ")
	var c config
	flag.StringVar(&c.Gohands, "gohands", "", "the gohands `binary` (required)")
	flag.StringVar(&c.Python, "python", "", "the `python` of a venv with openhands-sdk, -tools and -agent-server 1.58.2 or 1.43.1 (required)")
	flag.StringVar(&c.RefVersion, "reference-version", "1.58.2", "the reference's `version` in that venv, shown in the table")
	flag.IntVar(&c.Steps, "steps", 200, "steps of the think and terminal jobs")
	flag.IntVar(&c.Runs, "runs", 3, "runs of each job on each side; medians are shown")
	flag.IntVar(&c.ReplaySteps, "replay-steps", 500, "think steps of the stored conversation replayed (two events each, ~1,000 events)")
	flag.IntVar(&c.Replays, "replays", 3, "replays and resumes of the stored conversation in each run on each side (each in a fresh process, on a fresh copy); the median of all is shown")
	flag.IntVar(&c.Conversations, "conversations", 100, "conversations created on each agent server")
	flag.StringVar(&c.Jobs, "jobs", "process,replay,server,crowd,startup,cluster", "the `jobs` to run, a comma list: process (start-up, think and terminal steps), replay (replay and resume), server (creating conversations, idle memory), crowd (conversations running at once), startup (a server over -stored conversations), cluster (reads through a node after another is killed; gohands only, needs PostgreSQL's server binaries)")
	flag.StringVar(&c.Sides, "sides", "reference,gohands", "the `sides` to run")
	flag.IntVar(&c.Concurrent, "concurrent", 100, "conversations running at once in the crowd job")
	flag.IntVar(&c.CrowdSteps, "crowd-steps", 5, "think steps of each conversation of the crowd job")
	flag.DurationVar(&c.Latency, "latency", time.Second, "the scripted model's latency per reply in the crowd job")
	flag.IntVar(&c.Stored, "stored", 10000, "conversations stored before the startup job starts a server")
	flag.IntVar(&c.ClusterConversations, "cluster-conversations", 20, "conversations node A finishes before it is killed (the cluster job)")
	flag.IntVar(&c.ClusterRounds, "cluster-rounds", 5, "rounds of reads through node B after node A is killed (the cluster job)")
	verbose := flag.Bool("v", false, "log each run on standard error")
	flag.Parse()
	if c.Gohands == "" || c.Python == "" || flag.NArg() > 0 {
		flag.Usage()
		os.Exit(2)
	}
	c.Log = io.Discard
	if *verbose {
		c.Log = os.Stderr
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	defer stop()
	t, err := compare(ctx, &c)
	if err != nil {
		log.Fatal(err)
	}
	t.write(os.Stdout)
}

// sides are the two implementations, in the order they run.
var sides = [2]string{"reference", "gohands"}

// compare runs every job c.Runs times on each side.
func compare(ctx context.Context, c *config) (*table, error) {
	c.Replays = max(c.Replays, 1)
	c.Jobs = cmp.Or(c.Jobs, "process,replay,server,crowd,startup,cluster")
	c.Sides = cmp.Or(c.Sides, "reference,gohands")
	c.Concurrent, c.CrowdSteps, c.Stored = max(c.Concurrent, 1), max(c.CrowdSteps, 1), max(c.Stored, 1)
	work, err := os.MkdirTemp("", "gohands-compare-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(work)
	home := filepath.Join(work, "home")
	if err := os.Mkdir(home, 0o755); err != nil {
		return nil, err
	}
	defer refenv.Cleanup(home)
	script := filepath.Join(work, "reference.py")
	if err := os.WriteFile(script, referenceScript, 0o644); err != nil {
		return nil, err
	}
	m := newModel()
	srv := llmtest.NewResponder(nil, m.respond, &llmtest.ResponderOptions{NoRecord: true})
	defer srv.Close()
	r := &runner{c: c, work: work, home: home, script: script, model: m, modelURL: srv.URL}
	t := newTable(c)

	var run []string // the sides run, in order
	for _, side := range sides {
		if has(c.Sides, side) {
			run = append(run, side)
		}
	}
	if has(c.Jobs, "process") || has(c.Jobs, "replay") {
		if err := r.processJobs(ctx, t, run); err != nil {
			return nil, err
		}
	}
	if has(c.Jobs, "cluster") && has(c.Sides, "gohands") {
		if err := r.cluster(ctx, t); err != nil {
			t.note("cluster", err.Error())
			fmt.Fprintf(c.Log, "cluster: %v\n", err)
		}
	}
	if c.OneServer {
		for _, side := range run {
			if err := r.oneServer(ctx, t, side); err != nil {
				return nil, fmt.Errorf("%s server: %w", side, err)
			}
		}
		return t, nil
	}
	// The servers take long to start (the reference: seconds) and are
	// measured once each.
	for _, side := range run {
		if !has(c.Jobs, "server") {
			break
		}
		s, err := r.server(ctx, side)
		if err != nil {
			return nil, fmt.Errorf("%s server: %w", side, err)
		}
		s.add(t, side, c.Conversations)
	}
	for _, side := range run {
		if !has(c.Jobs, "crowd") {
			break
		}
		if err := r.crowd(ctx, t, side); err != nil {
			// The reference may not reach the size asked: its cells stay
			// empty and the note says where it stopped.
			t.note(fmt.Sprintf("server: %d conversations running at once (%s)", c.Concurrent, side), err.Error())
			fmt.Fprintf(c.Log, "%s crowd: %v\n", side, err)
		}
	}
	for _, side := range run {
		if !has(c.Jobs, "startup") {
			break
		}
		if err := r.startup(ctx, t, side); err != nil {
			t.note(fmt.Sprintf("server: start-up over %d stored conversations (%s)", c.Stored, side), err.Error())
			fmt.Fprintf(c.Log, "%s startup: %v\n", side, err)
		}
	}
	return t, nil
}

// oneServer runs the startup, server and crowd jobs that c.Jobs names on
// one server of side (c.OneServer), in that order: the startup job needs
// the server fresh. A job's failure fails the whole.
func (r *runner) oneServer(ctx context.Context, t *table, side string) error {
	c := r.c
	if !has(c.Jobs, "startup") {
		return errors.New("one server for the server jobs needs the startup job")
	}
	p, err := r.startupServer(ctx, t, side, max(10, c.Concurrent))
	if err != nil {
		return fmt.Errorf("startup: %w", err)
	}
	defer p.stop()
	if has(c.Jobs, "server") {
		s, err := r.serverOn(ctx, p)
		if err != nil {
			return err
		}
		s.add(t, side, c.Conversations)
	}
	if has(c.Jobs, "crowd") {
		if err := r.crowdOn(ctx, t, side, p); err != nil {
			return fmt.Errorf("crowd: %w", err)
		}
	}
	return nil
}

// processJobs runs the jobs that are processes (start-up, steps) and the
// replay and resume of a stored conversation, c.Runs times on each side.
func (r *runner) processJobs(ctx context.Context, t *table, run []string) error {
	c := r.c
	// The stored conversation: written once by the reference.
	var stored *stored
	// With as many steps, the reference's first think run is the stored
	// conversation: one reference process fewer.
	reuse := has(c.Jobs, "replay") && has(c.Jobs, "process") && c.ReplaySteps == c.Steps && len(run) > 0 && run[0] == "reference"
	if has(c.Jobs, "replay") && !reuse {
		fmt.Fprintf(c.Log, "writing a %d-step conversation with the reference\n", c.ReplaySteps)
		var err error
		if stored, err = r.writeStored(ctx); err != nil {
			return fmt.Errorf("writing the stored conversation: %w", err)
		}
	}
	noteStored := func() {
		t.note("replay", fmt.Sprintf("%d events, %.1f MB, written by the reference; replay and resume: medians of %d samples (%d per run)",
			stored.events, float64(stored.bytes)/1e6, c.Runs*c.Replays, c.Replays))
	}
	if stored != nil {
		noteStored()
	}

	for i := range c.Runs {
		for _, side := range run {
			jobs := []struct {
				row  string
				kind string
				n    int
			}{{"start-up, one model call", "start", 0}, {fmt.Sprintf("%d think steps", c.Steps), "think", c.Steps}, {fmt.Sprintf("%d terminal steps", c.Steps), "terminal", c.Steps}}
			for _, j := range jobs {
				if !has(c.Jobs, "process") {
					break
				}
				s, st, err := r.process(ctx, side, j.kind, j.n)
				if err != nil {
					return fmt.Errorf("%s, %s: %w", side, j.row, err)
				}
				if reuse && stored == nil && j.kind == "think" {
					stored = st
					noteStored()
				}
				fmt.Fprintf(c.Log, "run %d %s %s: %+v\n", i, side, j.row, s)
				t.add(j.row+": wall (s)", side, s.wall.Seconds())
				t.add(j.row+": CPU (s)", side, s.cpu.Seconds())
				t.add(j.row+": peak RSS (MB)", side, float64(s.rss)/1e6)
			}
			// Replay and resume take milliseconds, where one sample is at
			// the mercy of the machine's load: each run takes several.
			for range c.Replays {
				if stored == nil {
					break
				}
				replayMS, err := r.replay(ctx, side, "replay", stored)
				if err != nil {
					return fmt.Errorf("%s, replay: %w", side, err)
				}
				t.add("full replay of the stored conversation (ms)", side, replayMS)
				if side == "gohands" {
					openMS, err := r.replay(ctx, side, "open", stored)
					if err != nil {
						return fmt.Errorf("%s, open: %w", side, err)
					}
					t.add(openRow, side, openMS)
				}
				resumeMS, err := r.resume(ctx, side, stored)
				if err != nil {
					return fmt.Errorf("%s, resume: %w", side, err)
				}
				t.add("resume of it to the first model request (ms)", side, resumeMS)
				fmt.Fprintf(c.Log, "run %d %s: replay %.1f ms, resume %.1f ms\n", i, side, replayMS, resumeMS)
			}
		}
	}
	return nil
}

// model is the scripted model: per task, a number of steps then finish.
type model struct {
	mu   sync.Mutex
	jobs map[string]*job
}

// job is what the model does for one task.
type job struct {
	tool  string // "think" or "terminal"
	steps int
	calls int
	first time.Time // when the first request arrived
	seen  chan struct{}
	// delay is the model's latency per reply (the crowd job).
	delay time.Duration
	// replied is when the last reply went out; overheads are the times
	// from a reply to the next request: the agent's own time per step.
	replied   time.Time
	overheads []time.Duration
	finished  bool // the finish was sent
}

func newModel() *model { return &model{jobs: map[string]*job{}} }

// expect scripts the task: steps calls of tool, then finish.
func (m *model) expect(task, tool string, steps int) *job {
	j := &job{tool: tool, steps: steps, seen: make(chan struct{})}
	m.mu.Lock()
	m.jobs[task] = j
	m.mu.Unlock()
	return j
}

func (m *model) respond(req llmtest.Request) (llmtest.Reply, error) {
	now := time.Now()
	if tools, _ := req.Body["tools"].([]any); len(tools) == 0 {
		return llmtest.Reply{Text: "The bench task so far: steps were taken; go on."}, nil
	}
	task := firstUser(req.Body)
	m.mu.Lock()
	j := m.jobs[task]
	if j == nil {
		m.mu.Unlock()
		return llmtest.Reply{}, fmt.Errorf("no job for task %.80q", task)
	}
	if j.calls == 0 {
		j.first = now
		close(j.seen)
	} else if !j.replied.IsZero() {
		j.overheads = append(j.overheads, now.Sub(j.replied))
	}
	j.calls++
	var reply llmtest.Reply
	switch {
	case j.calls > j.steps:
		j.finished = true
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}
	case j.tool == "terminal":
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "terminal", Arguments: llmtest.Args(map[string]string{"command": fmt.Sprintf("echo step %d", j.calls)})}}}
	default:
		reply = llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "think", Arguments: llmtest.Args(map[string]string{"thought": fmt.Sprintf("step %d", j.calls)})}}}
	}
	delay := j.delay
	m.mu.Unlock()
	if delay > 0 {
		time.Sleep(delay)
		m.mu.Lock()
		j.replied = time.Now()
		m.mu.Unlock()
	}
	return reply, nil
}

// firstUser returns the text of the first user message of a Chat
// Completions request: the task, which names the job.
func firstUser(body map[string]any) string {
	msgs, _ := body["messages"].([]any)
	for _, m := range msgs {
		msg, _ := m.(map[string]any)
		if msg["role"] != "user" {
			continue
		}
		switch c := msg["content"].(type) {
		case string:
			return c
		case []any:
			var b strings.Builder
			for _, p := range c {
				part, _ := p.(map[string]any)
				if s, ok := part["text"].(string); ok {
					b.WriteString(s)
				}
			}
			return b.String()
		}
	}
	return ""
}

// runner runs jobs.
type runner struct {
	c        *config
	work     string
	home     string // HOME of every program run (refenv)
	script   string
	model    *model
	modelURL string
	seq      int
	template string // a stored conversation to copy (the startup job)
}

// task returns a task no other job has used.
func (r *runner) task(kind string) string {
	r.seq++
	return fmt.Sprintf("#%s %d: follow the bench script.", kind, r.seq)
}

// dir returns a new directory under the work directory.
func (r *runner) dir(name string) (string, error) {
	r.seq++
	d := filepath.Join(r.work, fmt.Sprintf("%s-%d", name, r.seq))
	return d, os.MkdirAll(d, 0o755)
}

// sample is what one process used.
type sample struct {
	wall, cpu time.Duration
	rss       int64 // peak resident set, bytes
}

// process runs one job as a process: gohands run, or the reference's
// LocalConversation in reference.py. The reference's conversation is
// returned as a stored one.
func (r *runner) process(ctx context.Context, side, kind string, steps int) (sample, *stored, error) {
	task := r.task(kind)
	r.model.expect(task, kind, steps)
	ws, err := r.dir("ws")
	if err != nil {
		return sample{}, nil, err
	}
	store, err := r.dir("store")
	if err != nil {
		return sample{}, nil, err
	}
	maxIter := fmt.Sprint(steps + 10)
	if side == "gohands" {
		s, _, err := r.exec(ctx, []string{r.c.Gohands, "run", "--model", "openai/bench", "--api-key", "bench", "--base-url", r.modelURL + "/v1",
			"--workspace", ws, "--persistence-dir", store, "--max-iterations", maxIter, task}, ws)
		return s, nil, err
	}
	s, out, err := r.exec(ctx, []string{r.c.Python, r.script, "run", r.modelURL, store, ws, task, maxIter}, ws)
	if err != nil {
		return s, nil, err
	}
	st, err := newStored(store, task, out)
	return s, st, err
}

// exec runs argv in dir and returns what it used and its standard output.
func (r *runner) exec(ctx context.Context, argv []string, dir string) (sample, []byte, error) {
	return r.run(ctx, argv, dir, true)
}

// output runs argv in dir and returns its standard output. Nothing
// samples the process meanwhile: the jobs it runs time themselves and
// report no memory, and a sampler waking every 2 ms would take CPU from
// them, on two cores from gohands' second scanning goroutine while the
// single-threaded reference leaves a core idle.
func (r *runner) output(ctx context.Context, argv []string, dir string) ([]byte, error) {
	_, out, err := r.run(ctx, argv, dir, false)
	return out, err
}

func (r *runner) run(ctx context.Context, argv []string, dir string, peakRSS bool) (sample, []byte, error) {
	cmd := commandContext(ctx, argv, dir, r.home)
	var out, errOut tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	start := time.Now()
	if err := cmd.Start(); err != nil {
		return sample{}, nil, err
	}
	done := make(chan struct{})
	hwm := make(chan int64, 1)
	if peakRSS {
		go func() { hwm <- watchPeakRSS(cmd.Process.Pid, filepath.Base(argv[0]), done) }()
	} else {
		hwm <- 0
	}
	err := cmd.Wait()
	s := sample{wall: time.Since(start)}
	close(done)
	s.rss = <-hwm
	s.cpu = cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if err != nil {
		return s, nil, fmt.Errorf("%s: %w\n%s\n%s", filepath.Base(argv[0]), err, out.tail(), errOut.tail())
	}
	return s, out.buf, nil
}

// tailBuffer keeps a process's output: all of it up to 1 MB, for
// results and error messages.
type tailBuffer struct{ buf []byte }

func (b *tailBuffer) Write(p []byte) (int, error) {
	if len(b.buf) < 1<<20 {
		b.buf = append(b.buf, p...)
	}
	return len(p), nil
}

func (b *tailBuffer) tail() string {
	if len(b.buf) > 3000 {
		return "..." + string(b.buf[len(b.buf)-3000:])
	}
	return string(b.buf)
}

// result decodes the RESULT line reference.py prints last.
func result(out []byte, v any) error {
	i := strings.LastIndex(string(out), "\nRESULT ")
	if i < 0 {
		return errors.New("reference.py printed no result")
	}
	return json.Unmarshal([]byte(strings.TrimSpace(string(out[i+len("\nRESULT "):]))), v)
}

// stored is the conversation replayed.
type stored struct {
	base, id, task string
	events         int
	bytes          int64
}

// dir is the conversation's own directory.
func (s *stored) dir() string { return filepath.Join(s.base, s.id) }

func (r *runner) writeStored(ctx context.Context) (*stored, error) {
	task := r.task("stored")
	r.model.expect(task, "think", r.c.ReplaySteps)
	ws, err := r.dir("ws")
	if err != nil {
		return nil, err
	}
	base, err := r.dir("stored")
	if err != nil {
		return nil, err
	}
	out, err := r.output(ctx, []string{r.c.Python, r.script, "run", r.modelURL, base, ws, task, fmt.Sprint(r.c.ReplaySteps + 10)}, ws)
	if err != nil {
		return nil, err
	}
	return newStored(base, task, out)
}

// newStored describes the conversation that reference.py's run of task
// under base wrote, from its output out.
func newStored(base, task string, out []byte) (*stored, error) {
	var res struct {
		ID     string `json:"id"`
		Events int    `json:"events"`
	}
	if err := result(out, &res); err != nil {
		return nil, err
	}
	s := &stored{base: base, id: res.ID, task: task, events: res.Events}
	err := filepath.WalkDir(s.dir(), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if info, err := d.Info(); err == nil {
				s.bytes += info.Size()
			}
		}
		return err
	})
	return s, err
}

// copyStored copies the stored conversation under a new base, so that a
// resume (which appends) or gohands' index cache leave it as written.
func (r *runner) copyStored(s *stored) (string, error) {
	base, err := r.dir("copy")
	if err != nil {
		return "", err
	}
	return base, os.CopyFS(filepath.Join(base, s.id), os.DirFS(s.dir()))
}

// openRow is the row of gohands' replay through a store opened for
// appending, which the reference's replay does not do (its resume does).
const openRow = "… opened for appending: lock, index cache, log (ms)"

// replay reads a copy of the stored conversation and decodes every event,
// timed inside a fresh process after its start-up: a child of this
// program for gohands, reference.py for the reference. Both read the same
// files, just copied (so from the page cache). Job is "replay", or "open"
// for gohands' open for appending (see openGohands).
func (r *runner) replay(ctx context.Context, side, job string, s *stored) (float64, error) {
	base, err := r.copyStored(s)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(base)
	dir := filepath.Join(base, s.id)
	argv := []string{r.c.Python, r.script, "replay", dir}
	if side == "gohands" {
		if argv, err = childArgv(job, dir); err != nil {
			return 0, err
		}
	}
	out, err := r.output(ctx, argv, base)
	if err != nil {
		return 0, err
	}
	var res struct {
		MS     float64 `json:"ms"`
		Events int     `json:"events"`
	}
	if err := result(out, &res); err != nil {
		return 0, err
	}
	if res.Events != s.events {
		return 0, fmt.Errorf("%s replayed %d events, the reference wrote %d", side, res.Events, s.events)
	}
	return res.MS, nil
}

// resume continues a copy of the stored conversation with a message and
// measures until the model gets the first request, from a moment taken
// inside a fresh process after its start-up (as for replay).
func (r *runner) resume(ctx context.Context, side string, s *stored) (float64, error) {
	base, err := r.copyStored(s)
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(base)
	ws, err := r.dir("ws")
	if err != nil {
		return 0, err
	}
	j := r.model.expect(s.task, "think", 0)
	argv := []string{r.c.Python, r.script, "resume", r.modelURL, base, ws, s.id, "go on"}
	if side == "gohands" {
		if argv, err = childArgv("resume", r.modelURL, base, ws, s.id); err != nil {
			return 0, err
		}
	}
	out, err := r.output(ctx, argv, ws)
	if err != nil {
		return 0, err
	}
	var res struct {
		T0 int64 `json:"t0_unix_ns"`
	}
	if err := result(out, &res); err != nil {
		return 0, err
	}
	t0 := time.Unix(0, res.T0)
	select {
	case <-j.seen:
	default:
		return 0, errors.New("the resumed conversation made no model request")
	}
	return float64(j.first.Sub(t0)) / 1e6, nil
}
