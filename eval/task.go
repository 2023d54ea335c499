package eval

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Kind is the variant of a task.
type Kind string

// Task variants.
const (
	// KindTask is a plain task: files and setup commands prepare the
	// workspace, the agent gets the instruction, the verify command's exit
	// status decides.
	KindTask Kind = "task"
	// KindSWEBench is an issue to resolve in a repository at a commit: the
	// instruction is the problem statement, and the task succeeds when the
	// listed tests pass after the agent's patch (with the task's test
	// patch applied first, as SWE-Bench does).
	KindSWEBench Kind = "swebench"
	// KindIntegration is an integration test in the shape of the paper's:
	// setup, the tools the agent gets, verify.
	KindIntegration Kind = "integration"
)

// ManifestName is the name of a task's manifest in its directory.
const ManifestName = "task.json"

// Task is one task of a suite, as its manifest (task.json) or a line of a
// JSONL suite declares it.
type Task struct {
	// ID names the task; it is unique in its suite and safe as a file
	// name (letters, digits, '.', '_', '-').
	ID   string `json:"id"`
	Kind Kind   `json:"kind,omitempty"`
	// Instruction is the first message the agent gets.
	Instruction string `json:"instruction"`
	// Files is a directory, relative to the manifest, copied into the
	// workspace before setup: the repository snapshot. A task directory's
	// "repo" directory is used when Files is empty.
	Files string `json:"files,omitempty"`
	// Repo is a git repository cloned into the workspace at a commit,
	// instead of Files.
	Repo *Repo `json:"repo,omitempty"`
	// Setup are shell commands run in the workspace, in order, before the
	// agent starts; any failure fails the task (as an error, not a
	// verdict on the agent).
	Setup []string `json:"setup,omitempty"`
	// Hidden is a directory, relative to the manifest, copied into the
	// workspace after the agent has finished and before Verify runs: tests
	// the agent must not see.
	Hidden string `json:"hidden,omitempty"`
	// Verify is the shell command, run in the workspace after the agent
	// has finished, whose exit status decides the task: 0 succeeds, 1 to
	// 125 fails, and anything else (command not found, killed by a
	// signal, timed out) is a verifier error.
	Verify string `json:"verify,omitempty"`
	// Collect are workspace files the verifier checks, copied into the
	// task's results for inspection.
	Collect []string `json:"collect,omitempty"`
	// Tools, for an integration task, are the names of the tools the agent
	// gets instead of its configuration's (finish and think always come).
	Tools []string `json:"tools,omitempty"`
	// Timeout bounds the agent's run (0: the suite's default).
	Timeout Duration `json:"timeout,omitempty"`
	// MaxSteps bounds the agent's steps (0: the suite's default).
	MaxSteps int `json:"max_steps,omitempty"`

	// The SWE-Bench fields: a patch adding the tests, the tests that must
	// go from failing to passing and those that must keep passing, and the
	// command running them ({tests} is replaced by the test names, quoted;
	// default "python3 -m pytest {tests}").
	TestPatch   string   `json:"test_patch,omitempty"`
	FailToPass  []string `json:"fail_to_pass,omitempty"`
	PassToPass  []string `json:"pass_to_pass,omitempty"`
	TestCommand string   `json:"test_command,omitempty"`

	// fsys and dir locate the manifest, for Files and Hidden; nil for a
	// task read from JSONL without a directory.
	fsys fs.FS
	dir  string
}

// Repo is a git repository at a commit.
type Repo struct {
	// URL is what git clone takes: a URL or a path. A relative path is
	// relative to the suite file. A repository on this machine is copied
	// into the workspace as a bundle, so it serves container sandboxes
	// too (an offline mirror of a benchmark's repositories).
	URL    string `json:"url"`
	Commit string `json:"commit,omitempty"`
}

// Duration is a time.Duration written in JSON as Go writes durations
// ("90s", "10m"), or as a number of seconds.
type Duration time.Duration

// MarshalJSON implements json.Marshaler.
func (d Duration) MarshalJSON() ([]byte, error) { return json.Marshal(time.Duration(d).String()) }

// UnmarshalJSON implements json.Unmarshaler.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var secs float64
	if err := json.Unmarshal(b, &secs); err == nil {
		*d = Duration(secs * float64(time.Second))
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration: want a string such as \"10m\" or seconds, got %s", b)
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("duration: %w", err)
	}
	*d = Duration(v)
	return nil
}

