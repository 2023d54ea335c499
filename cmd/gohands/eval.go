package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/eval"
	"github.com/gohands/gohands/eval/starter"
	"github.com/gohands/gohands/tools/preset"
	"github.com/gohands/gohands/workspace/docker"
)

type evalFlags struct {
	run      runFlags // the model flags, as gohands run reads them
	agents   string
	out      string
	parallel int
	timeout  time.Duration
	verify   time.Duration
	maxSteps int
	sandbox  string
	image    string
	network  string
}

func (a *app) evalCmd() *cobra.Command {
	var f evalFlags
	cmd := &cobra.Command{
		Use:   "eval [flags] [SUITE]",
		Short: "Measure agent configurations on a suite of tasks",
		Long: `Run every task of SUITE with each agent configuration, each task in a fresh
workspace, and report: success rate, cost, tokens, steps and time, per task
and in total. Each task runs in a temporary directory on this machine, or
with --sandbox docker in a fresh container of the gohands image
(scripts/image.sh), where setup, agent and verifier all run.

SUITE is a directory of task directories (each with a task.json), one task
directory, or a JSONL file (our task manifests or SWE-Bench rows); without
it, the built-in starter suite runs. A task's verify command decides it
(exit 0: solved).

The agent is configured as for gohands run (--model, --base-url, --api-key,
--llm-config, --preset, the settings file), or --agents names a JSON file of
configurations to compare:
  [{"name": "sonnet", "model": "anthropic/claude-sonnet-4-5", "api_key_env": "ANTHROPIC_API_KEY"},
   {"name": "gpt5", "model": "openai/gpt-5", "preset": "gpt5", "api_key_env": "OPENAI_API_KEY"}]

Results go to --out: per configuration and task the conversation (inspect it
with gohands ls/show --persistence-dir DIR/CONFIG/TASK/conversations), the
patch, the verifier's output and result.json; summary.md and summary.json for
the whole. Running again with the same --out resumes an interrupted suite:
finished tasks are kept.

Exit status: 0 when the suite ran (whatever the agents scored), 1 on error,
2 on bad usage, 130 when interrupted (SIGINT) and 143 when terminated
(SIGTERM): no new task starts, the running ones are cancelled (they run again
next time), and summary.json is written for the tasks done, marked
"interrupted". A second signal quits at once.`,
		Example: `  gohands eval --model anthropic/claude-sonnet-4-5
  gohands eval --agents agents.json --parallel 4 --out results/ ./my-suite
  gohands eval compare results-before/ results-after/`,
		Args: cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.eval(cmd.Context(), &f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.run.model, "model", "", "model, e.g. anthropic/claude-sonnet-4-5 (default $"+envModel+")")
	fl.StringVar(&f.run.apiKey, "api-key", "", "the model provider's API key (default $"+envAPIKey+")")
	fl.StringVar(&f.run.baseURL, "base-url", "", "base URL of the model's API, for OpenAI-compatible servers (default $"+envBaseURL+")")
	fl.StringVar(&f.run.llmConfig, "llm-config", "", "JSON `file` with a full LLM configuration; the flags above override it")
	addRetryFlags(fl, &f.run.retry)
	fl.StringVar(&f.run.preset, "preset", preset.Default, "the agent: `NAME` of a preset, one of "+strings.Join(preset.Names(), ", "))
	fl.StringVar(&f.agents, "agents", "", "JSON `file` listing the agent configurations to measure, instead of the model flags")
	fl.StringVar(&f.out, "out", "eval-results", "results `directory`; an existing one is resumed")
	fl.IntVar(&f.parallel, "parallel", 1, "how many tasks run at once")
	fl.DurationVar(&f.timeout, "timeout", 30*time.Minute, "time limit of each agent run, for tasks that set none")
	fl.DurationVar(&f.verify, "verify-timeout", 10*time.Minute, "time limit of each setup command and verifier")
	fl.IntVar(&f.maxSteps, "max-steps", 100, "step limit of each agent run, for tasks that set none")
	fl.StringVar(&f.sandbox, "sandbox", "local", "where tasks run: local (a temporary directory each) or docker (a fresh container of the gohands image each, built by scripts/image.sh)")
	fl.StringVar(&f.image, "image", "", "with --sandbox docker: the `image` (default $GOHANDS_IMAGE or "+docker.DefaultImage+")")
	fl.StringVar(&f.network, "network", "host", "with --sandbox docker: the containers' Docker `network`; host (the default) reaches a model server on this machine's 127.0.0.1, bridge isolates them from it")
	cmd.AddCommand(a.evalCompareCmd())
	return cmd
}

func (a *app) evalCompareCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "compare A B",
		Short: "Show two results directories side by side",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			sa, err := eval.Summarize(args[0])
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			sb, err := eval.Summarize(args[1])
			if err != nil {
				return &exitErr{code: exitError, msg: err.Error()}
			}
			fmt.Fprintf(a.stdout, "A: %s\nB: %s\n\n", args[0], args[1])
			eval.Compare(a.stdout, sa, sb)
			return nil
		},
	}
}

