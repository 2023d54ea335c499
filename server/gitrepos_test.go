package server_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/gohands/gohands/server"
)

// scriptedGitHub is a GitHub REST API on loopback with repos repositories
// of the user, in pages of 100 as GitHub gives them; it answers 401 to a
// request without the token and fail (when not 0) to every request.
type scriptedGitHub struct {
	token string
	repos []map[string]any
	fail  atomic.Int32
	calls atomic.Int32
	bad   atomic.Value // the first request that was not as GitHub's client sends it
}

func (g *scriptedGitHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.calls.Add(1)
	q := r.URL.Query()
	if r.URL.Path != "/user/repos" || r.Header.Get("Accept") != "application/vnd.github+json" || r.Header.Get("X-GitHub-Api-Version") != "2022-11-28" ||
		q.Get("per_page") != "100" || q.Get("sort") != "pushed" || q.Get("affiliation") != "owner,collaborator,organization_member" {
		g.bad.CompareAndSwap(nil, r.Method+" "+r.URL.String())
	}
	if f := g.fail.Load(); f != 0 {
		http.Error(w, `{"message": "down"}`, int(f))
		return
	}
	if r.Header.Get("Authorization") != "Bearer "+g.token {
		http.Error(w, `{"message": "Bad credentials"}`, http.StatusUnauthorized)
		return
	}
	page, _ := strconv.Atoi(q.Get("page"))
	lo, hi := (page-1)*100, page*100
	lo, hi = min(lo, len(g.repos)), min(hi, len(g.repos))
	if hi < len(g.repos) {
		w.Header().Set("Link", fmt.Sprintf(`<http://%s/user/repos?per_page=100&page=%d>; rel="next", <http://%s/user/repos?page=9>; rel="last"`, r.Host, page+1, r.Host))
	}
	json.NewEncoder(w).Encode(g.repos[lo:hi])
}

