// Package testenv lets tests state what they need from the machine: a
// program on PATH, a Python venv, a Docker engine. A missing prerequisite
// fails the test under CI=true (the test command installs everything, so a
// gap is a bug) and skips it elsewhere.
package testenv

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// InCI reports whether the tests run under the project's test command.
func InCI() bool { return os.Getenv("CI") == "true" }

// Missing fails t under CI and skips it otherwise, with the reason.
func Missing(t testing.TB, format string, args ...any) {
	t.Helper()
	if InCI() {
		t.Fatalf("prerequisite missing: "+format, args...)
	}
	t.Skipf("prerequisite missing: "+format, args...)
}

// Program returns the path of prog on PATH, or reports it missing.
func Program(t testing.TB, prog string) string {
	t.Helper()
	p, err := exec.LookPath(prog)
	if err != nil {
		Missing(t, "%s: %v", prog, err)
	}
	return p
}

// Short reports whether slow tests should run at their small size: always
// under -short, and in CI unless GOHANDS_FULL=1.
func Short() bool {
	return testing.Short() || os.Getenv("GOHANDS_FULL") != "1"
}

// ReferencePython returns the python of the venv holding the Python
// reference (openhands-sdk and friends, schemathesis), installed by
// scripts/deps.d/20-reference.sh: $GOHANDS_REFERENCE_PYTHON if set, else
// the path the script records in
// ${GOHANDS_CACHE:-~/.cache/gohands}/reference/python. It reports the venv
// missing otherwise.
func ReferencePython(t testing.TB) string {
	t.Helper()
	return venvPython(t, "GOHANDS_REFERENCE_PYTHON", "reference", "scripts/deps.d/20-reference.sh")
}

// Reference158Python returns the python of the venv holding the Python
// reference 1.58.2, installed by scripts/deps.d/21-reference158.sh:
// $GOHANDS_REFERENCE158_PYTHON if set, else the path the script records in
// ${GOHANDS_CACHE:-~/.cache/gohands}/reference158/python. It reports the
// venv missing otherwise.
func Reference158Python(t testing.TB) string {
	t.Helper()
	return venvPython(t, "GOHANDS_REFERENCE158_PYTHON", "reference158", "scripts/deps.d/21-reference158.sh")
}

// OpenAIClientPython returns the python of the venv holding OpenAI's
// Python client, installed by scripts/deps.d/41-openai-client.sh:
// $GOHANDS_OPENAI_PYTHON if set, else the path the script records in
// ${GOHANDS_CACHE:-~/.cache/gohands}/openai-client/python.
func OpenAIClientPython(t testing.TB) string {
	t.Helper()
	return venvPython(t, "GOHANDS_OPENAI_PYTHON", "openai-client", "scripts/deps.d/41-openai-client.sh")
}

// OpenHandsAppPython returns the python of the venv holding the OpenHands
// app server (openhands-ai), installed by scripts/deps.d/22-openhands-app.sh:
// $GOHANDS_OPENHANDS_APP_PYTHON if set, else the path the script records in
// ${GOHANDS_CACHE:-~/.cache/gohands}/openhands-app/python.
func OpenHandsAppPython(t testing.TB) string {
	t.Helper()
	return venvPython(t, "GOHANDS_OPENHANDS_APP_PYTHON", "openhands-app", "scripts/deps.d/22-openhands-app.sh")
}

func venvPython(t testing.TB, env, dir, script string) string {
	t.Helper()
	p := os.Getenv(env)
	if p == "" {
		cache := os.Getenv("GOHANDS_CACHE")
		if cache == "" {
			home, err := os.UserHomeDir()
			if err != nil {
				Missing(t, "reference venv: %v", err)
			}
			cache = filepath.Join(home, ".cache", "gohands")
		}
		b, err := os.ReadFile(filepath.Join(cache, dir, "python"))
		if err != nil {
			Missing(t, "reference venv (run %s): %v", script, err)
		}
		p = strings.TrimSpace(string(b))
	}
	if _, err := os.Stat(p); err != nil {
		Missing(t, "reference venv python (run %s): %v", script, err)
	}
	return p
}
