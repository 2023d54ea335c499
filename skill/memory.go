package skill

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"unicode/utf8"
)

// MemoryIndex is the project's memory index, relative to the workspace.
// The user's is memory/MEMORY.md under the persistence directory
// (~/.openhands, or $OH_PERSISTENCE_DIR).
const MemoryIndex = ".openhands/memory/MEMORY.md"

// MemoryBudget is the reference's bound, in characters, on the memory text
// shown to the model.
const MemoryBudget = 6000

// memoryCut heads a memory index whose oldest lines were dropped.
const memoryCut = "[earlier memory truncated]"

// PersistenceDir is the directory of a user's OpenHands state:
// $OH_PERSISTENCE_DIR when set, else ~/.openhands under home.
func PersistenceDir(home string) string {
	if d := os.Getenv("OH_PERSISTENCE_DIR"); d != "" {
		return d
	}
	if home == "" {
		return ""
	}
	return filepath.Join(home, ".openhands")
}

// LoadMemory reads the user's memory index (memory/MEMORY.md under
// persistDir) and the project's (MemoryIndex under workDir) and returns
// them as one text, user first, each under a header naming its file, or ""
// when both are absent or blank. An empty persistDir or workDir skips that
// tier. When the text is longer than budget characters (MemoryBudget when
// budget <= 0), each index keeps its newest lines: whole lines go from its
// top, the bodies share the budget evenly and a short one leaves its unused
// share to the other. Headers are always kept. An index that cannot be read
// is skipped and reported.
func LoadMemory(workDir, persistDir string, budget int) (string, []Warning) {
	if budget <= 0 {
		budget = MemoryBudget
	}
	type tier struct{ header, body string }
	var tiers []tier
	var warns []Warning
	read := func(path, header string) {
		b, err := os.ReadFile(path)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return
		case err != nil:
			warns = append(warns, Warning{Path: path, Err: err})
			return
		case !utf8.Valid(b):
			warns = append(warns, Warning{Path: path, Err: errors.New("memory index is not UTF-8")})
			return
		}
		if body := strings.TrimSpace(string(b)); body != "" {
			tiers = append(tiers, tier{header, body})
		}
	}
	if persistDir != "" {
		// The header names the file without the user's home directory.
		shown := "~/.openhands"
		if os.Getenv("OH_PERSISTENCE_DIR") != "" {
			shown = filepath.ToSlash(persistDir)
		}
		read(filepath.Join(persistDir, "memory", "MEMORY.md"), fmt.Sprintf("# User memory (%s/memory/MEMORY.md)", shown))
	}
	if workDir != "" {
		read(filepath.Join(workDir, filepath.FromSlash(MemoryIndex)), "# Project memory ("+MemoryIndex+")")
	}
	if len(tiers) == 0 {
		return "", warns
	}
	join := func(bodies []string) string {
		parts := make([]string, len(tiers))
		for i, t := range tiers {
			parts[i] = t.header + "\n" + bodies[i]
		}
		return strings.Join(parts, "\n\n")
	}
	bodies := make([]string, len(tiers))
	for i, t := range tiers {
		bodies[i] = t.body
	}
	if all := join(bodies); utf8.RuneCountInString(all) <= budget {
		return all, warns
	}
	// What the bodies may use: the budget less the headers, their newlines
	// and the blank lines between tiers.
	left := budget - 2*(len(tiers)-1)
	for _, t := range tiers {
		left -= utf8.RuneCountInString(t.header) + 1
	}
	share := left / len(tiers)
	sizes := make([]int, len(tiers))
	for i, b := range bodies {
		sizes[i] = min(utf8.RuneCountInString(b), share)
		left -= sizes[i]
	}
	for i, b := range bodies {
		extra := min(left, utf8.RuneCountInString(b)-sizes[i])
		sizes[i] += extra
		left -= extra
	}
	for i := range bodies {
		bodies[i] = keepTail(bodies[i], sizes[i])
	}
	return join(bodies), warns
}

// keepTail drops whole lines from the top of body until it fits in n
// characters with memoryCut as its first line.
func keepTail(body string, n int) string {
	if utf8.RuneCountInString(body) <= n {
		return body
	}
	lines := strings.Split(strings.ReplaceAll(body, "\r\n", "\n"), "\n")
	for len(lines) > 0 {
		lines = lines[1:]
		s := memoryCut + "\n" + strings.Join(lines, "\n")
		if len(lines) == 0 {
			s = memoryCut
		}
		if utf8.RuneCountInString(s) <= n {
			return s
		}
	}
	return memoryCut
}
