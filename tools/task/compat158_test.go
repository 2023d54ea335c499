package task_test

import (
	"bytes"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/conversation/filestore"
	"github.com/gohands/gohands/internal/refenv"
	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/llm/llmtest"
)

// The reference 1.58.2 reads a conversation gohands wrote in which the
// agent delegated a task to a sub-agent and then resumed that task: every
// event re-dumps to the bytes on disk (so the TaskAction leaves out the
// optional fields it does not set, as the reference's event files do) and
// the task calls are read as the reference's task tool types. The
// reference then resumes the conversation and runs a turn to its finish.
func TestReference158ReadsTaskCalls(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	r := newRouter(t, nil)
	base := t.TempDir()
	c, err := conversation.New(ctx, parentAgent(r), t.TempDir(), &conversation.LocalOptions{Backend: filestore.NewBackend(base, nil)})
	if err != nil {
		t.Fatal(err)
	}
	r.models = map[string]*llm.LLM{
		"": scripted(t,
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t1", "task", map[string]any{"description": "count files", "prompt": "TASK-A: count the files"})}},
			llmtest.Reply{Text: "ok"},
			llmtest.Reply{ToolCalls: []llmtest.ToolCall{call("t2", "task", map[string]any{"prompt": "Now list them", "resume": "task_00000001"})}},
			llmtest.Reply{Text: "fine"},
		),
		"TASK-A": scripted(t, llmtest.Reply{Text: "There are 3 files."}, llmtest.Reply{Text: "x, y and z."}),
	}
	runTurn(t, c, "count")
	runTurn(t, c, "list")
	id := c.ID()
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	home := t.TempDir()
	t.Cleanup(func() { refenv.Cleanup(home) })
	m := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"done"}`}}}, nil
	}, nil)
	cmd := exec.Command(py, filepath.Join("testdata", "check158.py"), filestore.Dir(base, id), id, m.URL)
	cmd.Env = refenv.Env(home, "OPENHANDS_SUPPRESS_BANNER=1")
	out, err := cmd.CombinedOutput()
	read := "ok ['TaskAction', 'TaskObservation', 'TaskAction(resume=task_00000001)', 'TaskObservation']"
	if err != nil || !bytes.Contains(out, []byte(read)) || !bytes.Contains(out, []byte("resumed finished ['finish']")) {
		t.Fatalf("the reference 1.58.2 does not read gohands' conversation with sub-agent calls: %v\n%s", err, out)
	}
}
