package pyclient_test

import (
	"bytes"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"

	"github.com/gohands/gohands/llm/llmtest"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/google/go-cmp/cmp"
)

// TestGoClientReference158 runs the Go client's program against a real
// reference 1.58.2 agent server: the same outcomes as the reference's own
// client on its server (the transcript golden).
func TestGoClientReference158(t *testing.T) {
	t.Parallel()
	want := readGolden(t)
	py := testenv.Reference158Python(t)
	srv := model(t)
	got := goClientTranscript(t, sharedReference158(t).URL, srv.URL)
	diff := cmp.Diff(want, got)
	if diff != "" {
		// As TestGoClientReference: the reference's terminal is not
		// deterministic under load; a real difference differs twice.
		t.Logf("first run differs (-reference +go), running again:\n%s", diff)
		ref := startReferenceServer(t, py)
		got = goClientTranscript(t, ref.URL, srv.URL)
		diff = cmp.Diff(want, got)
	}
	checkScenarios(t, got)
	if diff != "" {
		t.Errorf("the Go client on the 1.58.2 server differs from the reference client (-reference +go):\n%s", diff)
	}
}

// `gohands run --server` against a real reference 1.58.2 server with
// --confirm risky: the client sends only kinds the server knows (the
// analyzer as PatternSecurityAnalyzer, no gohands-only kind), the server
// accepts the conversation (no 422), and the run ends with the model's
// finish.
func TestRunServerConfirmRisky158(t *testing.T) {
	t.Parallel()
	bin := gohandsBinary(t)
	// Every call gets the finish: the reference server may make another
	// (a title, a retry) besides the agent's step.
	m := llmtest.NewResponder(t, func(llmtest.Request) (llmtest.Reply, error) {
		return llmtest.Reply{ToolCalls: []llmtest.ToolCall{{Name: "finish", Arguments: `{"message":"all done"}`}}}, nil
	}, nil)
	work := t.TempDir()
	cmd := exec.Command(bin, "run", "--server", sharedReference158(t).URL, "--session-key", apiKey, "--confirm", "risky",
		"--workspace", work, "--model", "openai/gpt-4o", "--base-url", strings.TrimRight(m.URL, "/")+"/v1",
		"--api-key", "scripted", "--json", "finish when done")
	cmd.Env = append(os.Environ(), "HOME="+t.TempDir(), "XDG_DATA_HOME="+t.TempDir())
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("gohands run --server (1.58.2) --confirm risky: %v\n%s", err, out)
	}
	// A refusal names its status; ids and timestamps may hold "422" too.
	if refused422.Match(out) || !bytes.Contains(out, []byte("all done")) {
		t.Fatalf("output:\n%s", out)
	}
}

var refused422 = regexp.MustCompile(`(?i)(http|status)[ :]*422|422 unprocessable`)

// TestReferenceServer158 runs the reference 1.58.2's own client program on
// its own server: its transcript is the golden one (the same as 1.43.1's).
func TestReferenceServer158(t *testing.T) {
	t.Parallel()
	py := testenv.Reference158Python(t)
	srv := model(t)
	ref := startReferenceServer(t, py)
	got := runClient(t, py, ref.URL, srv.URL)
	diff := cmp.Diff(readGolden(t), got)
	if diff != "" {
		// The reference's terminal is not deterministic under load.
		t.Logf("first run differs (-golden +reference), running again:\n%s", diff)
		ref = startReferenceServer(t, py)
		got = runClient(t, py, ref.URL, srv.URL)
		diff = cmp.Diff(readGolden(t), got)
	}
	checkScenarios(t, got)
	if diff != "" {
		t.Errorf("the 1.58.2 client on the 1.58.2 server differs from the golden (-golden +reference):\n%s", diff)
	}
}

// TestGohandsServer158 runs the reference 1.58.2's client program against
// `gohands serve`: the same transcript as on the reference's server.
func TestGohandsServer158(t *testing.T) {
	t.Parallel()
	want := readGolden(t)
	py := testenv.Reference158Python(t)
	srv := model(t)
	g := startGohandsServer(t)
	got := runClient(t, py, g.URL, srv.URL)
	checkScenarios(t, got)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("gohands' run with the 1.58.2 client differs from the reference's (-reference +gohands):\n%s", diff)
	}
}
