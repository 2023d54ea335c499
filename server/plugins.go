package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/gohands/gohands/agent"
	"github.com/gohands/gohands/conversation"
	"github.com/gohands/gohands/plugin"
	"github.com/gohands/gohands/skill"
)

// fetchOptions are where this server keeps fetched plugins.
func (s *Server) fetchOptions() *plugin.FetchOptions {
	return &plugin.FetchOptions{CacheDir: plugin.CacheDir(s.opts.PersistenceDir)}
}

// decodePlugins reads the start request's "plugins": a list of plugin
// sources, each checked.
func decodePlugins(raw json.RawMessage) ([]plugin.Source, error) {
	t := bytes.TrimSpace(raw)
	if len(t) == 0 || bytes.Equal(t, []byte("null")) {
		return nil, nil
	}
	var srcs []plugin.Source
	if err := json.Unmarshal(t, &srcs); err != nil {
		return nil, invalid("plugins: a list of {source, ref, repo_path}: "+err.Error(), "body", "plugins")
	}
	for i := range srcs {
		if err := srcs[i].Validate(); err != nil {
			return nil, invalid(err.Error(), "body", "plugins", i)
		}
	}
	return srcs, nil
}

// startPlugins reads the start request's plugins into opts: New
// fetches and loads them (conversation.LocalOptions.Plugins), merging them
// into the agent (skills, MCP servers, sub-agents) and the hooks (after
// the request's own), as the reference does when the conversation first
// runs. The merged agent and hooks are what is stored, so a resumed
// conversation needs only their sub-agents again (conv.load). It returns
// the plugins as meta.json keeps them.
func (s *Server) startPlugins(raw json.RawMessage, ag conversation.Agent, opts *conversation.LocalOptions) (json.RawMessage, error) {
	srcs, err := decodePlugins(raw)
	if err != nil || len(srcs) == 0 {
		return nil, err
	}
	if _, ok := ag.(*agent.Agent); !ok {
		return nil, invalid("plugins: only an Agent takes plugins", "body", "plugins")
	}
	opts.Plugins, opts.PluginFetch = srcs, s.fetchOptions()
	return json.Marshal(srcs)
}

// pluginError is New's error for a start plugin that cannot be fetched or
// loaded (a 400 naming its source), else nil.
func pluginError(err error) error {
	if errors.Is(err, conversation.ErrCannotLoadPlugin) {
		return statusErr(http.StatusBadRequest, "%s", err.Error())
	}
	return nil
}

// pluginStore is the user's installed plugins: the directory the agents'
// ambient plugins come from (~/.openhands/plugins/installed, or under
// $OH_PERSISTENCE_DIR), as in the reference.
func pluginStore() *plugin.Store {
	home, _ := os.UserHomeDir()
	return &plugin.Store{Dir: plugin.InstalledDir(skill.PersistenceDir(home)), Load: plugin.PluginLoader}
}

type pluginNamePath struct {
	PluginName string `path:"plugin_name" pattern:"^[a-z0-9]+(?:-[a-z0-9]+)*$"`
}

type pluginsRequest struct {
	LoadUser    *bool   `json:"load_user"`
	LoadProject *bool   `json:"load_project"`
	ProjectDir  *string `json:"project_dir"`
}

type pluginSkillSummary struct {
	Name        string  `json:"name"`
	Description *string `json:"description"`
}

type pluginInfo struct {
	Name        string               `json:"name"`
	Version     string               `json:"version"`
	Description string               `json:"description"`
	Path        string               `json:"path"`
	Skills      []pluginSkillSummary `json:"skills"`
	Files       []string             `json:"files"`
}

type pluginsResponse struct {
	Plugins []pluginInfo `json:"plugins"`
}

type installPluginRequest struct {
	Source   string  `json:"source" required:"true"`
	Ref      *string `json:"ref"`
	RepoPath *string `json:"repo_path"`
	Force    bool    `json:"force"`
}

type installedPlugin struct {
	Name        string               `json:"name"`
	Version     string               `json:"version"`
	Description string               `json:"description"`
	Enabled     bool                 `json:"enabled"`
	Source      string               `json:"source"`
	ResolvedRef *string              `json:"resolved_ref"`
	RepoPath    *string              `json:"repo_path"`
	InstalledAt string               `json:"installed_at"`
	InstallPath string               `json:"install_path"`
	Skills      []pluginSkillSummary `json:"skills"`
	Files       []string             `json:"files"`
}

