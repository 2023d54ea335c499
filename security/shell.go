package security

import (
	"path"
	"strings"
)

// Command is one simple shell command as the rule-based analyzer sees it:
// its words with quotes removed, where it sits in a pipeline, and the
// scripts of the command and process substitutions it contains.
type Command struct {
	// Words are the command's words, unquoted, including any prefix such as
	// sudo or VAR=value assignments.
	Words []string
	// Verb is the base name of the program run once prefixes (sudo, env,
	// nohup, time, command, exec, VAR=value) are skipped; "" if none.
	Verb string
	// Args are the words after Verb.
	Args []string
	// Sudo reports whether the command runs through sudo, doas or su.
	Sudo bool
	// Pipeline holds every command of the pipeline this one belongs to, in
	// order; Index is this command's position in it.
	Pipeline []*Command
	Index    int
	// Subs are the commands of $(…), `…`, <(…) and >(…) inside this
	// command's words.
	Subs []*Command
}

// parseShell splits a script into simple commands, nested ones (from
// substitutions and sh -c / eval strings) included, in a forgiving way: it
// never fails, since the analyzer must rate malformed input too.
func parseShell(script string) []*Command {
	return parseDepth(script, 0)
}

const maxShellDepth = 4

func parseDepth(script string, depth int) []*Command {
	p := &shellParser{src: script, depth: depth}
	p.run()
	var all []*Command
	for _, c := range p.cmds {
		all = append(all, c)
		all = append(all, c.Subs...)
	}
	return all
}

type shellParser struct {
	src   string
	i     int
	depth int

	word    strings.Builder
	inWord  bool
	cur     *Command
	pipe    []*Command
	cmds    []*Command
	pending []*Command // substitution commands of the current command
}

func (p *shellParser) flushWord() {
	if !p.inWord {
		return
	}
	if p.cur == nil {
		p.cur = &Command{}
	}
	p.cur.Words = append(p.cur.Words, p.word.String())
	p.word.Reset()
	p.inWord = false
}

func (p *shellParser) endCommand() {
	p.flushWord()
	if p.cur == nil && len(p.pending) > 0 {
		p.cur = &Command{}
	}
	if p.cur != nil {
		p.cur.Subs = append(p.cur.Subs, p.pending...)
		p.pending = nil
		p.cur.Index = len(p.pipe)
		p.pipe = append(p.pipe, p.cur)
		p.cur = nil
	}
}

func (p *shellParser) endPipeline() {
	p.endCommand()
	for _, c := range p.pipe {
		c.Pipeline = p.pipe
		finishCommand(c, p.depth)
		p.cmds = append(p.cmds, c)
	}
	p.pipe = nil
}

// sub reads a nested script up to the bracket matching the one just
// consumed and returns its commands.
func (p *shellParser) sub(closer byte) {
	start, level := p.i, 1
	opener := byte('(')
	for p.i < len(p.src) {
		c := p.src[p.i]
		switch {
		case c == '\\':
			p.i++
		case c == '\'' && closer != '`':
			if j := strings.IndexByte(p.src[p.i+1:], '\''); j >= 0 {
				p.i += j + 1
			}
		case c == closer && closer == '`':
			level = 0
		case c == opener && closer == ')':
			level++
		case c == closer:
			level--
		}
		p.i++
		if level == 0 {
			break
		}
	}
	end := p.i - 1
	if level != 0 || end < start {
		end = len(p.src)
	}
	if p.depth < maxShellDepth {
		p.pending = append(p.pending, parseDepth(p.src[start:end], p.depth+1)...)
	}
	p.word.WriteString("$(…)")
	p.inWord = true
}

func (p *shellParser) run() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		p.i++
		switch c {
		case ' ', '\t', '\r':
			p.flushWord()
		case '\n', ';':
			p.endPipeline()
		case '&':
			if p.peek() == '&' {
				p.i++
			} else if p.peek() == '>' { // &> file
				p.flushWord()
				continue
			}
			p.endPipeline()
		case '|':
			if p.peek() == '|' {
				p.i++
				p.endPipeline()
			} else {
				if p.peek() == '&' {
					p.i++
				}
				p.endCommand()
			}
		case '(', ')', '{', '}':
			// Grouping: the bracket separates commands. A brace glued to
			// a word (${HOME}, a{b,c}) stays in the word.
			if (c == '{' || c == '}') && p.inWord {
				p.word.WriteByte(c)
				continue
			}
			p.endPipeline()
		case '<', '>':
			if p.peek() == '(' { // process substitution
				p.flushWord()
				p.i++
				p.sub(')')
				p.flushWord()
				continue
			}
			// A redirection is kept as its own word so rules can see
			// the target that follows.
			p.flushWord()
			var op strings.Builder
			op.WriteString(string(c))
			for p.peek() == '>' || p.peek() == '&' || p.peek() == '<' {
				op.WriteString(string(p.src[p.i]))
				p.i++
			}
			p.word.WriteString(op.String())
			p.inWord = true
			p.flushWord()
		case '\\':
			if p.i < len(p.src) {
				if p.src[p.i] != '\n' {
					p.word.WriteByte(p.src[p.i])
					p.inWord = true
				}
				p.i++
			}
		case '\'':
			p.inWord = true
			j := strings.IndexByte(p.src[p.i:], '\'')
			if j < 0 {
				j = len(p.src) - p.i
			}
			p.word.WriteString(p.src[p.i : p.i+j])
			p.i += j + 1
		case '"':
			p.inWord = true
			p.doubleQuoted()
		case '`':
			p.sub('`')
		case '$':
			if p.peek() == '(' {
				p.i++
				p.sub(')')
				continue
			}
			p.word.WriteByte(c)
			p.inWord = true
		default:
			p.word.WriteByte(c)
			p.inWord = true
		}
	}
	p.endPipeline()
}

