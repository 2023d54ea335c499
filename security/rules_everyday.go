package security

import (
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/internal/lazyregexp"
)

// everydayRules catch the destructive commands of daily development work
// that the rules for system-wide damage do not: they lose work (history,
// uncommitted changes, a sibling project), data (databases, cloud
// resources) or credentials (private keys read into the model's context).
func everydayRules() []Rule {
	return []Rule{
		{
			ID: "git-history-destroy", Risk: event.RiskHigh,
			Description: "git commands that lose work for good: push --force (or -f, +ref, --mirror, --delete), reset --hard, clean -f with -x or -d, branch -D, reflog expire, filter-branch",
			Command: func(c *Command, _ *Input) bool {
				if c.Verb != "git" {
					return false
				}
				sub, args := gitSubcommand(c.Args)
				s, l := flagSet(args)
				switch sub {
				case "push":
					return s['f'] || l["--force"] || l["--mirror"] || l["--delete"] || s['d'] ||
						slices.ContainsFunc(args, func(a string) bool {
							return strings.HasPrefix(a, "--force") || strings.HasPrefix(a, "+") || strings.HasPrefix(a, ":")
						})
				case "reset":
					return l["--hard"]
				case "clean":
					return (s['f'] || l["--force"]) && (s['x'] || s['X'] || s['d'])
				case "branch":
					return s['D'] || (s['d'] && (s['f'] || l["--force"]))
				case "reflog":
					return slices.Contains(args, "expire") || slices.Contains(args, "delete")
				case "filter-branch", "filter-repo":
					return true
				case "checkout", "restore":
					// git checkout -- . / git restore . throw uncommitted changes away.
					return (slices.Contains(args, ".") || slices.Contains(args, ":/")) && !slices.Contains(args, "-b")
				}
				return false
			},
		},
		{
			ID: "rm-repository-or-sibling", Risk: event.RiskHigh,
			Description: "a recursive delete of a .git directory, of the workspace itself or of a directory beside it (rm -rf .git, rm -rf ../other-project, rm -rf $PWD)",
			Command: func(c *Command, in *Input) bool {
				if c.Verb != "rm" || !recursive(c.Args) {
					return false
				}
				return slices.ContainsFunc(operands(c.Args), func(p string) bool {
					p = strings.TrimSuffix(p, "/")
					if path.Base(p) == ".git" || p == "." || p == ".." || p == "$PWD" || p == "${PWD}" || strings.HasPrefix(p, "../") {
						return true
					}
					if in.WorkDir != "" && strings.HasPrefix(p, "/") {
						w := path.Clean(in.WorkDir)
						p = path.Clean(p)
						return p == w || path.Dir(p) == path.Dir(w)
					}
					return false
				})
			},
		},
		{
			ID: "rm-in-home", Risk: event.RiskHigh,
			Description: "a recursive delete of anything in the home directory named through ~ or $HOME (rm -rf ~/x, rm -r $HOME/.config): the workspace is not reached that way, so it is someone's other files",
			Command: func(c *Command, _ *Input) bool {
				if c.Verb != "rm" || !recursive(c.Args) {
					return false
				}
				return slices.ContainsFunc(operands(c.Args), inHome)
			},
		},
		{
			ID: "package-remove", Risk: event.RiskHigh,
			Description: "removing system packages: apt/apt-get/aptitude remove, purge or autoremove, dpkg -r/-P, dnf/yum remove or erase, rpm -e, pacman -R, zypper remove, apk del, snap remove",
			Command: func(c *Command, _ *Input) bool {
				args := c.Args
				has := func(words ...string) bool {
					return slices.ContainsFunc(args, func(a string) bool { return slices.Contains(words, a) })
				}
				s, l := flagSet(args)
				switch c.Verb {
				case "apt", "apt-get", "aptitude":
					return has("remove", "purge", "autoremove", "autopurge")
				case "dpkg":
					return s['r'] || s['P'] || l["--remove"] || l["--purge"]
				case "dnf", "yum", "microdnf":
					return has("remove", "erase", "autoremove")
				case "rpm":
					return s['e'] || l["--erase"]
				case "pacman":
					return s['R'] || l["--remove"]
				case "zypper":
					return has("remove", "rm")
				case "apk":
					return has("del")
				case "snap":
					return has("remove")
				}
				return false
			},
		},
		{
			ID: "chmod-world-writable", Risk: event.RiskHigh,
			Description: "recursive chmod that makes files writable by everyone (chmod -R 777 ., chmod -R o+w src)",
			Command: func(c *Command, _ *Input) bool {
				if c.Verb != "chmod" || !recursive(c.Args) {
					return false
				}
				ops := operands(c.Args)
				return len(ops) >= 2 && worldWritable(ops[0])
			},
		},
		{
			ID: "database-destroy", Risk: event.RiskHigh,
			Description: "SQL that drops or empties data: DROP DATABASE/SCHEMA/TABLE, TRUNCATE, DELETE FROM without WHERE; dropdb, redis-cli FLUSHALL",
			Text:        regexp.MustCompile(`(?i)\bdrop\s+(database|schema|table|collection)\b|\btruncate\s+(table\s+)?\w|\bdelete\s+from\s+[\w."]+\s*(;|"|'|$)|\bdropdb\b|\bflushall\b|\bflushdb\b|\.dropdatabase\(`),
		},
		{
			ID: "infrastructure-destroy", Risk: event.RiskHigh,
			Description: "commands that delete cloud or cluster resources: terraform/tofu destroy (or apply -destroy), pulumi destroy, kubectl/helm delete, aws s3 rm --recursive or rb --force, gcloud … delete, az … delete, docker system/volume prune, docker rm -f of everything",
			Command: func(c *Command, _ *Input) bool {
				args := c.Args
				switch c.Verb {
				case "terraform", "tofu", "terragrunt":
					return slices.Contains(args, "destroy") || slices.Contains(args, "apply") && slices.Contains(args, "-destroy")
				case "pulumi":
					return slices.Contains(args, "destroy") || slices.Contains(args, "rm") && slices.Contains(args, "stack")
				case "kubectl", "oc":
					return slices.Contains(args, "delete") || slices.Contains(args, "drain")
				case "helm":
					return slices.Contains(args, "uninstall") || slices.Contains(args, "delete")
				case "aws":
					if slices.Contains(args, "s3") {
						_, l := flagSet(args)
						return slices.Contains(args, "rm") && l["--recursive"] || slices.Contains(args, "rb") && l["--force"]
					}
					return slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "delete-") || strings.HasPrefix(a, "terminate-") })
				case "gcloud", "az", "doctl":
					return slices.Contains(args, "delete")
				case "gsutil":
					return slices.Contains(args, "rm") && slices.Contains(args, "-r") || slices.Contains(args, "rb")
				case "docker", "podman":
					if slices.Contains(args, "prune") {
						s, l := flagSet(args)
						return s['a'] || l["--all"] || l["--volumes"] || slices.Contains(args, "volume")
					}
					return false
				}
				return false
			},
		},
		{
			ID: "read-private-keys", Risk: event.RiskHigh,
			Description: "reading private keys or credentials into the conversation: cat/less/cp/base64 … ~/.ssh/id_*, ~/.aws/credentials, file_editor view of them",
			Action: func(in *Input) bool {
				if in.Tool == "file_editor" || in.Tool == "str_replace_editor" {
					p, _ := in.Args["path"].(string)
					return privateKeyFile.MatchString(Normalize(p))
				}
				for _, c := range in.Commands {
					switch c.Verb {
					case "cat", "less", "more", "head", "tail", "base64", "xxd", "od", "cp", "scp", "strings", "grep", "tar", "zip":
						if slices.ContainsFunc(operands(c.Args), privateKeyFile.MatchString) {
							return true
						}
					}
				}
				return false
			},
		},
	}
}