var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// Validate reports what is wrong with the task, if anything.
func (t *Task) Validate() error {
	var errs []error
	if !idPattern.MatchString(t.ID) {
		errs = append(errs, fmt.Errorf("id %q: want letters, digits, '.', '_' or '-'", t.ID))
	}
	if strings.TrimSpace(t.Instruction) == "" {
		errs = append(errs, errors.New("no instruction"))
	}
	switch t.Kind {
	case KindTask, KindIntegration:
		if t.Verify == "" {
			errs = append(errs, errors.New("no verify command"))
		}
	case KindSWEBench:
		if t.Repo == nil {
			errs = append(errs, errors.New("a swebench task needs a repo"))
		}
		if len(t.FailToPass) == 0 && t.Verify == "" {
			errs = append(errs, errors.New("a swebench task needs fail_to_pass tests or a verify command"))
		}
	default:
		errs = append(errs, fmt.Errorf("unknown kind %q (want task, swebench or integration)", t.Kind))
	}
	if t.Kind == KindIntegration && len(t.Tools) == 0 {
		errs = append(errs, errors.New("an integration task lists its tools"))
	}
	if t.Repo != nil && t.Files != "" {
		errs = append(errs, errors.New("files and repo are exclusive"))
	}
	if t.Repo != nil && t.Repo.URL == "" {
		errs = append(errs, errors.New("repo without a url"))
	}
	if t.Timeout < 0 || t.MaxSteps < 0 {
		errs = append(errs, errors.New("negative timeout or max_steps"))
	}
	for _, p := range append([]string{t.Files, t.Hidden}, t.Collect...) {
		if p != "" && !fs.ValidPath(path.Clean(p)) {
			errs = append(errs, fmt.Errorf("path %q leaves the task directory", p))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("task %q: %w", t.ID, err)
	}
	return nil
}

// verifyCommand is the command deciding the task.
func (t *Task) verifyCommand() string {
	if t.Verify != "" || t.Kind != KindSWEBench {
		return t.Verify
	}
	cmd := t.TestCommand
	if cmd == "" {
		cmd = "python3 -m pytest {tests}"
	}
	var names []string
	for _, n := range append(slices.Clone(t.FailToPass), t.PassToPass...) {
		names = append(names, shellQuote(n))
	}
	return strings.ReplaceAll(cmd, "{tests}", strings.Join(names, " "))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// Load reads a suite: a directory holding task directories (each with a
// task.json), a single task directory, or a JSONL file with one task per
// line.
func Load(name string) ([]*Task, error) {
	fi, err := os.Stat(name)
	if err != nil {
		return nil, fmt.Errorf("eval: suite: %w", err)
	}
	if !fi.IsDir() {
		return LoadJSONL(name)
	}
	return LoadFS(os.DirFS(name), ".")
}

// LoadFS reads the task directories under dir of fsys (or dir itself, if it
// holds a manifest), sorted by id.
func LoadFS(fsys fs.FS, dir string) ([]*Task, error) {
	if _, err := fs.Stat(fsys, path.Join(dir, ManifestName)); err == nil {
		t, err := loadManifest(fsys, dir)
		if err != nil {
			return nil, err
		}
		return []*Task{t}, nil
	}
	entries, err := fs.ReadDir(fsys, dir)
	if err != nil {
		return nil, fmt.Errorf("eval: suite: %w", err)
	}
	var tasks []*Task
	for _, e := range entries {
		sub := path.Join(dir, e.Name())
		if !e.IsDir() {
			continue
		}
		if _, err := fs.Stat(fsys, path.Join(sub, ManifestName)); err != nil {
			continue
		}
		t, err := loadManifest(fsys, sub)
		if err != nil {
			return nil, err
		}
		tasks = append(tasks, t)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("eval: suite %s: no task directories (with a %s)", dir, ManifestName)
	}
	return tasks, checkUnique(tasks)
}

func loadManifest(fsys fs.FS, dir string) (*Task, error) {
	b, err := fs.ReadFile(fsys, path.Join(dir, ManifestName))
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	t, err := decodeTask(b)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", path.Join(dir, ManifestName), err)
	}
	if t.ID == "" {
		t.ID = path.Base(dir)
	}
	t.fsys, t.dir = fsys, dir
	if t.Files == "" && t.Repo == nil {
		if fi, err := fs.Stat(fsys, path.Join(dir, "repo")); err == nil && fi.IsDir() {
			t.Files = "repo"
		}
	}
	if err := t.Validate(); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", dir, err)
	}
	return t, nil
}