type installedPluginsResponse struct {
	Plugins []installedPlugin `json:"plugins"`
}

type pluginStateRequest struct {
	Enabled *bool `json:"enabled" required:"true"`
}

type pluginStateResponse struct {
	Name    string `json:"name"`
	Enabled bool   `json:"enabled"`
}

type messageResponse struct {
	Message string `json:"message"`
}

type fetchPluginRequest struct {
	Source   string  `json:"source" required:"true"`
	Ref      *string `json:"ref"`
	RepoPath *string `json:"repo_path"`
	Timeout  *int    `json:"timeout"`
}

type fetchPluginResponse struct {
	Path        string         `json:"path"`
	ResolvedRef *string        `json:"resolved_ref"`
	Source      string         `json:"source"`
	RepoPath    *string        `json:"repo_path"`
	Manifest    map[string]any `json:"manifest"`
	Skills      []string       `json:"skills"`
	Commands    []string       `json:"commands"`
}

func (s *Server) pluginRoutes() []*route {
	const (
		tp   = "Plugins"
		inst = "/api/plugins/installed/{plugin_name}"
	)
	return []*route{
		{method: "POST", path: "/api/plugins", summary: "The plugins every conversation gets: the user's, the enabled installed ones and a project's", tag: tp, body: pluginsRequest{}, resp: pluginsResponse{}, errors: []int{422}, h: handle(s, nil, s.handleListPlugins)},
		{method: "POST", path: "/api/plugins/fetch", summary: "Fetch a plugin source and pin it to a commit without installing it", tag: tp, body: fetchPluginRequest{}, resp: fetchPluginResponse{}, errors: []int{422, 502, 504}, h: handle(s, nil, s.handleFetchPlugin)},
		{method: "POST", path: "/api/plugins/install", summary: "Install a plugin from a git URL, github:owner/repo or a local path", tag: tp, body: installPluginRequest{}, resp: installedPlugin{}, errors: []int{400, 409, 422}, h: handle(s, nil, s.handleInstallPlugin)},
		{method: "GET", path: "/api/plugins/installed", summary: "The installed plugins, enabled or not", tag: tp, resp: installedPluginsResponse{}, h: handle(s, nil, s.handleInstalledPlugins)},
		{method: "GET", path: inst, summary: "One installed plugin", tag: tp, query: &pluginNamePath{}, resp: installedPlugin{}, errors: []int{404, 422}, h: handle(s, nil, s.handleInstalledPlugin)},
		{method: "PATCH", path: inst, summary: "Enable or disable an installed plugin", tag: tp, query: &pluginNamePath{}, body: pluginStateRequest{}, resp: pluginStateResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handlePluginState)},
		s.loadPluginRoute(),
		{method: "DELETE", path: inst, summary: "Uninstall a plugin", tag: tp, query: &pluginNamePath{}, resp: messageResponse{}, errors: []int{404, 422}, h: handle(s, nil, s.handleUninstallPlugin)},
	}
}

var pluginNameRE = regexp.MustCompile(`^[a-z0-9]+(?:-[a-z0-9]+)*$`)

func pluginName(r *http.Request) (string, error) {
	name := r.PathValue("plugin_name")
	if len(name) > 255 || !pluginNameRE.MatchString(name) {
		return "", &invalidError{loc: []any{"path", "plugin_name"}, typ: "string_pattern_mismatch", msg: "String should match pattern '" + pluginNameRE.String() + "'"}
	}
	return name, nil
}

