package server

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/text/cases"
)

// The search of a git provider's repositories (GET
// /api/git/repositories/search) lists, as the reference 1.58.2 does, the
// GitHub repositories its token can access (GET /user/repos, newest push
// first, 100 a page), filtered by a case-insensitive part of their full
// name. The token is the first of the user's secrets (/api/settings/
// secrets) named github_token, GITHUB_TOKEN, GH_TOKEN or github; without
// one the answer is an empty page marked missing_token. Other providers
// are not searched (400). A page cursor is "page[:offset]" of GitHub's
// pages. A failure of GitHub is the reference's answer (its 401 and 403
// as they are, 502 for its 5xx and for no answer, 504 after
// githubTimeout, 400 otherwise), whose detail here also names the URL
// asked and the status it answered; never the token.

const (
	// DefaultGitHubAPI is the base URL of GitHub's REST API.
	DefaultGitHubAPI = "https://api.github.com"
	githubTimeout    = 15 * time.Second
	githubPageSize   = 100
	githubSearchFail = "GitHub repository search failed"
)

// githubTokenNames are the secrets a GitHub token is taken from, first
// found first.
var githubTokenNames = []string{"github_token", "GITHUB_TOKEN", "GH_TOKEN", "github"}

// providerRepo is the reference's GitProviderRepository.
type providerRepo struct {
	ID              string  `json:"id"`
	FullName        string  `json:"full_name"`
	GitProvider     string  `json:"git_provider"`
	IsPublic        bool    `json:"is_public"`
	StargazersCount *int64  `json:"stargazers_count"`
	PushedAt        *string `json:"pushed_at"`
	MainBranch      *string `json:"main_branch"`
}

// repoPage is the reference's GitProviderRepositoryPage.
type repoPage struct {
	Items        []providerRepo `json:"items"`
	NextPageID   *string        `json:"next_page_id"`
	MissingToken bool           `json:"missing_token"`
}

// githubToken is the user's GitHub token, "" when there is none.
func (s *Server) githubToken() (string, error) {
	for _, name := range githubTokenNames {
		v, ok, err := s.secrets.Get(name)
		if err != nil {
			return "", err
		}
		if ok && v != "" {
			return v, nil
		}
	}
	return "", nil
}