// decodeTask decodes a manifest strictly: an unknown field is an error, so
// that a misspelt "verfy" does not silently make a task pass.
func decodeTask(b []byte) (*Task, error) {
	d := json.NewDecoder(bytes.NewReader(b))
	d.DisallowUnknownFields()
	t := &Task{Kind: KindTask}
	if err := d.Decode(t); err != nil {
		return nil, err
	}
	if t.Kind == "" {
		t.Kind = KindTask
	}
	return t, nil
}

// sweBenchRow is a line of a SWE-Bench dataset file: FAIL_TO_PASS and
// PASS_TO_PASS are JSON lists, or strings holding one.
type sweBenchRow struct {
	InstanceID       string          `json:"instance_id"`
	Repo             string          `json:"repo"`
	BaseCommit       string          `json:"base_commit"`
	ProblemStatement string          `json:"problem_statement"`
	TestPatch        string          `json:"test_patch"`
	FailToPass       json.RawMessage `json:"FAIL_TO_PASS"`
	PassToPass       json.RawMessage `json:"PASS_TO_PASS"`
	// Ours: where to clone from (SWE-Bench names a GitHub repository),
	// and the test command.
	RepoURL     string `json:"repo_url"`
	TestCommand string `json:"test_command"`
}

// LoadJSONL reads a suite from a JSONL file: one task per line, either our
// manifest's fields or a SWE-Bench row (recognised by its instance_id).
// Relative repository paths are relative to the file.
func LoadJSONL(name string) ([]*Task, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("eval: suite: %w", err)
	}
	defer f.Close()
	base := filepath.Dir(name)
	var tasks []*Task
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 64<<20)
	for n := 1; sc.Scan(); n++ {
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		t, err := decodeLine(line)
		if err != nil {
			return nil, fmt.Errorf("eval: %s:%d: %w", name, n, err)
		}
		if t.Repo != nil && isLocalPath(t.Repo.URL) && !filepath.IsAbs(t.Repo.URL) {
			t.Repo.URL = filepath.Join(base, t.Repo.URL)
		}
		if err := t.Validate(); err != nil {
			return nil, fmt.Errorf("eval: %s:%d: %w", name, n, err)
		}
		tasks = append(tasks, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("eval: %s: %w", name, err)
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("eval: %s: no tasks", name)
	}
	return tasks, checkUnique(tasks)
}

func decodeLine(line []byte) (*Task, error) {
	var probe struct {
		InstanceID string `json:"instance_id"`
	}
	if err := json.Unmarshal(line, &probe); err != nil {
		return nil, err
	}
	if probe.InstanceID == "" {
		return decodeTask(line)
	}
	var r sweBenchRow
	if err := json.Unmarshal(line, &r); err != nil {
		return nil, err
	}
	t := &Task{
		ID: r.InstanceID, Kind: KindSWEBench, Instruction: r.ProblemStatement,
		TestPatch: r.TestPatch, TestCommand: r.TestCommand,
	}
	var err error
	if t.FailToPass, err = stringList(r.FailToPass); err != nil {
		return nil, fmt.Errorf("FAIL_TO_PASS: %w", err)
	}
	if t.PassToPass, err = stringList(r.PassToPass); err != nil {
		return nil, fmt.Errorf("PASS_TO_PASS: %w", err)
	}
	url := r.RepoURL
	if url == "" && r.Repo != "" {
		url = "https://github.com/" + r.Repo + ".git"
	}
	t.Repo = &Repo{URL: url, Commit: r.BaseCommit}
	return t, nil
}

// stringList decodes a JSON list of strings, or a string holding one (as
// the SWE-Bench datasets write them).
func stringList(b json.RawMessage) ([]string, error) {
	if len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	var s string
	if json.Unmarshal(b, &s) == nil {
		b = []byte(s)
	}
	var l []string
	if err := json.Unmarshal(b, &l); err != nil {
		return nil, err
	}
	return l, nil
}

func isLocalPath(url string) bool {
	return !strings.Contains(url, "://") && !strings.Contains(url, "@")
}

func checkUnique(tasks []*Task) error {
	seen := make(map[string]bool, len(tasks))
	for _, t := range tasks {
		if seen[t.ID] {
			return fmt.Errorf("eval: two tasks have the id %q", t.ID)
		}
		seen[t.ID] = true
	}
	slices.SortFunc(tasks, func(a, b *Task) int { return strings.Compare(a.ID, b.ID) })
	return nil
}
