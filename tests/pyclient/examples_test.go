package pyclient_test

import (
	"bytes"
	"context"
	"os/exec"
	"path/filepath"
	"regexp"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/llmtest"
)

// referenceExamples are the example programs of the reference's
// repository that talk to an agent server and can run here
// (testdata/examples/README.md says where they come from). Each runs
// unchanged: its own asserts decide its exit status, and want holds what
// it only prints, the sign that the part it demonstrates happened.
//
// The other examples/02_remote_agent_server programs cannot run here:
//   - 02 (DockerWorkspace), 03 (browser, DockerWorkspace) and 05 (VS Code,
//     DockerWorkspace) pull ghcr.io/openhands/agent-server, a registry
//     this machine cannot reach; 06 builds that image with a Python tool
//     of its own, which gohands cannot load (its tools are Go);
//   - 04 and 09 (APIRemoteWorkspace) need the OpenHands runtime API and
//     its key; 07 and 10 (OpenHandsCloudWorkspace) need OpenHands Cloud
//     and an account; 08 needs Apptainer and the same image.
//
// What they do once their server is up (a remote conversation, commands,
// callbacks) is what 01, 11 and 14 do against gohands serve.
var referenceExamples = []struct {
	file string
	want []string
	// fails maps a client release to the error it must end with instead:
	// a failure of the client that the reference's own server of the
	// release gohands speaks (1.58.2) causes too.
	fails map[string]string
}{
	// 12 first: it takes the longest (its two-minute poll).
	{file: "12_settings_and_secrets_api.py", want: []string{
		// The LookupSecret resolved through the server's own secrets API.
		`Agent response: YES`,
		`All Settings and Secrets API tests passed!`,
	}},
	{file: "01_convo_with_local_agent_server.py", want: []string{
		`Generated conversation title: Scripted example`,
		// The Stop hook blocks the broken file, its feedback reaches the
		// agent as the environment's message, the fixed one passes.
		`HookExecutionEvent: Stop - BLOCKED`,
		`MessageEvent \(environment\)\\n  user: \[Stop hook feedback\] \\n  File \\"\./test_broken\.py\\", line 1`,
		`HookExecutionEvent: Stop - SUCCESS`,
		`Agent finished!`,
	}},
	{file: "11_conversation_fork.py", want: []string{
		`Fork events \(grew\)`,
		`All done — RemoteConversation\.fork\(\) works end-to-end\.`,
	}},
	{file: "13_workspace_get_llm.py", want: []string{
		`Has API key header: True`,
		`Example completed successfully!`,
	}, fails: map[string]string{
		// The settings are 1.58.2's (schema 9); the 1.43.1 client knows
		// schemas up to 5 and refuses them from either server.
		"1.43.1": `ValueError: AgentSettings schema_version 9 is newer than supported version 5`,
	}},
	{file: "14_client_defined_tools.py", want: []string{
		`=== 2 client tool call\(s\) intercepted ===`,
	}},
	{file: "15_openai_compatible_gateway.py", want: []string{
		`First answer: It lets OpenAI clients talk to an agent\.`,
		`Second answer using same conversation: About an agent gateway\.`,
	}},
	{file: "16_deferred_init.py", want: []string{
		`Agent response: '42'`,
		`Deferred-init example completed successfully!`,
	}},
}

// serverLines are the lines scripts/utils.py copies from gohands serve.
var serverLines = regexp.MustCompile(`(?m)^\[SERVER\] .*\n`)

// exampleDone is the last line every example prints when it ran through.
var exampleDone = regexp.MustCompile(`(?m)^EXAMPLE_COST: `)