func (a *app) eval(ctx context.Context, f *evalFlags, args []string) error {
	var (
		tasks []*eval.Task
		err   error
	)
	if len(args) == 1 {
		tasks, err = eval.Load(args[0])
	} else {
		tasks, err = starter.Tasks()
	}
	if err != nil {
		return usageErr("%v", err)
	}
	configs, err := a.evalConfigs(f)
	if err != nil {
		return err
	}
	var sandbox eval.Sandbox
	switch f.sandbox {
	case "local":
		sandbox = &eval.LocalSandbox{}
	case "docker":
		network := f.network
		if network == "bridge" {
			network = "" // the engine's default network
		}
		sandbox = &eval.DockerSandbox{Options: &docker.Options{Image: f.image, Network: network}}
	default:
		return usageErr("--sandbox %q: want local or docker", f.sandbox)
	}
	if f.parallel < 1 {
		return usageErr("--parallel must be at least 1")
	}

	ctx, stop := a.stopOnSignal(ctx, "stopping: no new task starts, the running ones are cancelled, the summary of the tasks done is written")
	defer stop()
	p := newProgress(a.stderr, len(tasks)*len(configs))
	s, err := eval.Run(ctx, tasks, configs, &eval.Options{
		Out: f.out, Sandbox: sandbox, Parallel: f.parallel, Timeout: f.timeout, VerifyTimeout: f.verify, MaxSteps: f.maxSteps,
		OnStart: p.start, OnResult: p.done,
	})
	p.finish()
	if errors.Is(err, eval.ErrInterrupted) {
		s.WriteMarkdown(a.stdout)
		code, ok := stoppedStatus(ctx)
		if !ok {
			code = exitInterrupted
		}
		return &exitErr{code: code, msg: fmt.Sprintf("interrupted; run the same command again to resume (results in %s)", f.out)}
	}
	if err != nil {
		return &exitErr{code: exitError, msg: err.Error()}
	}
	s.WriteMarkdown(a.stdout)
	fmt.Fprintf(a.stdout, "\nResults in %s (summary.md, summary.json).\n", f.out)
	return nil
}

// evalConfigs reads --agents, or makes one configuration of the model flags
// and the settings, as gohands run would. The retry flags and settings
// apply to every configuration.
func (a *app) evalConfigs(f *evalFlags) ([]eval.Config, error) {
	st, _, err := a.loadSettings()
	if err != nil {
		return nil, err
	}
	if f.agents != "" {
		specs, err := eval.ReadAgentSpecs(f.agents)
		if err != nil {
			return nil, usageErr("%v", err)
		}
		if len(specs) == 0 {
			return nil, usageErr("--agents %s: no configuration", f.agents)
		}
		var out []eval.Config
		for _, s := range specs {
			cfg, err := s.LLMConfig()
			if err != nil {
				return nil, usageErr("%v", err)
			}
			if err := applyRetries(&cfg, f.run.retry, st); err != nil {
				return nil, err
			}
			c, err := s.ConfigWith(cfg)
			if err != nil {
				return nil, usageErr("%v", err)
			}
			out = append(out, c)
		}
		return out, nil
	}
	cfg, _, err := a.llmConfig(&f.run, st, convInfo{})
	if err != nil {
		return nil, err
	}
	c, err := eval.AgentSpec{Preset: f.run.preset}.ConfigWith(cfg)
	if err != nil {
		return nil, usageErr("%v", err)
	}
	return []eval.Config{c}, nil
}

// progress shows the suite's progress on standard error: a bar redrawn in
// place on a terminal, a line per finished task otherwise.
type progress struct {
	w        io.Writer
	tty      bool
	total    int
	mu       sync.Mutex
	running  []string
	finished int
	solved   int
	began    time.Time
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total, began: time.Now()}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) start(config, task string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.running = append(p.running, config+"/"+task)
	p.draw()
}

func (p *progress) done(r *eval.Result) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.finished++
	if r.Success {
		p.solved++
	}
	name := r.Config + "/" + r.Task
	for i, n := range p.running {
		if n == name {
			p.running = append(p.running[:i], p.running[i+1:]...)
			break
		}
	}
	if !p.tty {
		how := string(r.Outcome)
		if r.Resumed {
			how += " (from an earlier run)"
		} else if r.Reason != "" {
			how += ": " + r.Reason
		}
		fmt.Fprintf(p.w, "[%d/%d] %s %s\n", p.finished, p.total, name, how)
		return
	}
	p.draw()
}

// draw redraws the bar; p.mu is held.
func (p *progress) draw() {
	if !p.tty {
		return
	}
	const width = 24
	n := width * p.finished / max(p.total, 1)
	line := fmt.Sprintf("[%s%s] %d/%d solved %d  %s", strings.Repeat("#", n), strings.Repeat(" ", width-n),
		p.finished, p.total, p.solved, time.Since(p.began).Round(time.Second))
	if len(p.running) > 0 {
		line += "  running " + strings.Join(p.running, ", ")
	}
	if len(line) > 118 {
		line = line[:117] + "…"
	}
	fmt.Fprintf(p.w, "\r\x1b[K%s", line)
}

func (p *progress) finish() {
	if p.tty {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
}
