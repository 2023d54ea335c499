package security

import (
	"path"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/lazyregexp"
)

// A Rule is one check of the RuleAnalyzer. Exactly one of Text, Command and
// Action is set. Rules are plain data: add your own with RuleAnalyzer.Extra.
type Rule struct {
	// ID names the rule in reports and tests.
	ID string
	// Risk is the rating when the rule matches.
	Risk event.SecurityRisk
	// Description says, for people, what the rule catches.
	Description string
	// Text matches the normalised text of the action: every string of its
	// arguments, the tool name, and the model's thought and summary.
	Text *regexp.Regexp
	// Command matches one simple shell command of a terminal action,
	// nested ones (substitutions, sh -c, eval) included.
	Command func(c *Command, in *Input) bool
	// Action matches the whole action.
	Action func(in *Input) bool
}

// Input is what rules see of one action.
type Input struct {
	// Tool is the tool's name.
	Tool string
	// Args are the decoded arguments of the tool call (nil if they are not
	// a JSON object).
	Args map[string]any
	// Script is the normalised shell command for terminal actions.
	Script string
	// Commands are the simple commands of Script.
	Commands []*Command
	// Text is the normalised text of the action (see Rule.Text).
	Text string
	// WorkDir is the workspace the agent works in; "" if unknown.
	WorkDir string
	// SecretNames are names of secrets (environment variables) known to
	// the conversation.
	SecretNames []string
}

// matches reports whether r matches in.
func (r *Rule) matches(in *Input) bool {
	switch {
	case r.Text != nil:
		return r.Text.MatchString(in.Text)
	case r.Command != nil:
		return slices.ContainsFunc(in.Commands, func(c *Command) bool { return r.Command(c, in) })
	case r.Action != nil:
		return r.Action(in)
	}
	return false
}

// importantPaths are deletion targets that would ruin a machine or a home.
var importantPaths = map[string]bool{
	"/": true, "/*": true, "~": true, "~/": true, "~/*": true, "*": true, "/.": true, ".*": true,
	"$HOME": true, "${HOME}": true, "$HOME/": true, "${HOME}/": true, "$HOME/*": true, "${HOME}/*": true,
}

// systemDirs are top-level directories of the operating system.
var systemDirs = []string{
	"/etc", "/usr", "/var", "/home", "/boot", "/bin", "/sbin", "/lib", "/lib32", "/lib64",
	"/opt", "/root", "/sys", "/proc", "/dev", "/srv", "/System", "/Library", "/Users", "/Applications",
}

// isImportant reports whether p is a path whose recursive deletion or
// permission change is catastrophic: the root, a home, everything (*), or a
// system directory itself (not a file deep inside it).
func isImportant(p string) bool {
	if importantPaths[p] {
		return true
	}
	clean := strings.TrimSuffix(strings.TrimSuffix(p, "*"), "/")
	if clean == "" {
		return true
	}
	clean = path.Clean(clean)
	if slices.Contains(systemDirs, clean) {
		return true
	}
	// /home/user or /Users/name: a whole home directory.
	if d := path.Dir(clean); (d == "/home" || d == "/Users") && clean != d {
		return true
	}
	return false
}

// inSystemDir reports whether p lies in (or is) a system directory.
func inSystemDir(p string) bool {
	if !strings.HasPrefix(p, "/") {
		return false
	}
	p = path.Clean(p)
	for _, d := range systemDirs {
		if d == "/home" || d == "/Users" || d == "/opt" || d == "/srv" {
			continue // homes and /opt hold user files; handled as outside the workspace
		}
		if p == d || strings.HasPrefix(p, d+"/") {
			return true
		}
	}
	return false
}

// flagSet reports which single-letter flags appear in args (combined like
// -rf or separate like -r -f) and which long flags.
func flagSet(args []string) (short map[rune]bool, long map[string]bool) {
	short, long = map[rune]bool{}, map[string]bool{}
	for _, a := range args {
		switch {
		case a == "--":
			return
		case strings.HasPrefix(a, "--"):
			long[a] = true
		case strings.HasPrefix(a, "-") && len(a) > 1:
			for _, r := range a[1:] {
				short[r] = true
			}
		}
	}
	return
}