// searchGitHub lists the repositories token can access whose full name
// contains query (any when empty), at most limit of them from the cursor
// pageID.
func (s *Server) searchGitHub(ctx context.Context, token, query string, limit int, pageID *string) (*repoPage, error) {
	page, offset, err := parseRepoPageID(pageID)
	if err != nil {
		return nil, err
	}
	fold := cases.Fold()
	query = fold.String(query)
	out := &repoPage{Items: []providerRepo{}}
	ctx, cancel := context.WithTimeout(ctx, githubTimeout)
	defer cancel()
	for len(out.Items) < limit {
		found, next, err := s.githubReposPage(ctx, token, page)
		if err != nil {
			return nil, err
		}
		if query != "" {
			kept := found[:0]
			for _, r := range found {
				if strings.Contains(fold.String(r.FullName), query) {
					kept = append(kept, r)
				}
			}
			found = kept
		}
		found = found[min(offset, len(found)):]
		room := limit - len(out.Items)
		out.Items = append(out.Items, found[:min(room, len(found))]...)
		out.NextPageID = next
		if len(found) > room {
			// The rest of this page is the next page.
			cursor := fmt.Sprintf("%d:%d", page, offset+room)
			out.NextPageID = &cursor
			return out, nil
		}
		// Without a filter a page of GitHub's is a page; with one, pages
		// are read until limit repositories match.
		if query == "" || next == nil {
			break
		}
		if page, offset, err = parseRepoPageID(next); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// parseRepoPageID reads a cursor "page[:offset]"; none is the first page.
func parseRepoPageID(id *string) (page, offset int, err error) {
	if id == nil {
		return 1, 0, nil
	}
	bad := statusErr(http.StatusBadRequest, "Invalid repository page_id")
	p, o, hasOffset := strings.Cut(*id, ":")
	if page, err = strconv.Atoi(p); err != nil {
		return 0, 0, bad
	}
	if hasOffset && o != "" {
		if offset, err = strconv.Atoi(o); err != nil {
			return 0, 0, bad
		}
	}
	if page < 1 || offset < 0 {
		return 0, 0, bad
	}
	return page, offset, nil
}

// githubReposPage reads one page of /user/repos: its repositories and
// the page the Link header names next.
func (s *Server) githubReposPage(ctx context.Context, token string, page int) ([]providerRepo, *string, error) {
	q := url.Values{
		"per_page":    {strconv.Itoa(githubPageSize)},
		"page":        {strconv.Itoa(page)},
		"sort":        {"pushed"},
		"affiliation": {"owner,collaborator,organization_member"},
	}
	u := strings.TrimSuffix(s.opts.GitHubAPI, "/") + "/user/repos?" + q.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, nil, statusErr(http.StatusBadGateway, "%s: %v", githubSearchFail, err)
	}
	req.Header.Set("Accept", "application/vnd.github+json")
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("X-GitHub-Api-Version", "2022-11-28")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			s.log.Warn("GitHub repository search timed out", "url", u)
			return nil, nil, statusErr(http.StatusGatewayTimeout, "GitHub repository search timed out: %s", u)
		}
		// A *url.Error names the URL, never the header with the token.
		s.log.Warn(githubSearchFail, "err", err)
		return nil, nil, statusErr(http.StatusBadGateway, "%s: %v", githubSearchFail, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		s.log.Warn(githubSearchFail, "url", u, "status", resp.StatusCode)
		code := http.StatusBadRequest
		switch {
		case resp.StatusCode == http.StatusUnauthorized, resp.StatusCode == http.StatusForbidden:
			code = resp.StatusCode
		case resp.StatusCode >= 500:
			code = http.StatusBadGateway
		}
		return nil, nil, statusErr(code, "%s: %s answered %s", githubSearchFail, u, resp.Status)
	}
	var raw []map[string]any
	d := json.NewDecoder(resp.Body)
	d.UseNumber()
	if err := d.Decode(&raw); err != nil {
		return nil, nil, statusErr(http.StatusBadGateway, "%s: %s answered no list of repositories: %v", githubSearchFail, u, err)
	}
	repos := make([]providerRepo, 0, len(raw))
	for _, m := range raw {
		repos = append(repos, githubRepo(m))
	}
	return repos, nextLinkPage(resp.Header.Get("Link")), nil
}

// githubRepo is one repository of GitHub's answer, as the reference
// reads it.
func githubRepo(m map[string]any) providerRepo {
	r := providerRepo{GitProvider: "github", IsPublic: m["private"] != true}
	if v, ok := m["id"]; ok && v != nil {
		r.ID = fmt.Sprint(v)
	}
	r.FullName, _ = m["full_name"].(string)
	if n, ok := m["stargazers_count"].(json.Number); ok {
		if i, err := n.Int64(); err == nil {
			r.StargazersCount = &i
		}
	}
	if v, ok := m["pushed_at"].(string); ok {
		r.PushedAt = &v
	}
	if v, ok := m["default_branch"].(string); ok {
		r.MainBranch = &v
	}
	return r
}

var linkPart = regexp.MustCompile(`<([^>]+)>;\s*rel="([^"]+)"`)

// nextLinkPage is the page number of the Link header's next link.
func nextLinkPage(link string) *string {
	for _, m := range linkPart.FindAllStringSubmatch(link, -1) {
		if m[2] != "next" {
			continue
		}
		u, err := url.Parse(m[1])
		if err != nil {
			return nil
		}
		if p := u.Query().Get("page"); p != "" {
			return &p
		}
		return nil
	}
	return nil
}