func (p *shellParser) doubleQuoted() {
	for p.i < len(p.src) {
		c := p.src[p.i]
		p.i++
		switch c {
		case '"':
			return
		case '\\':
			if p.i < len(p.src) {
				p.word.WriteByte(p.src[p.i])
				p.i++
			}
		case '`':
			p.sub('`')
		case '$':
			if p.peek() == '(' {
				p.i++
				p.sub(')')
				continue
			}
			p.word.WriteByte(c)
		default:
			p.word.WriteByte(c)
		}
	}
}

func (p *shellParser) peek() byte {
	if p.i < len(p.src) {
		return p.src[p.i]
	}
	return 0
}

// prefixes are programs that run the rest of their words as a command.
var prefixes = map[string]bool{
	"sudo": true, "doas": true, "env": true, "nohup": true, "time": true,
	"command": true, "exec": true, "nice": true, "ionice": true, "timeout": true,
	"xargs": true, "builtin": true, "stdbuf": true,
}

// finishCommand fills Verb, Args and Sudo, and parses the strings given to
// sh -c, bash -c and eval as nested scripts.
func finishCommand(c *Command, depth int) {
	w := c.Words
	i, lastPrefix := 0, -1
	for i < len(w) {
		word := w[i]
		base := path.Base(word)
		switch {
		case isAssignment(word):
			i++
			continue
		case prefixes[base]:
			lastPrefix = i
			if base == "sudo" || base == "doas" {
				c.Sudo = true
			}
			i++
			// Skip the prefix's own options (sudo -u root, timeout 5,
			// env -i, nice -n 5).
			for i < len(w) && (strings.HasPrefix(w[i], "-") || isNumber(w[i])) {
				if (base == "sudo" || base == "nice") && (w[i] == "-u" || w[i] == "-g" || w[i] == "-n") {
					i++
				}
				i++
			}
			continue
		case base == "su" && i+2 < len(w) && w[i+1] == "-c":
			c.Sudo = true
		}
		break
	}
	switch {
	case i < len(w):
		c.Verb = path.Base(w[i])
		c.Args = w[i+1:]
	case lastPrefix >= 0:
		// A prefix alone runs itself: env and time print things.
		c.Verb = path.Base(w[lastPrefix])
		c.Args = w[lastPrefix+1:]
	}
	if depth >= maxShellDepth {
		return
	}
	// Strings run as scripts: sh -c '…', eval '…', su -c '…'.
	var script string
	switch {
	case isShell(c.Verb):
		for j, a := range c.Args {
			if strings.HasPrefix(a, "-") && strings.Contains(a, "c") && !strings.HasPrefix(a, "--") && j+1 < len(c.Args) {
				script = c.Args[j+1]
				break
			}
		}
	case c.Verb == "eval":
		script = strings.Join(c.Args, " ")
	case c.Verb == "su":
		for j, a := range c.Args {
			if a == "-c" && j+1 < len(c.Args) {
				script = c.Args[j+1]
				c.Sudo = true
			}
		}
	}
	if script != "" {
		nested := parseDepth(script, depth+1)
		if c.Sudo {
			for _, n := range nested {
				n.Sudo = true
			}
		}
		c.Subs = append(c.Subs, nested...)
	}
}

func isAssignment(w string) bool {
	eq := strings.IndexByte(w, '=')
	if eq <= 0 {
		return false
	}
	for i, r := range w[:eq] {
		if !(r == '_' || r >= 'A' && r <= 'Z' || r >= 'a' && r <= 'z' || i > 0 && r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

func isNumber(w string) bool {
	if w == "" {
		return false
	}
	for _, r := range w {
		if (r < '0' || r > '9') && r != '.' && r != 's' && r != 'm' {
			return false
		}
	}
	return true
}

// isShell reports whether verb is a shell or another interpreter that runs
// a script read from its standard input.
func isShell(verb string) bool {
	switch verb {
	case "sh", "bash", "zsh", "dash", "ksh", "fish", "csh", "tcsh", "ash", "busybox":
		return true
	}
	return false
}

func isInterpreter(verb string) bool {
	if isShell(verb) {
		return true
	}
	for _, p := range []string{"python", "perl", "ruby", "node", "php", "lua", "pwsh", "deno", "bun"} {
		if strings.HasPrefix(verb, p) {
			return true
		}
	}
	return false
}