func operands(args []string) []string {
	var out []string
	dashdash := false
	for _, a := range args {
		if a == "--" && !dashdash {
			dashdash = true
			continue
		}
		if !dashdash && strings.HasPrefix(a, "-") && len(a) > 1 {
			continue
		}
		out = append(out, a)
	}
	return out
}

func recursive(args []string) bool {
	s, l := flagSet(args)
	return s['r'] || s['R'] || l["--recursive"]
}

// fetchers download from the network.
func isFetcher(verb string) bool {
	switch verb {
	case "curl", "wget", "fetch", "aria2c", "http", "https", "xh", "lwp-request", "GET":
		return true
	}
	return false
}

// isSender can send data over the network.
func isSender(verb string) bool {
	if isFetcher(verb) {
		return true
	}
	switch verb {
	case "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "rsync", "ftp", "openssl", "ssh":
		return true
	}
	return false
}

// secretFile matches paths of credentials and keys.
var secretFile = lazyregexp.New(`(?i)(^|[/~\s"'=@<])(\.ssh(/|$)|id_(rsa|dsa|ecdsa|ed25519)|\.aws(/|$)|\.config/gcloud|\.azure(/|$)|\.kube/config|\.netrc|\.git-credentials|\.npmrc|\.pypirc|\.docker/config\.json|\.gnupg|/etc/shadow|\.env(\.[\w.-]+)?$|\.pem$|\.key$|credentials(\.json)?$)`)

// secretVar matches references to environment variables whose names look
// like secrets.
var secretVar = lazyregexp.New(`(?i)\$\{?[A-Z0-9_]*(KEY|TOKEN|SECRET|PASSW|PASSWD|PWD|CREDENTIAL|AUTH|PRIVATE|SESSION|COOKIE)[A-Z0-9_]*\}?`)

// dumpsEnv are commands that print the environment.
func dumpsEnv(c *Command) bool {
	switch c.Verb {
	case "env", "printenv", "set", "declare":
		return len(operands(c.Args)) == 0
	case "export":
		return len(c.Args) == 0 || c.Args[0] == "-p"
	case "cat", "strings", "xxd", "base64":
		return slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "/proc/") && strings.HasSuffix(a, "/environ") })
	}
	return false
}

// carriesSecret reports whether a word refers to secret material.
func carriesSecret(w string, in *Input) bool {
	if secretFile.MatchString(w) || secretVar.MatchString(w) {
		return true
	}
	for _, name := range in.SecretNames {
		if name != "" && (strings.Contains(w, "$"+name) || strings.Contains(w, "${"+name+"}")) {
			return true
		}
	}
	return false
}

// DefaultRules returns the rules of the RuleAnalyzer, most severe first,
// each documented in its Description. The table is built on first use, not
// at start: its regular expressions would cost every program that imports
// the package, rating actions or not.
func DefaultRules() []Rule { return slices.Clone(defaultRules()) }

// defaultRules is the table DefaultRules copies, shared by the analyzers.
var defaultRules = sync.OnceValue(func() []Rule {
	rules := systemRules()
	// The everyday rules go after the system-wide HIGH rules and before
	// the MEDIUM ones, keeping the table ordered most severe first.
	i := slices.IndexFunc(rules, func(r Rule) bool { return r.Risk != event.RiskHigh })
	if i < 0 {
		i = len(rules)
	}
	return slices.Insert(rules, i, everydayRules()...)
})

