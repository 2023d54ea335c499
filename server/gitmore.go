package server

import (
	"net/http"

	"github.com/gohands/gohands/workspace"
)

// gitMoreRoutes are the git routes beside changes and diff: the history
// of a repository, the changes of one commit, and the search of a git
// provider's repositories.
func (s *Server) gitMoreRoutes() []*route {
	return []*route{
		{method: "GET", path: "/api/git/commits", summary: "The newest commits of a repository (an empty page outside one)", tag: "Git", query: &commitsQuery{}, resp: workspace.GitCommitsPage{}, errors: []int{400, 422}, h: handle(s, nil, s.handleGitCommits)},
		{method: "GET", path: "/api/git/commits/{sha}/changes", summary: "The files a commit changed against its first parent", tag: "Git", query: &repoQuery{}, resp: []gitChange{}, errors: []int{400, 422}, h: handle(s, nil, s.handleCommitChanges)},
		{method: "GET", path: "/api/git/repositories/search", summary: "Repositories a configured git provider token can access", tag: "Git", query: &repoSearchQuery{}, resp: repoPage{}, errors: []int{400, 401, 403, 422, 502, 504}, h: handle(s, nil, s.handleRepoSearch)},
	}
}

type commitsQuery struct {
	Path  string `query:"path" required:"true" description:"The git repository path."`
	Limit *int   `query:"limit" minimum:"1" maximum:"200" description:"Maximum commits to return (default 50)."`
}

type repoQuery struct {
	Path string `query:"path" required:"true" description:"The git repository path."`
}

// shaInvalid is the answer to a commit that is not 4 to 64 hex digits
// (the reference's pattern, which keeps it from reaching git as an option).
func shaInvalid(loc ...any) error {
	return &invalidError{loc: loc, typ: "string_pattern_mismatch", msg: "String should match pattern '^[0-9a-fA-F]{4,64}$'"}
}

func (s *Server) handleGitCommits(in *request[commitsQuery, none]) (any, error) {
	limit := 50
	if l := in.query.Limit; l != nil {
		if *l < 1 || *l > 200 {
			return nil, &invalidError{loc: []any{"query", "limit"}, typ: "less_than_equal", msg: "Input should be between 1 and 200"}
		}
		limit = *l
	}
	page, err := workspace.Commits(in.r.Context(), in.query.Path, limit)
	if err != nil {
		return nil, statusErr(http.StatusBadRequest, "%s", err.Error())
	}
	return page, nil
}

func (s *Server) handleCommitChanges(in *request[repoQuery, none]) (any, error) {
	sha := in.r.PathValue("sha")
	if !workspace.IsSHA(sha) {
		return nil, shaInvalid("path", "sha")
	}
	changes, err := workspace.CommitChanges(in.r.Context(), in.query.Path, sha)
	if err != nil {
		return nil, statusErr(http.StatusBadRequest, "%s", err.Error())
	}
	return changes, nil
}

type repoSearchQuery struct {
	Provider string  `query:"provider" required:"true" enum:"github,gitlab,bitbucket,azure_devops" description:"Git provider to search."`
	Query    string  `query:"query" description:"Optional repository name filter."`
	Limit    *int    `query:"limit" minimum:"1" maximum:"100" description:"Maximum repositories to return (default 100)."`
	PageID   *string `query:"page_id" description:"Provider-specific page cursor."`
}

// handleRepoSearch lists the repositories of the user's GitHub token (see
// gitrepos.go).
func (s *Server) handleRepoSearch(in *request[repoSearchQuery, none]) (any, error) {
	limit, err := limitParam(in.query.Limit, 100)
	if err != nil {
		return nil, err
	}
	if p := in.query.Provider; p != "github" {
		return nil, statusErr(http.StatusBadRequest, "Repository discovery is not supported for provider '%s'", p)
	}
	token, err := s.githubToken()
	if err != nil {
		return nil, err
	}
	if token == "" {
		return repoPage{Items: []providerRepo{}, MissingToken: true}, nil
	}
	return s.searchGitHub(in.r.Context(), token, in.query.Query, limit, in.query.PageID)
}