// TestReferenceExamples runs the reference's agent-server example
// programs, unchanged, with its Python client of 1.43.1 and of 1.58.2,
// against `gohands serve` (started by each example through
// testdata/examples/scripts/utils.py) on a scripted model.
//
// The programs run three at a time within the test rather than as
// parallel subtests: they spend most of their time waiting (12 polls its
// conversation for two minutes whatever happens), and as subtests they
// would hold the package's few parallel slots.
func TestReferenceExamples(t *testing.T) {
	t.Parallel()
	clients := []struct{ release, python string }{
		{"1.43.1", testenv.ReferencePython(t)},
		{"1.58.2", testenv.Reference158Python(t)},
	}
	bin := gohandsBinary(t)
	p, err := llmtest.ReadPlaybook(filepath.Join("testdata", "examples", "playbook.json"))
	if err != nil {
		t.Fatal(err)
	}
	m := llmtest.NewResponder(t, p.Respond, nil)
	dir, err := filepath.Abs(filepath.Join("testdata", "examples"))
	if err != nil {
		t.Fatal(err)
	}

	type run struct {
		out []byte
		err error
	}
	runs := make([][]run, len(clients))
	for i := range clients {
		runs[i] = make([]run, len(referenceExamples))
	}
	type job struct {
		client, example int
		cmd             *exec.Cmd
	}
	// Three at a time, in the list's order: each program spends seconds
	// of CPU importing the reference's packages, and fourteen at once
	// starved the other tests' reference servers on a loaded machine (one
	// missed its three minutes to /health).
	queue := make(chan job)
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			for jb := range queue {
				out, err := runExample(t.Context(), jb.cmd)
				// The server's log lines (scripts/utils.py prefixes
				// them) may fall between the lines of one of the
				// example's log records.
				out = serverLines.ReplaceAll(out, nil)
				runs[jb.client][jb.example] = run{out, err}
			}
		})
	}
	for j, ex := range referenceExamples {
		for i, c := range clients {
			work := t.TempDir()
			cmd := exec.Command(c.python, filepath.Join(dir, ex.file))
			cmd.Dir = work
			cmd.Env = referenceEnv(t,
				"GOHANDS_BIN="+bin,
				"LLM_MODEL=openai/gpt-4o", "LLM_BASE_URL="+m.URL+"/v1", "LLM_API_KEY=scripted",
				"OH_PERSISTENCE_DIR="+filepath.Join(work, "persistence"),
				"TMPDIR="+work,
				// Log records as JSON lines, as under CI=true: one
				// format whatever the caller's environment, and no
				// wrapping inside the phrases want looks for.
				"LOG_JSON=true",
			)
			queue <- job{i, j, cmd}
		}
	}
	close(queue)
	wg.Wait()

	for i, c := range clients {
		for j, ex := range referenceExamples {
			t.Run(c.release+"/"+ex.file, func(t *testing.T) {
				r := runs[i][j]
				if fail, ok := ex.fails[c.release]; ok {
					if r.err == nil || !regexp.MustCompile(fail).Match(r.out) {
						t.Errorf("want the failure %q, got exit %v; output:\n%s", fail, r.err, tail(r.out, 8000))
					}
					return
				}
				if r.err != nil {
					t.Fatalf("%s: %v\n%s", ex.file, r.err, tail(r.out, 8000))
				}
				for _, w := range append(ex.want, exampleDone.String()) {
					if !regexp.MustCompile(w).Match(r.out) {
						t.Errorf("the output lacks %q:\n%s", w, tail(r.out, 8000))
					}
				}
			})
		}
	}
}

// runExample runs an example program in a process group of its own and
// returns its combined output. The group (the program and the gohands
// serve it started) is killed when the program ends or after a hang guard
// far beyond the examples' own waits.
func runExample(ctx context.Context, cmd *exec.Cmd) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.WaitDelay = 10 * time.Second // a descendant holding the output open
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { unix.Kill(-cmd.Process.Pid, unix.SIGKILL) })
	err := cmd.Wait()
	stop()
	// A server the program left behind (it died before stopping it).
	unix.Kill(-cmd.Process.Pid, unix.SIGKILL)
	if ctx.Err() != nil {
		err = ctx.Err()
	}
	return out.Bytes(), err
}
