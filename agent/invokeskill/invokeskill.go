// Package invokeskill is the invoke_skill tool: the model loads the full
// instructions of a skill listed in the system prompt's
// <available_skills> by its name. The agent attaches it by itself when its
// context has skills the model may invoke (see package agent), as the
// system prompt then tells the model to call it.
//
// The skill's content is rendered first: each !`command` in it is run in
// the working directory and replaced by its output (code spans and fenced
// blocks are left alone; \!`command` is the literal text). A skill read
// from a file ends with a note saying where it lives, for the scripts and
// references it names.
//
// The tool speaks the reference's wire format: kinds InvokeSkillAction,
// InvokeSkillObservation and InvokeSkillTool, and the reference's messages.
package invokeskill

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/skill"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name; KindName its class name in
// include_default_tools.
const (
	Name     = "invoke_skill"
	KindName = "InvokeSkillTool"
)

// Action names the skill to load.
type Action struct {
	Name string `json:"name" desc:"The name of the skill, as listed in <available_skills>."`
}

// Observation is the rendered skill.
type Observation struct {
	event.ObservationBase
	SkillName string `json:"skill_name"`
}

func init() {
	event.RegisterKind[Action]("InvokeSkillAction")
	event.RegisterKind[Observation]("InvokeSkillObservation")
}

// Options configures New.
type Options struct {
	// Skills are the skills the model may ask for.
	Skills []skill.Skill
	// WorkingDir is where a skill's commands run.
	WorkingDir string
	// OnInvoke, if set, is called with the name of each skill loaded (the
	// agent records it in the conversation's invoked_skills).
	OnInvoke func(name string)
	// CommandTimeout bounds each inline command; 0 means 10 seconds.
	CommandTimeout time.Duration
}

const description = `Load a skill: call it with a name listed in <available_skills> to get that skill's full instructions, then follow them. This is the only way to load those skills.`

// New returns the invoke_skill tool.
func New(opts *Options) *tool.Typed[Action, *Observation] {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.CommandTimeout <= 0 {
		o.CommandTimeout = 10 * time.Second
	}
	return tool.New(Name, description, func(ctx context.Context, a *Action) (*Observation, error) {
		return invoke(ctx, &o, a), nil
	}, &tool.Options{
		Annotations: &event.ToolAnnotations{Title: Name, ReadOnlyHint: true, IdempotentHint: true},
		Kind:        KindName,
	})
}

// Invocable reports whether the model may invoke s with the tool: it is
// an AgentSkills-format skill or has a trigger, and does not forbid it.
func Invocable(s *skill.Skill) bool {
	return (s.IsAgentSkillsFormat || s.Trigger != nil) && !s.DisableModelInvocation
}

func invoke(ctx context.Context, o *Options, a *Action) *Observation {
	name := strings.TrimSpace(a.Name)
	fail := func(text string) *Observation {
		return &Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}, IsError: true}, SkillName: name}
	}
	i := slices.IndexFunc(o.Skills, func(s skill.Skill) bool { return s.Name == name })
	if i < 0 {
		var names []string
		for _, s := range o.Skills {
			if !s.DisableModelInvocation {
				names = append(names, s.Name)
			}
		}
		slices.Sort(names)
		avail := strings.Join(names, ", ")
		if avail == "" {
			avail = "<none>"
		}
		return fail(fmt.Sprintf("Unknown skill '%s'. Available skills: %s.", name, avail))
	}
	s := &o.Skills[i]
	if s.DisableModelInvocation {
		return fail(fmt.Sprintf("Skill '%s' cannot be invoked directly. It can only be activated by trigger matching.", name))
	}
	text := Render(ctx, s.Content, o.WorkingDir, o.CommandTimeout) + locationNote(s.Source, o.WorkingDir)
	if o.OnInvoke != nil {
		o.OnInvoke(name)
	}
	return &Observation{ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(text)}}, SkillName: name}
}

// locationNote tells the model where a skill file's directory is, relative
// to the working directory when it lies inside it.
func locationNote(source, workDir string) string {
	if source == "" {
		return ""
	}
	path, err := filepath.EvalSymlinks(source)
	if err != nil {
		return ""
	}
	if fi, err := os.Stat(path); err != nil || !fi.Mode().IsRegular() {
		return ""
	}
	dir := filepath.Dir(path)
	if workDir != "" {
		if wd, err := filepath.EvalSymlinks(workDir); err == nil {
			if rel, err := filepath.Rel(wd, dir); err == nil && rel != ".." && !strings.HasPrefix(rel, "../") {
				dir = rel
			}
		}
	}
	return fmt.Sprintf("\n\n---\nThis skill is located at `%s`. Any files it references (e.g. under `scripts/`, `references/`, `assets/`) are relative to that directory.", filepath.ToSlash(dir))
}

// MaxCommandOutput is the most output of one inline command kept.
const MaxCommandOutput = 50 * 1024

// Render runs the inline !`command`s of content in dir and puts their
// output in their place. Fenced blocks (an unclosed one runs to the end)
// and code spans are left as they are, and \!`command` becomes the literal
// !`command`. A failing command becomes an [Error: ...] note.
func Render(ctx context.Context, content, dir string, timeout time.Duration) string {
	var b strings.Builder
	for i := 0; i < len(content); {
		rest := content[i:]
		switch {
		case strings.HasPrefix(rest, "```"):
			end := strings.Index(rest[3:], "```")
			if end < 0 {
				b.WriteString(rest)
				return b.String()
			}
			b.WriteString(rest[:end+6])
			i += end + 6
		case strings.HasPrefix(rest, "\\!`"):
			if end := strings.IndexByte(rest[3:], '`'); end > 0 {
				b.WriteString(rest[1 : end+4]) // drop the backslash
				i += end + 4
				continue
			}
			b.WriteByte(content[i])
			i++
		case strings.HasPrefix(rest, "!`"):
			if end := strings.IndexByte(rest[2:], '`'); end > 0 {
				b.WriteString(runCommand(ctx, rest[2:end+2], dir, timeout))
				i += end + 3
				continue
			}
			b.WriteByte(content[i])
			i++
		case rest[0] == '`':
			if end := strings.IndexByte(rest[1:], '`'); end > 0 {
				b.WriteString(rest[:end+2])
				i += end + 2
				continue
			}
			b.WriteByte(content[i])
			i++
		default:
			b.WriteByte(content[i])
			i++
		}
	}
	return b.String()
}

func runCommand(ctx context.Context, command, dir string, timeout time.Duration) string {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "/bin/sh", "-c", command)
	cmd.Dir = dir
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		return fmt.Sprintf("[Error: Command `%s` timed out after %gs]", command, timeout.Seconds())
	case errors.As(err, &exit):
		return fmt.Sprintf("[Error: Command `%s` exited with code %d: %s]", command, exit.ExitCode(), stderr.String())
	case err != nil:
		return fmt.Sprintf("[Error: Failed to execute command `%s`: %v]", command, err)
	}
	out := strings.TrimSpace(stdout.String())
	if len(out) > MaxCommandOutput {
		cut := out[:MaxCommandOutput]
		for !utf8.ValidString(cut) {
			cut = cut[:len(cut)-1]
		}
		out = cut + "\n... [output truncated]"
	}
	return out
}
