// Package archive writes the workspace archives of the agent server's
// /api/file/archive route, as the reference 1.58 defines them: a gzip
// tarball of a directory (tar.gz) or a git patch of a repository's
// working-tree changes (git-delta). Both are streamed to the writer as
// they are made, so memory stays bounded whatever the tree's size, and
// neither follows a symbolic link: nothing outside the directory can get
// in.
package archive

import (
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
)

// DefaultExcludes are the patterns left out unless the caller asks for a
// full capture: generated and dependency directories (the reference's
// defaults).
var DefaultExcludes = []string{
	".git/", "node_modules/", ".venv/", "venv/", "__pycache__/", ".mypy_cache/",
	".pytest_cache/", ".ruff_cache/", "dist/", "build/", ".next/", "target/", "*.pyc",
}

// ManifestName is the member the tarball ends with, describing it.
const ManifestName = "archive_manifest.json"

// descentSkip are the directories RepoRoot never looks into: they may hold
// vendored repositories that are not the workspace's own.
var descentSkip = []string{"node_modules", "venv", "site-packages", "vendor"}

// RepoRoot returns the directory to archive for dir: dir itself when it is
// a git work tree or holds none or several within three levels (hidden
// and vendored directories and symbolic links skipped), else the one
// repository it holds. A workspace whose repository was cloned into a
// subdirectory is thus archived as that repository.
func RepoRoot(dir string) string {
	if exists(filepath.Join(dir, ".git")) {
		return dir
	}
	type node struct {
		dir   string
		depth int
	}
	var found []string
	stack := []node{{dir, 0}}
	for len(stack) > 0 {
		n := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if n.depth >= 3 {
			continue
		}
		ents, err := os.ReadDir(n.dir)
		if err != nil {
			continue
		}
		for _, e := range ents {
			name := e.Name()
			if strings.HasPrefix(name, ".") || slices.Contains(descentSkip, name) || !e.IsDir() {
				continue // a symbolic link is not a directory entry here
			}
			child := filepath.Join(n.dir, name)
			if exists(filepath.Join(child, ".git")) {
				if found = append(found, child); len(found) > 1 {
					return dir
				}
				continue
			}
			stack = append(stack, node{child, n.depth + 1})
		}
	}
	if len(found) == 1 {
		return found[0]
	}
	return dir
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// Excluded reports whether rel (slash-separated, relative to the archived
// directory) is left out by patterns, with gitignore's reading: a trailing
// slash matches directories only, a pattern with a slash is anchored at
// the root and matches what lies below too, and a bare name matches any
// one component. Both formats use the same reading, so they capture the
// same files.
func Excluded(rel string, patterns []string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	for _, raw := range patterns {
		pat := strings.TrimRight(raw, "/")
		dirOnly := strings.HasSuffix(raw, "/")
		if pat == "" {
			continue
		}
		if strings.Contains(pat, "/") {
			pp := strings.Split(pat, "/")
			if len(parts) < len(pp) {
				continue
			}
			all := true
			for i, p := range pp {
				if ok, _ := path.Match(p, parts[i]); !ok {
					all = false
					break
				}
			}
			if all && (!dirOnly || isDir || len(parts) > len(pp)) {
				return true
			}
			continue
		}
		cands := parts
		if dirOnly && !isDir {
			cands = parts[:len(parts)-1]
		}
		for _, c := range cands {
			if ok, _ := path.Match(pat, c); ok {
				return true
			}
		}
	}
	return false
}

// sensitiveGit are the files of a .git directory that may hold
// credentials (a token in a remote's URL, saved credentials): never
// archived, even in a full capture. Reflogs (logs/) neither.
var sensitiveGit = []string{"config", "config.worktree", "credentials", ".git-credentials", "FETCH_HEAD"}

// sensitiveGitInternal reports whether rel lies in a .git directory, at
// any depth (submodules' too), and may hold credentials.
func sensitiveGitInternal(rel string) bool {
	parts := strings.Split(rel, "/")
	for i, p := range parts {
		if p != ".git" {
			continue
		}
		inner := parts[i+1:]
		if len(inner) == 0 {
			return false
		}
		return slices.Contains(inner, "logs") || slices.Contains(sensitiveGit, inner[len(inner)-1])
	}
	return false
}