// pluginContents lists a plugin's skills (its commands' included) and its
// files (relative, sorted, without .git, at most 1000).
func pluginContents(p *plugin.Plugin) ([]pluginSkillSummary, []string) {
	skills := []pluginSkillSummary{}
	for _, sk := range p.AllSkills() {
		var d *string
		if sk.Description != "" {
			d = &sk.Description
		}
		skills = append(skills, pluginSkillSummary{Name: sk.Name, Description: d})
	}
	files := []string{}
	root := filepath.FromSlash(p.Path)
	_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if d.IsDir() && d.Name() == ".git" {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			rel, _ := filepath.Rel(root, path)
			files = append(files, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(files)
	if len(files) > 1000 {
		files = files[:1000]
	}
	return skills, files
}

func (s *Server) handleListPlugins(in *request[none, pluginsRequest]) (any, error) {
	on := func(b *bool) bool { return b == nil || *b }
	home := ""
	if on(in.body.LoadUser) {
		home, _ = os.UserHomeDir()
	}
	work := ""
	if on(in.body.LoadProject) && in.body.ProjectDir != nil {
		work = *in.body.ProjectDir
	}
	found, warns := plugin.Ambient(work, home)
	for _, w := range warns {
		s.log.Warn("plugins: a plugin cannot be loaded", "err", w.Error())
	}
	out := pluginsResponse{Plugins: []pluginInfo{}}
	for _, p := range found {
		sk, files := pluginContents(p)
		out.Plugins = append(out.Plugins, pluginInfo{Name: p.Name(), Version: p.Manifest.Version, Description: p.Manifest.Description, Path: p.Path, Skills: sk, Files: files})
	}
	return out, nil
}

// installedOf is an installed plugin with its contents (null when it no
// longer loads).
func installedOf(i plugin.Info) installedPlugin {
	out := installedPlugin{Name: i.Name, Version: i.Version, Description: i.Description, Enabled: i.Enabled, Source: i.Source,
		ResolvedRef: i.ResolvedRef, RepoPath: i.RepoPath, InstalledAt: i.InstalledAt, InstallPath: i.InstallPath}
	if p, err := plugin.Load(i.InstallPath); err == nil {
		out.Skills, out.Files = pluginContents(p)
	}
	return out
}

func (s *Server) handleInstalledPlugins(in *request[none, none]) (any, error) {
	list, err := pluginStore().List()
	if err != nil {
		return nil, err
	}
	out := installedPluginsResponse{Plugins: []installedPlugin{}}
	for _, i := range list {
		out.Plugins = append(out.Plugins, installedOf(i))
	}
	return out, nil
}

// installed finds an installed plugin by the request's name.
func installed(r *http.Request) (plugin.Info, error) {
	name, err := pluginName(r)
	if err != nil {
		return plugin.Info{}, err
	}
	list, err := pluginStore().List()
	if err != nil {
		return plugin.Info{}, err
	}
	for _, i := range list {
		if i.Name == name {
			return i, nil
		}
	}
	return plugin.Info{}, statusErr(http.StatusNotFound, "Plugin '%s' is not installed", name)
}

func (s *Server) handleInstalledPlugin(in *request[pluginNamePath, none]) (any, error) {
	i, err := installed(in.r)
	if err != nil {
		return nil, err
	}
	return installedOf(i), nil
}

func (s *Server) handlePluginState(in *request[pluginNamePath, pluginStateRequest]) (any, error) {
	name, err := pluginName(in.r)
	if err != nil {
		return nil, err
	}
	return setInstalledState(pluginStore(), "Plugin", name, in.body.Enabled)
}

func (s *Server) handleUninstallPlugin(in *request[pluginNamePath, none]) (any, error) {
	name, err := pluginName(in.r)
	if err != nil {
		return nil, err
	}
	return uninstallInstalled(pluginStore(), "Plugin", name)
}

func (s *Server) handleInstallPlugin(in *request[none, installPluginRequest]) (any, error) {
	src := plugin.Source{Source: in.body.Source, Ref: in.body.Ref, RepoPath: in.body.RepoPath}
	if src.Source == "" {
		return nil, &invalidError{loc: []any{"body", "source"}, typ: "missing", msg: "Field required"}
	}
	if err := src.Validate(); err != nil {
		return nil, invalid(err.Error(), "body", "repo_path")
	}
	dir, commit, err := plugin.Fetch(in.r.Context(), src, s.fetchOptions())
	if err != nil {
		s.log.Warn("plugins: install: fetch failed", "err", err)
		return nil, statusErr(http.StatusBadRequest, "Failed to fetch plugin source: %s", err.Error())
	}
	info, err := pluginStore().Install(dir, src, commit, in.body.Force)
	switch {
	case errors.Is(err, fs.ErrExist):
		return nil, statusErr(http.StatusConflict, "Plugin already installed. Use force=true to overwrite.")
	case err != nil:
		return nil, statusErr(http.StatusUnprocessableEntity, "Invalid plugin: %s", err.Error())
	}
	return installedOf(info), nil
}

func (s *Server) handleFetchPlugin(in *request[none, fetchPluginRequest]) (any, error) {
	src := plugin.Source{Source: in.body.Source, Ref: in.body.Ref, RepoPath: in.body.RepoPath}
	if src.Source == "" {
		return nil, &invalidError{loc: []any{"body", "source"}, typ: "missing", msg: "Field required"}
	}
	fail := func(status int, code, msg string) (any, error) {
		return reply{status, map[string]any{"detail": map[string]string{"code": code, "message": msg}}}, nil
	}
	if err := src.Validate(); err != nil {
		return fail(http.StatusUnprocessableEntity, "invalid_source", err.Error())
	}
	opts := s.fetchOptions()
	if t := in.body.Timeout; t != nil {
		if *t < 1 || *t > 600 {
			return nil, invalid("timeout must be between 1 and 600 seconds", "body", "timeout")
		}
		opts.Timeout = time.Duration(*t) * time.Second
	} else {
		opts.Timeout = 60 * time.Second
	}
	dir, commit, err := plugin.Fetch(in.r.Context(), src, opts)
	switch {
	case err != nil && strings.Contains(err.Error(), "no answer within"):
		return fail(http.StatusGatewayTimeout, "timeout", err.Error())
	case err != nil && strings.Contains(err.Error(), "fetching"):
		return fail(http.StatusBadGateway, "unavailable", err.Error())
	case err != nil:
		return fail(http.StatusUnprocessableEntity, "invalid_source", err.Error())
	}
	p, err := plugin.Load(dir)
	if err != nil {
		return fail(http.StatusUnprocessableEntity, "invalid_plugin", err.Error())
	}
	out := fetchPluginResponse{Path: filepath.ToSlash(dir), Source: plugin.Redact(src.Source), RepoPath: src.RepoPath, Skills: []string{}, Commands: []string{}}
	if commit != "" {
		out.ResolvedRef = &commit
	}
	if b, err := json.Marshal(p.Manifest); err == nil {
		_ = json.Unmarshal(b, &out.Manifest)
	}
	for _, sk := range p.Skills {
		out.Skills = append(out.Skills, sk.Name)
	}
	for _, c := range p.Commands {
		out.Commands = append(out.Commands, c.Name)
	}
	return out, nil
}

func (s *Server) loadPluginRoute() *route {
	return &route{method: "POST", path: "/api/conversations/{conversation_id}/load_plugin", summary: "Load a plugin of the conversation's registered marketplaces (name or name@marketplace) into its agent", tag: "Conversations", body: loadPluginRequest{}, resp: successResponse{}, errors: []int{400, 404, 422}, h: handle(s, nil, s.handleLoadPlugin)}
}

// handleLoadPlugin is the conversation's LoadPlugin: a plugin or
// marketplace that is not there is a 404, one that cannot be loaded a 400,
// as in the reference. During a run the plugin joins before the next
// step.
func (s *Server) handleLoadPlugin(in *request[none, loadPluginRequest]) (any, error) {
	c, lc, err := in.load()
	if err != nil {
		return nil, err
	}
	err = lc.LoadPlugin(in.r.Context(), in.body.PluginRef)
	switch {
	case errors.Is(err, plugin.ErrNotFound):
		return nil, statusErr(http.StatusNotFound, "%s", err.Error())
	case errors.Is(err, conversation.ErrCannotLoadPlugin):
		return nil, statusErr(http.StatusBadRequest, "%s", err.Error())
	case err != nil:
		return nil, err
	}
	c.publishFullState(lc)
	return successResponse{Success: true}, nil
}

// setInstalledState enables or disables an installed plugin or skill (kind
// names which, for the 404's message).
func setInstalledState(st *plugin.Store, kind, name string, enabled *bool) (any, error) {
	if enabled == nil {
		return nil, &invalidError{loc: []any{"body", "enabled"}, typ: "missing", msg: "Field required"}
	}
	ok, err := st.SetEnabled(name, *enabled)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, statusErr(http.StatusNotFound, "%s '%s' is not installed", kind, name)
	}
	return pluginStateResponse{Name: name, Enabled: *enabled}, nil
}

// uninstallInstalled removes an installed plugin or skill.
func uninstallInstalled(st *plugin.Store, kind, name string) (any, error) {
	ok, err := st.Uninstall(name)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, statusErr(http.StatusNotFound, "%s '%s' is not installed", kind, name)
	}
	return messageResponse{Message: fmt.Sprintf("%s '%s' uninstalled", kind, name)}, nil
}
