package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/gohands/gohands/workspace/docker"
)

// runSandboxed runs `gohands run` with the same flags and task in a fresh
// container of the gohands image: the workspace and the conversation store
// are mounted at their own paths, the container shares this machine's
// network (a model server on 127.0.0.1 stays reachable as it is), and its
// output, exit status and interrupts are this process's.
func (a *app) runSandboxed(ctx context.Context, cmd *cobra.Command, f *runFlags, args []string) error {
	if f.sandbox != "docker" {
		return usageErr("--sandbox %q: the only sandbox is docker", f.sandbox)
	}
	if f.acp != "" || f.browser {
		return usageErr("--sandbox docker: --acp and --browser are not available in the sandbox image")
	}
	if f.server != "" {
		// Before the image is looked for: the flags conflict whatever
		// the engine holds.
		return usageErr("--server and --sandbox cannot be used together")
	}
	ws := f.workspace
	if ws == "" {
		var err error
		if ws, err = os.Getwd(); err != nil {
			return &exitErr{code: exitError, msg: err.Error()}
		}
	}
	ws, err := filepath.Abs(ws)
	if err != nil {
		return usageErr("--workspace: %v", err)
	}
	if st, err := os.Stat(ws); err != nil || !st.IsDir() {
		return usageErr("--workspace %s: not a directory", ws)
	}
	base, err := a.persistenceDir(f.persistenceDir)
	if err != nil {
		return err
	}
	if base, err = filepath.Abs(base); err != nil {
		return usageErr("--persistence-dir: %v", err)
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return &exitErr{code: exitError, msg: err.Error()}
	}
	vols := []string{ws + ":" + ws, base + ":" + base}
	// Files the run reads: mounted read-only at their own paths.
	files := []string{f.llmConfig, f.mcpConfig}
	if p, err := a.settingsPath(); err == nil {
		files = append(files, p)
	}
	for _, p := range files {
		if p == "" {
			continue
		}
		if abs, err := filepath.Abs(p); err == nil {
			if _, err := os.Stat(abs); err == nil {
				vols = append(vols, abs+":"+abs+":ro")
			}
		}
	}
	inner := []string{"--workspace=" + ws, "--persistence-dir=" + base}
	cmd.Flags().Visit(func(fl *pflag.Flag) {
		switch fl.Name {
		case "sandbox", "image", "workspace", "persistence-dir":
			return
		}
		if sv, ok := fl.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				inner = append(inner, "--"+fl.Name+"="+v)
			}
			return
		}
		v := fl.Value.String()
		if fl.Name == "llm-config" || fl.Name == "mcp-config" {
			if abs, err := filepath.Abs(v); err == nil {
				v = abs // the container's directory is not ours
			}
		}
		inner = append(inner, "--"+fl.Name+"="+v)
	})
	inner = append(inner, "--")
	inner = append(inner, args...)
	env := map[string]string{}
	names := append([]string{envModel, envAPIKey, envBaseURL, "HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "NO_COLOR", "TERM"}, allKeyVars()...)
	names = append(names, f.secrets...) // --secret NAME takes the value of $NAME

	for _, k := range slices.Compact(names) {
		if v := a.getenv(k); v != "" && envName.MatchString(k) {
			env[k] = v
		}
	}
	o := &docker.Options{
		Image:      f.sandboxImage,
		Entrypoint: []string{"/usr/local/bin/gohands", "run"},
		Cmd:        inner,
		Network:    "host",
		Volumes:    vols,
		Env:        env,
	}
	if uid := os.Getuid(); uid > 0 {
		o.User = fmt.Sprintf("%d:%d", uid, os.Getgid()) // files in the workspace stay the user's
	}
	code, err := docker.Run(ctx, o, &docker.Stdio{Stdin: a.stdin, Stdout: a.stdout, Stderr: a.stderr, Signals: a.signals})
	if err != nil {
		return &exitErr{code: exitError, msg: err.Error()}
	}
	if code != 0 {
		return &exitErr{code: code} // the run in the container said why
	}
	return nil
}
