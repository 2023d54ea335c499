package server

import (
	"errors"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
)

// The file browser of the reference's GUI (its workspace picker) and the
// directory creation: home, search_subdirs and create_directory.

// fileBrowserRoutes are the routes of the file browser.
func (s *Server) fileBrowserRoutes() []*route {
	return []*route{
		{method: "GET", path: "/api/file/home", summary: "The server user's home directory, its top-level directories and the filesystem roots", tag: "Files", query: &homeQuery{}, resp: homeResponse{}, errors: []int{422}, h: handle(s, nil, s.handleHome)},
		{method: "GET", path: "/api/file/search_subdirs", summary: "A page of the directories directly under path", tag: "Files", query: &subdirsQuery{}, resp: subdirPage{}, errors: []int{400, 403, 404, 422}, h: handle(s, nil, s.handleSearchSubdirs)},
		{method: "POST", path: "/api/file/create_directory", summary: "Create a directory and its missing parents (an existing one succeeds)", tag: "Files", query: &createDirQuery{}, resp: successResponse{}, errors: []int{400, 403, 422}, h: handle(s, nil, s.handleCreateDirectory)},
	}
}

type homeQuery struct {
	IncludeHidden bool `query:"include_hidden" description:"Include hidden top-level directories in favorites."`
}

// fileBrowserEntry is a labelled path of the browser's sidebar.
type fileBrowserEntry struct {
	Label string `json:"label"`
	Path  string `json:"path"`
}

type homeResponse struct {
	Home      string             `json:"home"`
	Favorites []fileBrowserEntry `json:"favorites"`
	Locations []fileBrowserEntry `json:"locations"`
}

// maxFavorites bounds the favorites, as the reference does.
const maxFavorites = 50

func (s *Server) handleHome(in *request[homeQuery, none]) (any, error) {
	home, err := os.UserHomeDir()
	if err != nil {
		home = "/"
	}
	favorites := []fileBrowserEntry{}
	for _, name := range subdirNames(home, in.query.IncludeHidden) {
		favorites = append(favorites, fileBrowserEntry{Label: name, Path: filepath.Join(home, name)})
	}
	slices.SortStableFunc(favorites, func(a, b fileBrowserEntry) int {
		return strings.Compare(strings.ToLower(a.Label), strings.ToLower(b.Label))
	})
	if len(favorites) > maxFavorites {
		favorites = favorites[:maxFavorites]
	}
	return homeResponse{Home: home, Favorites: favorites, Locations: []fileBrowserEntry{{Label: "/", Path: "/"}}}, nil
}

// subdirNames lists the directories directly under dir: no symlinks, no
// hidden ones unless asked. An unreadable dir lists nothing.
func subdirNames(dir string, hidden bool) []string {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil
	}
	var names []string
	for _, e := range entries {
		if !hidden && strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if e.Type().IsDir() {
			names = append(names, e.Name())
		}
	}
	return names
}

type subdirsQuery struct {
	Path          string `query:"path" required:"true" description:"Absolute directory path to list subdirectories of."`
	PageID        string `query:"page_id" description:"next_page_id of the previous page."`
	Limit         *int   `query:"limit" minimum:"1" maximum:"100" description:"Page size (default 100)."`
	IncludeHidden bool   `query:"include_hidden" description:"Include hidden subdirectories."`
}

type subdirEntry struct {
	Name string `json:"name"`
	Path string `json:"path"`
}

type subdirPage struct {
	Items      []subdirEntry `json:"items"`
	NextPageID *string       `json:"next_page_id"`
}

func (s *Server) handleSearchSubdirs(in *request[subdirsQuery, none]) (any, error) {
	q := &in.query
	limit := 100
	if q.Limit != nil {
		if *q.Limit < 1 {
			return nil, &invalidError{loc: []any{"query", "limit"}, typ: "greater_than", msg: "Input should be greater than 0"}
		}
		if *q.Limit > 100 {
			return nil, &invalidError{loc: []any{"query", "limit"}, typ: "less_than_equal", msg: "Input should be less than or equal to 100"}
		}
		limit = *q.Limit
	}
	if !filepath.IsAbs(q.Path) {
		return nil, statusErr(http.StatusBadRequest, "Path must be absolute")
	}
	fi, err := os.Stat(q.Path)
	switch {
	case err != nil && errors.Is(err, fs.ErrPermission):
		return nil, statusErr(http.StatusForbidden, "Permission denied: %v", err)
	case err != nil:
		return nil, statusErr(http.StatusNotFound, "Directory not found")
	case !fi.IsDir():
		return nil, statusErr(http.StatusBadRequest, "Path is not a directory")
	}
	if _, err := os.ReadDir(q.Path); errors.Is(err, fs.ErrPermission) {
		return nil, statusErr(http.StatusForbidden, "Permission denied: %v", err)
	}
	names := subdirNames(q.Path, q.IncludeHidden)
	// Case-insensitive, ties by the exact name, so each name is a
	// distinct cursor.
	slices.SortFunc(names, func(a, b string) int {
		if c := strings.Compare(strings.ToLower(a), strings.ToLower(b)); c != 0 {
			return c
		}
		return strings.Compare(a, b)
	})
	start := 0
	if q.PageID != "" {
		if i := slices.Index(names, q.PageID); i >= 0 {
			start = i
		} else if i := slices.IndexFunc(names, func(n string) bool { return strings.ToLower(n) == q.PageID }); i >= 0 {
			start = i
		}
	}
	end := min(start+limit, len(names))
	page := subdirPage{Items: []subdirEntry{}}
	for _, n := range names[start:end] {
		page.Items = append(page.Items, subdirEntry{Name: n, Path: filepath.Join(q.Path, n)})
	}
	if end < len(names) {
		page.NextPageID = &names[end]
	}
	return page, nil
}

type createDirQuery struct {
	Path string `query:"path" required:"true" description:"Absolute directory path to create."`
}

func (s *Server) handleCreateDirectory(in *request[createDirQuery, none]) (any, error) {
	p := in.query.Path
	if !filepath.IsAbs(p) {
		return nil, statusErr(http.StatusBadRequest, "Path must be absolute")
	}
	if strings.IndexByte(p, 0) >= 0 {
		return nil, statusErr(http.StatusBadRequest, "Path exists and is not a directory")
	}
	err := os.MkdirAll(p, 0o755)
	switch {
	case err == nil:
		return ok, nil
	case errors.Is(err, fs.ErrPermission):
		return nil, statusErr(http.StatusForbidden, "Permission denied: %v", err)
	case errors.Is(err, syscall.ENOTDIR), errors.Is(err, fs.ErrExist):
		return nil, statusErr(http.StatusBadRequest, "Path exists and is not a directory")
	}
	return nil, statusErr(http.StatusInternalServerError, "Failed to create directory: %v", err)
}