// privateKeyFile matches paths of private keys and credential stores (not
// public keys or known_hosts).
var privateKeyFile = lazyregexp.New(`(^|/)(\.ssh/(id_[a-z0-9]+|[^/]*_key|[^/]*\.pem)$|\.ssh/?$|\.ssh/\*|\.aws/credentials$|\.config/gcloud/.*credentials|\.kube/config$|\.netrc$|\.git-credentials$|\.gnupg(/|$))`)

// gitSubcommand skips git's global options (-C dir, -c k=v, --git-dir=…)
// and returns the subcommand and its arguments.
func gitSubcommand(args []string) (string, []string) {
	for i := 0; i < len(args); i++ {
		a := args[i]
		switch {
		case a == "-C" || a == "-c" || a == "--git-dir" || a == "--work-tree" || a == "--namespace":
			i++
		case strings.HasPrefix(a, "-"):
		default:
			return a, args[i+1:]
		}
	}
	return "", nil
}

// inHome reports whether p names something in the home directory through ~
// or $HOME (the whole home is rm-recursive-important's).
func inHome(p string) bool {
	for _, h := range []string{"~/", "$HOME/", "${HOME}/"} {
		if rest, ok := strings.CutPrefix(p, h); ok && strings.Trim(rest, "/") != "" {
			return true
		}
	}
	return false
}

// worldWritable reports whether a chmod mode gives others write access:
// an octal mode whose last digit has the write bit (777, 666, 0757), or a
// symbolic one adding w for o or a (o+w, a+rwx, ugo=rwx).
func worldWritable(mode string) bool {
	if mode != "" && strings.Trim(mode, "01234567") == "" {
		return (mode[len(mode)-1]-'0')&2 != 0
	}
	for clause := range strings.SplitSeq(mode, ",") {
		i := strings.IndexAny(clause, "+=")
		if i < 0 || !strings.Contains(clause[i+1:], "w") {
			continue
		}
		who := clause[:i]
		if strings.ContainsAny(who, "oa") {
			return true
		}
	}
	return false
}
