package terminal

import (
	"os/exec"
	"slices"
	"strings"

	"github.com/gohands/gohands/tool"
)

// aliases are the names other agents give a shell tool, which models
// trained on them call.
var aliases = []string{"bash", "command", "execute", "execute_bash", "git", "reset"}

// commandAliases are aliases that are shell commands themselves: "git"
// with command "status" runs "git status".
var commandAliases = []string{"git", "reset"}

// bareCommands are read-only shell commands some models call as tools
// with no arguments; they run in the terminal.
var bareCommands = []string{"find", "git", "ls", "pwd"}

// repair is the terminal's tool.Repairer: its aliases run as they are,
// git and reset become the start of the command line (only command and
// the meta-arguments kept), a "grep" call with a pattern becomes an rg
// command line (grep when rg is not on this process's PATH, as the
// reference checks), and find, git, ls or pwd with no arguments run as
// that command.
func repair(name string, args *tool.Args) (bool, error) {
	switch {
	case name == Name:
		return true, nil
	case slices.Contains(commandAliases, name):
		prefixCommand(args, name)
		return true, nil
	case slices.Contains(aliases, name):
		return true, nil
	case name == "grep":
		cmd, ok := grepCommand(args)
		if !ok {
			return false, nil
		}
		args.KeepMeta()
		args.Set("command", cmd)
		return true, nil
	case args.Len() == 0 && slices.Contains(bareCommands, name):
		args.Set("command", name)
		return true, nil
	}
	return false, nil
}

// prefixCommand makes word the start of the command argument.
func prefixCommand(args *tool.Args, word string) {
	cmd := word
	if raw, ok := args.Get("command"); ok {
		c, isStr := args.String("command")
		if !isStr {
			c = strings.Trim(string(raw), `"`)
		}
		if f := strings.Fields(c); len(f) > 0 && f[0] == word {
			cmd = c
		} else if strings.TrimSpace(c) != "" {
			cmd = word + " " + c
		}
	}
	args.KeepMeta()
	args.Set("command", cmd)
}

// grepCommand turns a grep tool call (pattern, path, include) into a
// command line.
func grepCommand(args *tool.Args) (string, bool) {
	arg := func(k string) string {
		s, _ := args.String(k)
		if strings.TrimSpace(s) == "" {
			return ""
		}
		return s
	}
	pattern, path, include := arg("pattern"), arg("path"), arg("include")
	if pattern == "" {
		return "", false
	}
	if path == "" {
		path = "."
	}
	var parts []string
	if _, err := exec.LookPath("rg"); err == nil {
		parts = []string{"rg", "-n", "-i", pattern, path, "--sortr=modified"}
		if include != "" {
			parts = append(parts, "-g", include)
		}
	} else {
		parts = []string{"grep", "-R", "-I", "-n", "-i", pattern, path}
		if include != "" {
			parts = append(parts, "--include="+include)
		}
	}
	return tool.ShellJoin(parts), true
}
