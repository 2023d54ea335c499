package plugin

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/gohands/gohands/skill"
)

// PublicSkillsRepo is the public skills repository of the reference.
// $EXTENSIONS_REPO (a gohands addition) replaces it, $EXTENSIONS_REF its
// branch, tag or commit (main), and $EXTENSIONS_PATH names a local copy
// read in its place, as in the reference.
const PublicSkillsRepo = "https://github.com/OpenHands/extensions"

// publicTimeout bounds the fetch of the public skills at a
// conversation's start.
const publicTimeout = 30 * time.Second

// publicTTL is how long loaded public skills are reused, as the reference
// caches them.
const publicTTL = time.Minute

// publicRepoSettings returns the local copy ($EXTENSIONS_PATH), URL and
// ref of the public skills repository.
func publicRepoSettings() (where, url, ref string) {
	where, url, ref = os.Getenv("EXTENSIONS_PATH"), os.Getenv("EXTENSIONS_REPO"), os.Getenv("EXTENSIONS_REF")
	if url == "" {
		url = PublicSkillsRepo
	}
	if ref == "" {
		ref = "main"
	}
	return where, url, ref
}

// PublicRepo returns the directory of the public skills repository: the
// local copy of $EXTENSIONS_PATH, or the repository fetched into the
// cache directory of opts (its remote asked for the ref's commit each
// time, fetched when that moved; bounded by a timeout). A repository
// that cannot be reached is an error naming it.
func PublicRepo(ctx context.Context, opts *FetchOptions) (string, error) {
	where, url, ref := publicRepoSettings()
	if where != "" && url == PublicSkillsRepo {
		return where, nil
	}
	var o FetchOptions
	if opts != nil {
		o = *opts
	}
	if o.Timeout == 0 {
		o.Timeout = defaultTimeout(publicTimeout)
	}
	dir, _, err := Fetch(ctx, Source{Source: url, Ref: &ref}, &o)
	if err != nil {
		return "", fmt.Errorf("public skills: %w", err)
	}
	return dir, nil
}

// ForgetPublicSkills drops the public skills LoadPublicSkills keeps, so
// the next load reads the repository again (after a sync).
func ForgetPublicSkills() {
	publicCache.Lock()
	defer publicCache.Unlock()
	publicCache.key = ""
}

var publicCache struct {
	sync.Mutex
	key    string
	at     time.Time
	skills []skill.Skill
}

// AllPublicSkills is the marketplace path of LoadPublicSkills that lists
// no marketplace: every skill of the repository (the reference's
// marketplace_path null).
const AllPublicSkills = "*"

// LoadPublicSkills loads the public skills: those of the repository's
// skills/ that the marketplace file at marketplacePath (relative to the
// repository; skill.DefaultMarketplacePath when empty) lists as plugins,
// or every one when that file does not exist and marketplacePath is the
// default, or marketplacePath is AllPublicSkills. The repository is fetched (bounded by a timeout) into the
// cache directory of opts; a repository that cannot be reached is an
// error naming it.
func LoadPublicSkills(ctx context.Context, marketplacePath string, opts *FetchOptions) ([]skill.Skill, error) {
	if marketplacePath == "" {
		marketplacePath = skill.DefaultMarketplacePath
	}
	where, url, ref := publicRepoSettings()
	key := where + "\x00" + url + "\x00" + ref + "\x00" + marketplacePath
	publicCache.Lock()
	defer publicCache.Unlock()
	if publicCache.key == key && time.Since(publicCache.at) < publicTTL {
		return publicCache.skills, nil
	}
	repo, err := PublicRepo(ctx, opts)
	if err != nil {
		return nil, err
	}
	skillsDir := filepath.Join(repo, "skills")
	var names []string // nil: every skill
	if marketplacePath != AllPublicSkills {
		data, err := os.ReadFile(filepath.Join(repo, filepath.FromSlash(marketplacePath)))
		switch {
		case err == nil:
			var m Marketplace
			if err := json.Unmarshal(data, &m); err != nil {
				return nil, fmt.Errorf("public skills: marketplace %s: %w", marketplacePath, err)
			}
			names = make([]string, 0, len(m.Plugins)) // none listed: none loaded
			for _, p := range m.Plugins {
				names = append(names, p.Name)
			}
		case marketplacePath != skill.DefaultMarketplacePath:
			return nil, fmt.Errorf("public skills: marketplace %s cannot be read: %w", marketplacePath, err)
		}
	}
	var out []skill.Skill
	if names == nil {
		all, _ := skill.LoadDir(skillsDir)
		out = all
	} else {
		for _, n := range names {
			for _, p := range []string{filepath.Join(skillsDir, n, "SKILL.md"), filepath.Join(skillsDir, n+".md")} {
				if _, err := os.Stat(p); err != nil {
					continue
				}
				s, err := skill.ParseFile(p, repo)
				if err == nil {
					out = append(out, s)
				}
				break
			}
		}
	}
	if len(out) > 0 {
		publicCache.key, publicCache.at, publicCache.skills = key, time.Now(), out
	}
	return out, nil
}
