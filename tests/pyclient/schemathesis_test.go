package pyclient_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/gohands/gohands/internal/testenv"
	"github.com/gohands/gohands/llm/subscription/subscriptiontest"
)

// TestSchemathesis fuzzes `gohands serve` through its own /openapi.json
// with schemathesis: no 5xx, responses of the documented status codes,
// content types and schemas. CI runs a few examples per operation;
// GOHANDS_FULL=1 (or GOHANDS_FUZZ_EXAMPLES=n) runs the long fuzz for the
// note.
//
// Left out: starting bash commands and uploading files. They do what they
// are told by design — fuzzing them would run random commands and write
// random paths as the test's user. For the same reason an ACPAgent's
// acp_command is replaced by a missing program, and the archive routes
// archive a small directory of the test's whatever path was generated (a
// generated "/" would stream the whole disk); see
// testdata/schemathesis_hooks.py. The server gets an unreachable HTTP
// proxy, so conversations created with generated LLM settings reach no
// network, and a scripted OAuth issuer on loopback for the ChatGPT
// subscription login (the real one is out of reach: device/start would
// answer 500).
func TestSchemathesis(t *testing.T) {
	t.Parallel()
	py := testenv.ReferencePython(t)
	st := filepath.Join(filepath.Dir(py), "schemathesis")
	if _, err := os.Stat(st); err != nil {
		testenv.Missing(t, "schemathesis in the reference venv: %v", err)
	}
	// The short run (CI's) draws from a fixed seed, so that it asks the
	// same questions each time and a failure can be replayed; the long
	// run draws afresh to find what the fixed seed does not reach.
	examples, seed := 100, ""
	if testenv.Short() {
		examples, seed = 5, "1"
	}
	if n, err := strconv.Atoi(os.Getenv("GOHANDS_FUZZ_EXAMPLES")); err == nil && n > 0 {
		examples = n
	}
	if v := os.Getenv("GOHANDS_FUZZ_SEED"); v != "" {
		seed = v
	}
	issuer := subscriptiontest.NewIssuer(t)
	url := startGohandsServer(t, "HTTP_PROXY=http://127.0.0.1:9", "HTTPS_PROXY=http://127.0.0.1:9", "OH_OPENAI_SUBSCRIPTION_ISSUER="+issuer.URL).URL
	report := t.TempDir()
	ctx, cancel := context.WithTimeout(t.Context(), 60*time.Minute)
	defer cancel()
	config, err := filepath.Abs("testdata/schemathesis.toml")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"--config-file", config, "run", url + "/openapi.json",
		"--header", "X-Session-API-Key: " + apiKey,
		"--checks", "not_a_server_error,response_schema_conformance,content_type_conformance,status_code_conformance,unsupported_method",
		"--exclude-path-regex", `^/api/(bash/(start|execute)_bash_command|file/upload)$`,
		"--max-examples", strconv.Itoa(examples),
		"--workers", "2",
		"--request-timeout", "30",
		"--generation-database", "none",
		"--no-color",
		"--report", "ndjson", "--report-dir", report,
	}
	if seed != "" {
		args = append(args, "--seed", seed)
	}
	cmd := exec.CommandContext(ctx, st, args...)
	cmd.Dir = t.TempDir()
	hooks, err := filepath.Abs("testdata/schemathesis_hooks.py")
	if err != nil {
		t.Fatal(err)
	}
	archiveDir := t.TempDir()
	if err := os.WriteFile(filepath.Join(archiveDir, "notes.txt"), []byte("archived by the fuzz\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd.Env = append(os.Environ(), "SCHEMATHESIS_HOOKS="+hooks, "GOHANDS_ST_ARCHIVE_DIR="+archiveDir)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err = cmd.Run()
	keep := 4000
	if err != nil {
		keep = 30000 // the failures come before the summary
	}
	t.Logf("schemathesis, %d examples per operation, seed %q (\"\": a fresh one):\n%s", examples, seed, tail(out.Bytes(), keep))
	if err != nil {
		t.Errorf("schemathesis: %v (failures above)", err)
	}
}
