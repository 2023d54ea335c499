package eval

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/workspace"
)

// Config is one agent configuration measured on a suite.
type Config struct {
	// Name identifies the configuration in results (a file name).
	Name string
	// Model is the model's name, shown in summaries.
	Model string
	// NewAgent returns the agent for a task. For an integration task it
	// must give the agent exactly the task's Tools.
	NewAgent func(t *Task) (conversation.Agent, error)
}

// Options configure Run. A nil *Options is the default.
type Options struct {
	// Out is the results directory (required). A task whose result is
	// already there is not run again, so a suite that was interrupted
	// resumes where it stopped.
	Out string
	// Sandbox makes each task's workspace (nil: a LocalSandbox).
	Sandbox Sandbox
	// Parallel is how many tasks run at once (0: 1).
	Parallel int
	// Timeout bounds each agent run whose task sets none (0: 30 min).
	Timeout time.Duration
	// MaxSteps bounds each agent run whose task sets none (0: the
	// conversation's default).
	MaxSteps int
	// VerifyTimeout bounds setup commands and the verifier (0: 10 min).
	VerifyTimeout time.Duration
	// OnStart and OnResult, if set, are called as each task run starts and
	// ends (from several goroutines at once when Parallel > 1); a resumed
	// result is reported with Resumed set.
	OnStart  func(config, task string)
	OnResult func(*Result)
	// Logger receives diagnostics (nil: slog.Default()).
	Logger *slog.Logger
}

// Result file names in a task's results directory.
const (
	ResultFile    = "result.json"
	PatchFile     = "patch.diff"
	VerifyLogFile = "verify.log"
	SetupLogFile  = "setup.log"
	// ConversationsDir holds the task's conversation in the standard
	// layout.
	ConversationsDir = "conversations"
	// CollectedDir holds copies of the task's Collect files.
	CollectedDir = "files"
)

// Run runs every task of the suite with every configuration, each in a fresh
// workspace, and writes the results under opts.Out: for each configuration
// and task a directory Out/<config>/<task> (see ResultFile and the other
// names), and summary.json and summary.md for the whole. It returns the
// summary. A task's failure — the agent's, its setup's or its verifier's —
// is its result, not an error of Run; Run fails only when it cannot write
// results, or when ctx is cancelled (the results so far are kept, and a
// later Run resumes).
func Run(ctx context.Context, tasks []*Task, configs []Config, opts *Options) (*Summary, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.Out == "" {
		return nil, errors.New("eval: no results directory")
	}
	if len(configs) == 0 {
		return nil, errors.New("eval: no agent configuration")
	}
	names := map[string]bool{}
	for _, c := range configs {
		if !idPattern.MatchString(c.Name) || names[c.Name] || c.NewAgent == nil {
			return nil, fmt.Errorf("eval: configuration %q: want a unique file-safe name and NewAgent", c.Name)
		}
		names[c.Name] = true
	}
	for _, t := range tasks {
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("eval: %w", err)
		}
	}
	if o.Sandbox == nil {
		o.Sandbox = &LocalSandbox{}
	}
	o.Parallel = max(o.Parallel, 1)
	if o.Timeout <= 0 {
		o.Timeout = 30 * time.Minute
	}
	if o.VerifyTimeout <= 0 {
		o.VerifyTimeout = 10 * time.Minute
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if err := os.MkdirAll(o.Out, 0o755); err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}

	type job struct {
		cfg  *Config
		task *Task
	}
	jobs := make(chan job)
	var (
		wg      sync.WaitGroup
		errMu   sync.Mutex
		runErrs []error
	)
	for range o.Parallel {
		wg.Go(func() {
			for j := range jobs {
				if err := o.runOne(ctx, j.cfg, j.task); err != nil {
					errMu.Lock()
					runErrs = append(runErrs, err)
					errMu.Unlock()
				}
			}
		})
	}
