package agent_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm/llmtest"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/terminal"
)

// The crash test re-executes the test binary as a child that runs a
// conversation and prints the id of every committed event, and kills it.
const childEnv = "GOHANDS_AGENT_TEST_CHILD"

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "run":
		runChild()
		return
	case "model":
		runModelServer()
		return
	}
	os.Exit(m.Run())
}

// childSteps is how many terminal steps the child's script has: more than
// it can do before it is killed.
const childSteps = 400

func runChild() {
	replies := make([]llmtest.Reply, 0, childSteps)
	for i := range childSteps {
		replies = append(replies, llmtest.Reply{ToolCalls: []llmtest.ToolCall{
			{Name: "terminal", Arguments: fmt.Sprintf(`{"command":"echo step %d; sleep 0.01"}`, i)},
			{Name: "think", Arguments: fmt.Sprintf(`{"thought":"step %d"}`, i)},
		}})
	}
	a, _ := newAgent(nil, replies...)
	a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
	a.ToolConcurrencyLimit = 2
	out := bufio.NewWriter(os.Stdout)
	c, err := conversation.New(ctx, a, os.Getenv("WORK"), &conversation.LocalOptions{
		Backend: filestore.NewBackend(os.Getenv("DIR"), nil), ID: os.Getenv("ID"), MaxIterations: childSteps + 1,
		DisableStuckDetection: true,
		OnEvent: func(e event.Event) {
			fmt.Fprintln(out, e.EventBase().ID)
			out.Flush()
		},
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	c.SendMessage(ctx, event.UserMessage("count"))
	c.Run(ctx)
	os.Exit(3) // the parent kills the child before it gets here
}

func TestKilledMidRunResumesWithNothingLost(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir, work := t.TempDir(), t.TempDir()
	const id = "6f1c2a44-93a7-4c5e-9b0e-3d2f4a5b6c7d"
	for round, kills := range []int{25, 60, 7} {
		cmd := exec.Command(exe, "-test.run=^$")
		cmd.Env = append(os.Environ(), childEnv+"=run", "DIR="+dir, "WORK="+work, "ID="+id)
		cmd.Stderr = os.Stderr
		stdout, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// Kill the child after it committed `kills` more events.
		var committed []string
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			committed = append(committed, sc.Text())
			if len(committed) == kills {
				cmd.Process.Kill() // SIGKILL
				break
			}
		}
		for sc.Scan() { // events committed while the signal was on its way
			committed = append(committed, sc.Text())
		}
		cmd.Wait()
		if len(committed) < kills {
			t.Fatalf("round %d: child committed only %d events", round, len(committed))
		}

		// Resume with a model that finishes at once.
		a, _ := newAgent(t, llmtest.Reply{Text: "Resumed and done."})
		a.Tools = append(a.Tools, tool.Spec{Name: terminal.Name})
		c, err := conversation.New(ctx, a, work, &conversation.LocalOptions{Backend: filestore.NewBackend(dir, nil), ID: id})
		if err != nil {
			t.Fatalf("round %d: reopen: %v", round, err)
		}
		for _, eid := range committed {
			if _, ok := c.State().Events().Lookup(eid); !ok {
				t.Fatalf("round %d: committed event %s lost", round, eid)
			}
		}
		if st := c.Status(); st != conversation.StatusError {
			t.Fatalf("round %d: status after a crash %s, want error", round, st)
		}
		if err := c.Run(ctx); err != nil {
			t.Fatalf("round %d: run after resume: %v", round, err)
		}
		if st := c.Status(); st != conversation.StatusFinished {
			t.Fatalf("round %d: status %s", round, st)
		}
		branch, err := c.State().ActiveBranch()
		if err != nil {
			t.Fatal(err)
		}
		if u := conversation.UnmatchedActions(branch); len(u) != 0 {
			t.Fatalf("round %d: unanswered actions after resume: %v", round, u)
		}
		// Every call the model saw is paired with one result.
		checkPairs(t, logEvents(t, c))
		// The next round continues the same conversation.
		c.SendMessage(ctx, event.UserMessage("again"))
		c.Close()
	}
}

// checkPairs fails unless every tool call of events has exactly one
// result and every result answers a call before it.
func checkPairs(t *testing.T, events []event.Event) {
	t.Helper()
	calls := map[string]int{}
	for _, e := range events {
		switch e := e.(type) {
		case *event.ActionEvent:
			calls[e.ToolCallID] = 0
		case *event.ObservationEvent, *event.AgentErrorEvent, *event.UserRejectObservation:
			var id string
			switch e := e.(type) {
			case *event.ObservationEvent:
				id = e.ToolCallID
			case *event.AgentErrorEvent:
				id = e.ToolCallID
			case *event.UserRejectObservation:
				id = e.ToolCallID
			}
			n, ok := calls[id]
			if !ok {
				t.Fatalf("result for unknown call %s", id)
			}
			calls[id] = n + 1
		}
	}
	var bad []string
	for id, n := range calls {
		if n != 1 {
			bad = append(bad, fmt.Sprintf("%s:%d", id, n))
		}
	}
	if len(bad) > 0 {
		t.Fatalf("calls without exactly one result: %s", strings.Join(bad, " "))
	}
}