// TestGitRepositorySearch searches the user's GitHub repositories through
// a scripted GitHub on loopback: no token is the reference's missing_token
// page (a token of another provider does not count), the token is taken
// from the secrets as the reference takes it (github_token first) and
// sent as a bearer token, a page is cut at limit with a cursor into it,
// a filter reads on through GitHub's pages, and GitHub's failures are the
// reference's statuses with a detail that names the URL and the status,
// never the token.
func TestGitRepositorySearch(t *testing.T) {
	t.Parallel()
	gh := &scriptedGitHub{token: "ghp-right-token"}
	for i := range 150 {
		name := fmt.Sprintf("octo/repo-%03d", i)
		if i%50 == 7 {
			name = fmt.Sprintf("octo/Special-%03d", i)
		}
		gh.repos = append(gh.repos, map[string]any{"id": 1000 + i, "full_name": name, "private": i == 1,
			"stargazers_count": i, "pushed_at": "2026-11-01T00:00:00Z", "default_branch": "main"})
	}
	gh.repos[2]["stargazers_count"] = nil
	api := httptest.NewServer(gh)
	t.Cleanup(api.Close)
	ts := newTestServer(t, &server.Options{GitHubAPI: api.URL})

	type repo struct {
		ID              string  `json:"id"`
		FullName        string  `json:"full_name"`
		GitProvider     string  `json:"git_provider"`
		IsPublic        bool    `json:"is_public"`
		StargazersCount *int    `json:"stargazers_count"`
		PushedAt        *string `json:"pushed_at"`
		MainBranch      *string `json:"main_branch"`
	}
	type page struct {
		Items        []repo  `json:"items"`
		NextPageID   *string `json:"next_page_id"`
		MissingToken bool    `json:"missing_token"`
	}
	search := func(want int, query string) (page, string) {
		t.Helper()
		var p page
		data := ts.must(want, "GET", "/api/git/repositories/search?provider=github"+query, nil, nil)
		if want == 200 {
			if err := json.Unmarshal(data, &p); err != nil {
				t.Fatal(err)
			}
		}
		return p, string(data)
	}
	names := func(p page) []string {
		var l []string
		for _, r := range p.Items {
			l = append(l, r.FullName)
		}
		return l
	}

	ts.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": "gitlab_token", "value": "glpat-x"}, nil)
	if p, raw := search(200, ""); !p.MissingToken || p.Items == nil || len(p.Items) != 0 || p.NextPageID != nil || gh.calls.Load() != 0 {
		t.Fatalf("without a GitHub token: %s (GitHub asked %d times)", raw, gh.calls.Load())
	}

	// GH_TOKEN is taken when it is the only one; github_token wins.
	ts.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": "GH_TOKEN", "value": "ghp-wrong-token"}, nil)
	if _, raw := search(401, ""); !strings.Contains(raw, "401") || strings.Contains(raw, "ghp-") {
		t.Errorf("a token GitHub refuses: %s", raw)
	}
	ts.must(200, "PUT", "/api/settings/secrets", map[string]any{"name": "github_token", "value": gh.token}, nil)

	p, raw := search(200, "&limit=3")
	if got := names(p); len(got) != 3 || got[0] != "octo/repo-000" || p.NextPageID == nil || *p.NextPageID != "1:3" || p.MissingToken {
		t.Fatalf("first 3: %s", raw)
	}
	want := repo{ID: "1001", FullName: "octo/repo-001", GitProvider: "github", IsPublic: false}
	if r := p.Items[1]; r.ID != want.ID || r.FullName != want.FullName || r.GitProvider != "github" || r.IsPublic || r.StargazersCount == nil || *r.StargazersCount != 1 ||
		r.PushedAt == nil || *r.PushedAt != "2026-11-01T00:00:00Z" || r.MainBranch == nil || *r.MainBranch != "main" {
		t.Errorf("a repository: %+v", r)
	}
	if !p.Items[0].IsPublic || p.Items[2].StargazersCount != nil || !strings.Contains(raw, `"stargazers_count":null`) {
		t.Errorf("public, and no star count: %s", raw)
	}
	p, raw = search(200, "&limit=100&page_id=1:98")
	if got := names(p); len(got) != 2 || got[0] != "octo/repo-098" || p.NextPageID == nil || *p.NextPageID != "2" {
		t.Errorf("the end of GitHub's first page: %s", raw)
	}
	p, raw = search(200, "&page_id=2")
	if got := names(p); len(got) != 50 || got[0] != "octo/repo-100" || p.NextPageID != nil {
		t.Errorf("the last page: %s", raw)
	}

	// A filter reads GitHub's pages until limit repositories match.
	p, raw = search(200, "&query=special")
	if got := names(p); len(got) != 3 || got[2] != "octo/Special-107" || p.NextPageID != nil {
		t.Errorf("filtered: %s", raw)
	}
	p, raw = search(200, "&query=SPECIAL&limit=2")
	if got := names(p); len(got) != 2 || got[1] != "octo/Special-057" || p.NextPageID == nil || *p.NextPageID != "2" {
		t.Errorf("filtered, limit 2: %s", raw)
	}

	search(400, "&page_id=x")
	search(400, "&page_id=0")
	search(400, "&page_id=1:-1")
	search(422, "&limit=101")
	ts.must(400, "GET", "/api/git/repositories/search?provider=gitlab", nil, nil)

	for _, c := range []struct{ github, want int }{{500, 502}, {503, 502}, {403, 403}, {404, 400}, {422, 400}} {
		gh.fail.Store(int32(c.github))
		_, raw := search(c.want, "")
		if !strings.Contains(raw, "GitHub repository search failed") || !strings.Contains(raw, api.URL+"/user/repos") || !strings.Contains(raw, strconv.Itoa(c.github)) || strings.Contains(raw, gh.token) {
			t.Errorf("GitHub answering %d: %s", c.github, raw)
		}
	}
	gh.fail.Store(0)
	api.Close()
	if _, raw := search(502, ""); !strings.Contains(raw, "GitHub repository search failed") || strings.Contains(raw, gh.token) {
		t.Errorf("GitHub away: %s", raw)
	}
	if b := gh.bad.Load(); b != nil {
		t.Errorf("a request not as GitHub's client sends it: %v", b)
	}
}