feed:
	for i := range configs {
		for _, t := range tasks {
			select {
			case jobs <- job{&configs[i], t}:
			case <-ctx.Done():
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	if err := errors.Join(runErrs...); err != nil {
		return nil, err
	}
	s, err := Summarize(o.Out)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// What is done is kept and summarised; the rest runs next time.
		s.Interrupted = true
		if err := WriteSummary(o.Out, s); err != nil {
			return s, err
		}
		return s, fmt.Errorf("%w (run again to resume): %w", ErrInterrupted, context.Cause(ctx))
	}
	return s, WriteSummary(o.Out, s)
}

// ErrInterrupted is returned by Run, with the summary of the tasks done,
// when ctx ended the run before every task had a result.
var ErrInterrupted = errors.New("eval: interrupted")

// runOne runs one task with one configuration unless its result exists.
func (o *Options) runOne(ctx context.Context, cfg *Config, t *Task) error {
	dir := filepath.Join(o.Out, cfg.Name, t.ID)
	if r, err := readResult(dir); err == nil {
		r.Resumed = true
		if o.OnResult != nil {
			o.OnResult(r)
		}
		return nil
	}
	if ctx.Err() != nil {
		return nil
	}
	// What an interrupted attempt left is not a result: start over.
	if err := os.RemoveAll(dir); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if o.OnStart != nil {
		o.OnStart(cfg.Name, t.ID)
	}
	start := time.Now()
	r := &Result{Task: t.ID, Config: cfg.Name, Model: cfg.Model}
	o.attempt(ctx, cfg, t, dir, r)
	if ctx.Err() != nil {
		// Interrupted by the caller, not a verdict: run it again next time.
		return nil
	}
	r.DurationMS = time.Since(start).Milliseconds()
	r.Success = r.Outcome == OutcomeSuccess
	if err := writeJSON(filepath.Join(dir, ResultFile), r); err != nil {
		return err
	}
	if o.OnResult != nil {
		o.OnResult(r)
	}
	return nil
}

// attempt does the work of a task run, recording its outcome in r.
func (o *Options) attempt(ctx context.Context, cfg *Config, t *Task, dir string, r *Result) {
	fail := func(outcome Outcome, format string, args ...any) {
		r.Outcome, r.Reason = outcome, fmt.Sprintf(format, args...)
	}
	env, err := o.Sandbox.Open(ctx, cfg.Name+"-"+t.ID, filepath.Join(dir, ConversationsDir))
	if err != nil {
		fail(OutcomeSetupError, "workspace: %v", err)
		return
	}
	defer env.Close()

	if log, err := o.prepare(ctx, env, t); err != nil {
		os.WriteFile(filepath.Join(dir, SetupLogFile), log, 0o644)
		fail(OutcomeSetupError, "%v", err)
		return
	}

	o.runAgent(ctx, cfg, t, env, dir, r)
	if ctx.Err() != nil {
		return
	}
	// The patch is the agent's work, taken before the verifier adds files.
	if out, exit, _ := o.exec(ctx, env, "git add -A && git -c core.quotepath=off diff --cached --binary HEAD"); exit == 0 {
		os.WriteFile(filepath.Join(dir, PatchFile), out, 0o644)
		r.PatchBytes = len(out)
	}
	for _, name := range t.Collect {
		if b, err := readFile(ctx, env, name); err == nil {
			p := filepath.Join(dir, CollectedDir, filepath.FromSlash(name))
			os.MkdirAll(filepath.Dir(p), 0o755)
			os.WriteFile(p, b, 0o644)
		}
	}
	if r.Outcome != "" {
		return // the agent did not finish: no verdict to ask for
	}
	o.verify(ctx, env, t, dir, r)
}

// prepare fills the workspace: files or repository, a git baseline for the
// patch, setup commands. It returns the setup's output.
func (o *Options) prepare(ctx context.Context, env Env, t *Task) ([]byte, error) {
	var log []byte
	run := func(what, cmd string) error {
		out, exit, err := o.exec(ctx, env, cmd)
		log = append(log, fmt.Sprintf("$ %s\n", cmd)...)
		log = append(log, out...)
		if err != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		if exit != 0 {
			return fmt.Errorf("%s: %q exited with %d: %s", what, cmd, exit, lastLine(out))
		}
		return nil
	}
	switch {
	case t.Repo != nil:
		src := t.Repo.URL
		if isLocalPath(src) {
			// A repository on this machine reaches any sandbox, a
			// container too, as a bundle.
			name, err := uploadBundle(ctx, env, src)
			if err != nil {
				return log, fmt.Errorf("repository: %w", err)
			}
			defer env.Execute(context.WithoutCancel(ctx), "rm -f "+shellQuote(name), nil)
			src = name
		}
		cmd := "git clone -q " + shellQuote(src) + " ."
		if t.Repo.Commit != "" {
			cmd += " && git -c advice.detachedHead=false checkout -q " + shellQuote(t.Repo.Commit)
		}
		if err := run("repository", cmd); err != nil {
			return log, err
		}
	case t.Files != "":
		if err := copyIn(ctx, env, t.fsys, path.Join(t.dir, t.Files)); err != nil {
			return log, fmt.Errorf("files: %w", err)
		}
	}
	// A baseline commit, so that the patch is exactly the agent's work.
	const baseline = `if ! git rev-parse -q --verify HEAD >/dev/null 2>&1; then git init -q && git add -A && ` +
		`git -c user.name=gohands-eval -c user.email=eval@gohands.invalid commit -q --allow-empty -m baseline; fi`
	if err := run("git baseline", baseline); err != nil {
		return log, err
	}
	for _, c := range t.Setup {
		if err := run("setup", c); err != nil {
			return log, err
		}
	}
	return log, nil
}

// runAgent runs the agent on the task; it sets r.Outcome when the agent did
// not finish.
func (o *Options) runAgent(ctx context.Context, cfg *Config, t *Task, env Env, dir string, r *Result) {
	ag, err := cfg.NewAgent(t)
	if err != nil {
		r.Outcome, r.Reason = OutcomeAgentError, fmt.Sprintf("agent: %v", err)
		return
	}
	steps := t.MaxSteps
	if steps == 0 {
		steps = o.MaxSteps
	}
	conv, err := env.Start(ctx, ag, &StartOptions{MaxSteps: steps})
	if err != nil {
		r.Outcome, r.Reason = OutcomeAgentError, fmt.Sprintf("conversation: %v", err)
		return
	}
	defer conv.Close()
	r.ConversationID = conv.ID()

	timeout := time.Duration(t.Timeout)
	if timeout == 0 {
		timeout = o.Timeout
	}
	runCtx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	err = conv.SendMessage(runCtx, event.UserMessage(t.Instruction))
	if err == nil {
		err = conv.Run(runCtx)
	}
	st := conv.State()
	f := st.Fields()
	r.Status = string(f.ExecutionStatus)
	r.Steps = conversation.AgentSteps(ctx, st.Events(), 0)
	r.Cost = f.Stats.TotalCost()
	r.PromptTokens, r.CompletionTokens = f.Stats.Tokens()
	r.FinalMessage, _ = agent.FinalResponse(ctx, st)

	var re *conversation.RunError
	switch {
	case ctx.Err() != nil:
	case runCtx.Err() != nil:
		r.Outcome, r.Reason = OutcomeTimeout, fmt.Sprintf("the agent did not finish within %s", timeout)
	case errors.As(err, &re) && re.Code == conversation.CodeMaxIterations:
		r.Outcome, r.Reason = OutcomeMaxSteps, fmt.Sprintf("the agent did not finish within %d steps", r.Steps)
	case err != nil:
		r.Outcome, r.Reason = OutcomeAgentError, err.Error()
	case f.ExecutionStatus != conversation.StatusFinished:
		r.Outcome, r.Reason = OutcomeAgentError, fmt.Sprintf("the run ended with status %s", f.ExecutionStatus)
	}
}

// verify copies the hidden files and the test patch in, runs the verifier
// and records its verdict.
func (o *Options) verify(ctx context.Context, env Env, t *Task, dir string, r *Result) {
	var log []byte
	defer func() { os.WriteFile(filepath.Join(dir, VerifyLogFile), log, 0o644) }()
	if t.Hidden != "" {
		if err := copyIn(ctx, env, t.fsys, path.Join(t.dir, t.Hidden)); err != nil {
			r.Outcome, r.Reason = OutcomeVerifyError, fmt.Sprintf("hidden files: %v", err)
			return
		}
	}
	if t.TestPatch != "" {
		const name = ".gohands-eval-test.patch"
		if err := writeFile(ctx, env, name, []byte(t.TestPatch)); err != nil {
			r.Outcome, r.Reason = OutcomeVerifyError, fmt.Sprintf("test patch: %v", err)
			return
		}
		out, exit, err := o.exec(ctx, env, "git apply "+name+" && rm "+name)
		log = append(log, out...)
		if err != nil || exit != 0 {
			r.Outcome, r.Reason = OutcomeVerifyError, fmt.Sprintf("the test patch does not apply after the agent's changes: %s", lastLine(out))
			return
		}
	}
	cmd := t.verifyCommand()
	out, exit, err := o.exec(ctx, env, cmd)
	log = append(log, out...)
	r.VerifyExit = &exit
	switch {
	case ctx.Err() != nil:
	case err != nil:
		r.Outcome, r.Reason = OutcomeVerifyError, err.Error()
	case exit == 0:
		r.Outcome = OutcomeSuccess
	case exit > 0 && exit <= 125:
		r.Outcome, r.Reason = OutcomeFailure, fmt.Sprintf("the verifier failed (exit %d): %s", exit, lastLine(out))
	case exit < 0:
		r.Outcome, r.Reason = OutcomeVerifyError, "the verifier was killed or timed out"
	default:
		r.Outcome, r.Reason = OutcomeVerifyError, fmt.Sprintf("the verifier could not run (exit %d): %s", exit, lastLine(out))
	}
}

// exec runs a setup or verification command within VerifyTimeout; exit is
// -1 when it timed out or was killed.
func (o *Options) exec(ctx context.Context, env Env, cmd string) (out []byte, exit int, err error) {
	res, err := env.Execute(ctx, cmd, &workspace.ExecOptions{Timeout: o.VerifyTimeout})
	if err != nil {
		return nil, -1, err
	}
	return []byte(res.Stdout + res.Stderr), res.ExitCode, nil
}

// lastLine is the last non-empty line of out, for a reason text.
func lastLine(out []byte) string {
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 {
		s = s[i+1:]
	}
	const max = 200
	if len(s) > max {
		s = s[:max] + "…"
	}
	return s
}

func writeJSON(name string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	// Written whole or not at all: a result file marks a finished task.
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	if err := os.Rename(tmp, name); err != nil {
		return fmt.Errorf("eval: %w", err)
	}
	return nil
}

// uploadBundle bundles the git repository at dir (every ref) and uploads it
// to the workspace, outside its working directory; it returns the
// bundle's path there.
func uploadBundle(ctx context.Context, ws workspace.Workspace, dir string) (string, error) {
	tmp, err := os.MkdirTemp("", "gohands-eval-bundle-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	local := filepath.Join(tmp, "repo.bundle")
	out, err := exec.CommandContext(ctx, "git", "-C", dir, "bundle", "create", "-q", local, "--all").CombinedOutput()
	if err != nil {
		return "", fmt.Errorf("git bundle of %s: %v: %s", dir, err, lastLine(out))
	}
	name := "/tmp/gohands-eval-" + rand.Text() + ".bundle"
	if err := ws.Upload(ctx, local, name); err != nil {
		return "", err
	}
	return name, nil
}