// systemRules catch damage to the whole machine, leaks of secrets and
// attempts to subvert the model.
func systemRules() []Rule {
	return []Rule{
		{
			ID: "rm-recursive-important", Risk: event.RiskHigh,
			Description: "recursive delete of /, a home directory, * or a system directory (rm -rf /, rm -r -f ~, rm --recursive --force /etc)",
			Command: func(c *Command, _ *Input) bool {
				if c.Verb != "rm" || !recursive(c.Args) {
					return false
				}
				_, l := flagSet(c.Args)
				return l["--no-preserve-root"] || slices.ContainsFunc(operands(c.Args), isImportant)
			},
		},
		{
			ID: "sudo-rm", Risk: event.RiskHigh,
			Description: "rm with recursive or force flags run as root (sudo, doas, su -c)",
			Command: func(c *Command, _ *Input) bool {
				if !c.Sudo || c.Verb != "rm" {
					return false
				}
				s, l := flagSet(c.Args)
				return s['r'] || s['R'] || s['f'] || l["--recursive"] || l["--force"]
			},
		},
		{
			ID: "find-delete-important", Risk: event.RiskHigh,
			Description: "find starting at / (or a home or system directory) with -delete or -exec rm",
			Command: func(c *Command, _ *Input) bool {
				if c.Verb != "find" || len(c.Args) == 0 || !isImportant(c.Args[0]) {
					return false
				}
				for i, a := range c.Args {
					if a == "-delete" || (a == "-exec" || a == "-execdir") && i+1 < len(c.Args) && path.Base(c.Args[i+1]) == "rm" {
						return true
					}
				}
				return false
			},
		},
		{
			ID: "fetch-pipe-interpreter", Risk: event.RiskHigh,
			Description: "downloaded content run by a shell or interpreter: curl … | sh, wget -O- … | python, bash <(curl …), sh -c \"$(curl …)\", eval \"$(wget …)\"",
			Command: func(c *Command, _ *Input) bool {
				if !isInterpreter(c.Verb) && c.Verb != "eval" && c.Verb != "source" && c.Verb != "." {
					return false
				}
				for _, p := range c.Pipeline[:c.Index] {
					if isFetcher(p.Verb) {
						return true
					}
				}
				return slices.ContainsFunc(c.Subs, func(s *Command) bool { return isFetcher(s.Verb) })
			},
		},
		{
			ID: "fetch-then-run", Risk: event.RiskHigh,
			Description: "a script downloaded to a file and run later in the same command: curl -o i.sh URL && sh i.sh",
			Action: func(in *Input) bool {
				saved := map[string]bool{}
				for _, c := range in.Commands {
					if isFetcher(c.Verb) {
						for i, a := range c.Args {
							if (a == "-o" || a == "-O" || a == "--output" || a == "--output-document") && i+1 < len(c.Args) && c.Args[i+1] != "-" {
								saved[path.Clean(c.Args[i+1])] = true
							} else if v, ok := strings.CutPrefix(a, "--output-document="); ok && v != "-" {
								saved[path.Clean(v)] = true
							}
						}
						for i, w := range c.Words {
							if strings.HasPrefix(w, ">") && i+1 < len(c.Words) {
								saved[path.Clean(c.Words[i+1])] = true
							}
						}
						continue
					}
					if len(saved) == 0 || len(c.Words) == 0 {
						continue
					}
					if saved[path.Clean(c.Words[0])] || (isInterpreter(c.Verb) || c.Verb == "source" || c.Verb == ".") && slices.ContainsFunc(operands(c.Args), func(a string) bool { return saved[path.Clean(a)] }) {
						return true
					}
				}
				return false
			},
		},
		{
			ID: "chmod-chown-system", Risk: event.RiskHigh,
			Description: "recursive chmod/chown/chgrp of /, a home or a system directory, or world-writable permissions (777) on one of them",
			Command: func(c *Command, _ *Input) bool {
				if c.Verb != "chmod" && c.Verb != "chown" && c.Verb != "chgrp" {
					return false
				}
				ops := operands(c.Args)
				if len(ops) < 2 {
					return false
				}
				targets := ops[1:]
				if !slices.ContainsFunc(targets, isImportant) {
					return false
				}
				mode := ops[0]
				return recursive(c.Args) || c.Verb == "chmod" && (strings.HasSuffix(mode, "777") || strings.Contains(mode, "+rwx") || mode == "a+w" || mode == "o+w")
			},
		},
		{
			ID: "disk-destroy", Risk: event.RiskHigh,
			Description: "disk tools on devices: mkfs*, dd of=/dev/…, fdisk/sfdisk/parted/wipefs/shred/blkdiscard on /dev/…, redirection into a disk device",
			Command: func(c *Command, _ *Input) bool {
				if strings.HasPrefix(c.Verb, "mkfs") || c.Verb == "mke2fs" || c.Verb == "mkswap" {
					return true
				}
				onDevice := slices.ContainsFunc(c.Args, isDiskDevice)
				switch c.Verb {
				case "dd":
					return slices.ContainsFunc(c.Args, func(a string) bool { return strings.HasPrefix(a, "of=") && isDiskDevice(a[3:]) })
				case "fdisk", "sfdisk", "cfdisk", "gdisk", "sgdisk", "parted", "wipefs", "shred", "blkdiscard", "hdparm":
					return onDevice
				}
				for i, w := range c.Words {
					if strings.HasPrefix(w, ">") && i+1 < len(c.Words) && isDiskDevice(c.Words[i+1]) {
						return true
					}
				}
				return false
			},
		},
		{
			ID: "interpreter-destructive", Risk: event.RiskHigh,
			Description: "inline code (python -c, perl -e, node -e, ruby -e) that deletes /, a home or a system directory recursively, or runs such a shell command",
			Command: func(c *Command, _ *Input) bool {
				if !isInterpreter(c.Verb) || isShell(c.Verb) {
					return false
				}
				for i, a := range c.Args {
					if (a == "-c" || a == "-e" || a == "-E" || a == "--eval") && i+1 < len(c.Args) && destructiveCode.MatchString(c.Args[i+1]) {
						return true
					}
				}
				return false
			},
		},
		{
			ID: "fork-bomb", Risk: event.RiskHigh,
			Description: "a fork bomb such as :(){ :|:& };:",
			Text:        regexp.MustCompile(`([\w:.]+)\s*\(\)\s*\{\s*([\w:.]+)\s*\|\s*([\w:.]+)\s*&\s*\}\s*;?\s*([\w:.]+)|:\(\)\{:\|:&\};:`),
		},
		{
			ID: "exfiltrate-secrets", Risk: event.RiskHigh,
			Description: "a network command sending secrets: env vars named like secrets or listed as secrets, ~/.ssh, ~/.aws, .env and key files, or the environment (env | curl)",
			Command: func(c *Command, in *Input) bool {
				if !isSender(c.Verb) {
					// cat ~/.ssh/id_rsa | curl …, env | nc …
					if c.Index+1 < len(c.Pipeline) && slices.ContainsFunc(c.Pipeline[c.Index+1:], func(n *Command) bool { return isSender(n.Verb) }) {
						return dumpsEnv(c) || slices.ContainsFunc(c.Args, func(a string) bool { return carriesSecret(a, in) })
					}
					return false
				}
				if slices.ContainsFunc(c.Args, func(a string) bool { return carriesSecret(a, in) }) {
					return true
				}
				return slices.ContainsFunc(c.Subs, func(s *Command) bool {
					return dumpsEnv(s) || slices.ContainsFunc(s.Args, func(a string) bool { return carriesSecret(a, in) })
				})
			},
		},
		{
			ID: "write-system-file", Risk: event.RiskHigh,
			Description: "file_editor writing inside a system directory (/etc, /usr, /bin, /boot, /root, …) or to a credentials or key file (~/.ssh/…, .env, …); in the shell, a redirection, tee, cp, mv, install or ln onto one",
			Action: func(in *Input) bool {
				if p, ok := editorWritePath(in); ok {
					return inSystemDir(p) || secretFile.MatchString(p)
				}
				sensitive := func(p string) bool {
					return inSystemDir(p) && !isHarmlessDevice(p) || secretFile.MatchString(p)
				}
				for _, c := range in.Commands {
					for i, w := range c.Words {
						if strings.HasPrefix(w, ">") && i+1 < len(c.Words) && sensitive(c.Words[i+1]) {
							return true
						}
					}
					ops := operands(c.Args)
					switch c.Verb {
					case "tee":
						if slices.ContainsFunc(ops, sensitive) {
							return true
						}
					case "cp", "mv", "install", "ln":
						if len(ops) >= 2 && sensitive(ops[len(ops)-1]) {
							return true
						}
					}
				}
				return false
			},
		},
		{
			ID: "prompt-injection", Risk: event.RiskHigh,
			Description: "text telling the model to ignore, disregard, forget, override or bypass its previous instructions",
			Text:        regexp.MustCompile(`(?i)\b(ignore|disregard|forget|override|bypass)\s+(all\s+|any\s+|the\s+|your\s+)*(previous|prior|above|earlier|preceding)\s+(instructions?|prompts?|rules?|directives?)`),
		},
		{
			ID: "write-outside-workspace", Risk: event.RiskMedium,
			Description: "file_editor create/str_replace/insert/undo_edit on a path outside the workspace",
			Action: func(in *Input) bool {
				p, ok := editorWritePath(in)
				if !ok || in.WorkDir == "" {
					return false
				}
				if !strings.HasPrefix(p, "/") {
					p = path.Join(in.WorkDir, p)
				}
				rel := strings.TrimPrefix(path.Clean(p), path.Clean(in.WorkDir))
				return rel == path.Clean(p) || rel != "" && !strings.HasPrefix(rel, "/")
			},
		},
		{
			ID: "network-fetch", Risk: event.RiskMedium,
			Description: "a network transfer (curl, wget, nc, scp, rsync to a host, …)",
			Command: func(c *Command, _ *Input) bool {
				if isFetcher(c.Verb) {
					return true
				}
				switch c.Verb {
				case "nc", "ncat", "netcat", "socat", "telnet", "scp", "sftp", "ftp":
					return true
				case "rsync":
					return slices.ContainsFunc(operands(c.Args), func(a string) bool { return strings.Contains(a, ":") })
				}
				return false
			},
		},
		{
			ID: "role-override", Risk: event.RiskMedium,
			Description: "text trying to switch the model's role: \"you are now in … mode\", \"pretend you are/to be (a) different …\"",
			Text:        regexp.MustCompile(`(?i)\byou\s+are\s+now\s+(in\s+)?(\w+\s+)?mode\b|\bpretend\s+(you\s+are|to\s+be)\s+(a\s+)?different\b`),
		},
	}
}

