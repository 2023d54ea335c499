// Package eval measures agent configurations on suites of tasks, the way
// the OpenHands paper validates its SDK: each task prepares a workspace,
// gives the agent an instruction and lets a verify command decide.
//
// A suite is a directory of task directories, each with a task.json
// manifest (see Task) and usually a "repo" directory copied into the
// workspace, or a JSONL file of manifests or SWE-Bench rows. Three
// variants share the format: plain tasks, SWE-Bench-style issues (a
// repository at a commit, a problem statement, tests that must pass after
// the patch) and integration tests in the paper's shape (setup, tools,
// verify).
//
// Run runs a suite against one or more Configs, each task in a fresh
// workspace from a Sandbox — LocalSandbox (a temporary directory, the
// default) or DockerSandbox (a container of the gohands image, whose agent
// server runs the agent) — with a parallelism, time and step limits, and
// resumption: a results directory keeps, per configuration and task, the
// conversation in the standard layout, the patch, the verifier's output
// and result.json, and for the whole summary.json and summary.md. A task's failure is a Result with an
// Outcome and a reason, never an error of the suite.
//
// Package eval/starter holds a small starter suite and a scripted model's
// playbook that solves it; gohands eval is the command line over this
// package.
package eval