// destructiveCode finds, in a program's source, a recursive delete of an
// important path: rmtree('/'), rm -rf ~ in a string, FileUtils.rm_rf('/').
var destructiveCode = lazyregexp.New(`(?i)(rmtree|rm_rf|rmSync|rimraf|remove_dir_all)\s*\(\s*['"](/|~|/etc|/usr|/var|/home|/boot)/?['"]|\brm\s+(-[a-z]*r[a-z]*\s+|--recursive\s+)+(-[a-z]+\s+)*(/|~|\$HOME|/etc|/usr|/var|/home|/boot)/?\*?(\s|['"]|$)`)

// isDiskDevice reports whether p names a block device.
func isDiskDevice(p string) bool {
	return strings.HasPrefix(p, "/dev/") && !isHarmlessDevice(p)
}

func isHarmlessDevice(p string) bool {
	switch p {
	case "/dev/null", "/dev/zero", "/dev/stdout", "/dev/stderr", "/dev/stdin", "/dev/tty", "/dev/random", "/dev/urandom", "/dev/ptmx":
		return true
	}
	return strings.HasPrefix(p, "/dev/fd/") || strings.HasPrefix(p, "/dev/pts/") || strings.HasPrefix(p, "/dev/shm/")
}

// editorWritePath returns the path a file_editor action writes to.
func editorWritePath(in *Input) (string, bool) {
	if in.Tool != "file_editor" && in.Tool != "str_replace_editor" {
		return "", false
	}
	cmd, _ := in.Args["command"].(string)
	p, _ := in.Args["path"].(string)
	switch cmd {
	case "create", "str_replace", "insert", "undo_edit":
		return Normalize(p), p != ""
	}
	return "", false
}
