package server

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/google/uuid"

	"github.com/gohands/gohands/agent/acp"
	"github.com/gohands/gohands/server/userstore"
	"github.com/gohands/gohands/tool"
)

// The checks of an agent profile are the reference's model's: its
// members by kind (any other is refused), their types and bounds, the
// defaults of those left out, and the upgrade of an older schema
// version (its retired members dropped).

var acpServers = []string{"claude-code", "codex", "gemini-cli", "kimi-code", "pi", "opencode", "custom"}

// profileChecker collects the errors of one profile, located as the
// reference locates them: the variant's tag, then the member.
type profileChecker struct {
	kind string
	in   map[string]any
	out  map[string]any
	errs []validationError
}

func (c *profileChecker) fail(typ, msg string, loc ...any) {
	c.errs = append(c.errs, validationError{Type: typ, Loc: append([]any{c.kind}, loc...), Msg: msg})
}

// take moves member k to out through check, or sets its default.
func (c *profileChecker) take(k string, def any, check func(v any) (any, bool)) {
	v, ok := c.in[k]
	if !ok {
		c.out[k] = def
		return
	}
	if w, ok := check(v); ok {
		c.out[k] = w
	}
}

func (c *profileChecker) str(k string, def any, nullable bool, min, max int) {
	c.take(k, def, func(v any) (any, bool) {
		if v == nil && nullable {
			return nil, true
		}
		s, ok := v.(string)
		switch {
		case !ok:
			c.fail("string_type", "Input should be a valid string", k)
		case len([]rune(s)) < min:
			c.fail("string_too_short", fmt.Sprintf("String should have at least %d character%s", min, plural(min)), k)
		case max > 0 && len([]rune(s)) > max:
			c.fail("string_too_long", fmt.Sprintf("String should have at most %d characters", max), k)
		default:
			return s, true
		}
		return nil, false
	})
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func (c *profileChecker) strList(k string, def any, nullable bool) {
	c.take(k, def, func(v any) (any, bool) {
		if v == nil && nullable {
			return nil, true
		}
		l, ok := v.([]any)
		if !ok {
			c.fail("list_type", "Input should be a valid list", k)
			return nil, false
		}
		out := make([]any, 0, len(l))
		for i, e := range l {
			s, ok := e.(string)
			if !ok {
				c.fail("string_type", "Input should be a valid string", k, i)
				return nil, false
			}
			out = append(out, s)
		}
		return out, true
	})
}

func (c *profileChecker) boolean(k string, def bool) {
	c.take(k, def, func(v any) (any, bool) {
		b, ok := v.(bool)
		if !ok {
			c.fail("bool_type", "Input should be a valid boolean", k)
		}
		return b, ok
	})
}

func (c *profileChecker) integer(k string, def, min int) {
	c.take(k, json.Number(fmt.Sprint(def)), func(v any) (any, bool) {
		n, ok := v.(json.Number)
		i, err := n.Int64()
		switch {
		case !ok || err != nil:
			c.fail("int_type", "Input should be a valid integer", k)
		case i < int64(min):
			c.fail("greater_than_equal", fmt.Sprintf("Input should be greater than or equal to %d", min), k)
		default:
			return n, true
		}
		return nil, false
	})
}

func (c *profileChecker) positive(k string, def string) {
	c.take(k, json.Number(def), func(v any) (any, bool) {
		n, ok := v.(json.Number)
		f, err := n.Float64()
		switch {
		case !ok || err != nil:
			c.fail("float_type", "Input should be a valid number", k)
		case f <= 0:
			c.fail("greater_than", "Input should be greater than 0", k)
		default:
			return n, true
		}
		return nil, false
	})
}

// validateAgentProfile checks a profile object and returns it complete,
// in the reference's canonical form; when it is invalid it returns the
// 422 answer instead.
func validateAgentProfile(in map[string]any) (map[string]any, any) {
	in, err := upgradeAgentProfile(in)
	if err != nil {
		return nil, reply{422, errorDetail{Detail: agentProfileInvalidText}}
	}
	kind := "openhands"
	if k, ok := in["agent_kind"]; ok {
		ks, _ := k.(string)
		if ks != "openhands" && ks != "acp" {
			return nil, reply{422, validationErrors{Detail: []validationError{{Type: "union_tag_invalid", Loc: []any{}, Msg: fmt.Sprintf("Input tag '%v' found using _agent_profile_discriminator() does not match any of the expected tags: 'openhands', 'acp'", k)}}}}
		}
		kind = ks
	}
	c := &profileChecker{kind: kind, in: in, out: map[string]any{}}
	allowed := []string{"schema_version", "agent_kind", "id", "name", "revision", "mcp_server_refs", "secret_refs"}
	c.out["schema_version"] = json.Number(fmt.Sprint(agentProfileSchema))
	c.out["agent_kind"] = kind
	c.take("id", uuid.NewString(), func(v any) (any, bool) {
		s, _ := v.(string)
		if uuid.Validate(s) != nil {
			c.fail("uuid_parsing", "Input should be a valid UUID", "id")
			return nil, false
		}
		return strings.ToLower(s), true
	})
	if _, ok := in["name"]; !ok {
		c.fail("missing", "Field required", "name")
	}
	c.str("name", nil, false, 1, 0)
	c.integer("revision", 0, 0)
	c.strList("mcp_server_refs", nil, true)
	c.strList("secret_refs", nil, true)
	if kind == "acp" {
		allowed = append(allowed, "acp_server", "acp_model", "acp_session_mode", "acp_prompt_timeout", "acp_startup_timeout", "acp_command", "acp_args")
		c.take("acp_server", "claude-code", func(v any) (any, bool) {
			s, _ := v.(string)
			if !slices.Contains(acpServers, s) {
				c.fail("literal_error", "Input should be 'claude-code', 'codex', 'gemini-cli', 'kimi-code', 'pi', 'opencode' or 'custom'", "acp_server")
				return nil, false
			}
			return s, true
		})
		c.str("acp_model", nil, true, 0, 0)
		c.str("acp_session_mode", nil, true, 0, 0)
		c.positive("acp_prompt_timeout", "1800.0")
		c.positive("acp_startup_timeout", "90.0")
		c.str("acp_command", nil, true, 0, 0)
		c.strList("acp_args", nil, true)
	} else {
		allowed = append(allowed, "llm_profile_ref", "agent", "tools", "persona", "system_message_suffix", "disabled_skills",
			"public_skills", "condenser", "verification", "enable_classify_and_switch_llm_tool", "meta_profile_ref", "tool_concurrency_limit")
		if _, ok := in["llm_profile_ref"]; !ok {
			c.fail("missing", "Field required", "llm_profile_ref")
		}
		c.str("llm_profile_ref", nil, false, 1, 0)
		c.str("agent", "CodeActAgent", false, 0, 0)
		c.take("tools", nil, c.tools)
		c.str("persona", nil, true, 1, 65536)
		c.str("system_message_suffix", nil, true, 0, 0)
		c.strList("disabled_skills", []any{}, false)
		c.strList("public_skills", nil, true)
		c.take("condenser", defaultCondenser(), c.condenser)
		c.take("verification", defaultVerification(), c.verification)
		c.boolean("enable_classify_and_switch_llm_tool", false)
		c.str("meta_profile_ref", nil, true, 1, 0)
		c.integer("tool_concurrency_limit", 1, 1)
	}
	for _, k := range slices.Sorted(maps.Keys(in)) {
		if !slices.Contains(allowed, k) {
			c.fail("extra_forbidden", "Extra inputs are not permitted", k)
		}
	}
	if c.errs != nil {
		return nil, reply{422, validationErrors{Detail: c.errs}}
	}
	return c.out, nil
}

// upgradeAgentProfile brings a profile of an older schema version to
// the current one: the embedded skills (version 1) and the retired tool
// switches (versions 2 and 3) are dropped. The reference folds a
// retired switch's value into tools first; here it is dropped, so such
// a profile keeps the server's standard tools.
func upgradeAgentProfile(in map[string]any) (map[string]any, error) {
	v, ok := in["schema_version"]
	if !ok {
		return in, nil
	}
	n, isNum := v.(json.Number)
	ver, err := n.Int64()
	if !isNum || err != nil {
		return nil, fmt.Errorf("schema_version must be an integer")
	}
	if ver < 0 || ver > agentProfileSchema {
		return nil, fmt.Errorf("unsupported schema_version %d", ver)
	}
	if ver == agentProfileSchema {
		return in, nil
	}
	out := maps.Clone(in)
	if ver <= 1 {
		delete(out, "skills")
		if k, _ := out["agent_kind"].(string); k != "acp" && out["name"] == seedAgentProfile && fmt.Sprint(out["revision"]) == "0" {
			if l, ok := out["tools"].([]any); ok && len(l) == 0 {
				out["tools"] = nil
			}
		}
	}
	delete(out, "enable_sub_agents")
	delete(out, "enable_switch_llm_tool")
	out["schema_version"] = json.Number(fmt.Sprint(agentProfileSchema))
	return out, nil
}

// tools checks a tool selection: null (the server's standard tools) or a
// list of {name, params}; a tool named twice is kept once, its params
// merged.
func (c *profileChecker) tools(v any) (any, bool) {
	if v == nil {
		return nil, true
	}
	l, ok := v.([]any)
	if !ok {
		c.fail("list_type", "Input should be a valid list", "tools")
		return nil, false
	}
	var out []any
	index := map[string]map[string]any{}
	for i, e := range l {
		m, ok := e.(map[string]any)
		name, _ := m["name"].(string)
		if !ok || name == "" {
			c.fail("model_type", "Input should be a tool object with a name", "tools", i)
			return nil, false
		}
		params := map[string]any{}
		if p, ok := m["params"]; ok && p != nil {
			pm, ok := p.(map[string]any)
			if !ok {
				c.fail("dict_type", "Input should be a valid dictionary", "tools", i, "params")
				return nil, false
			}
			params = pm
		}
		if prev, ok := index[name]; ok {
			maps.Copy(prev, params)
			continue
		}
		t := map[string]any{"name": name, "params": maps.Clone(params)}
		index[name] = t["params"].(map[string]any)
		out = append(out, t)
	}
	if out == nil {
		out = []any{}
	}
	return out, true
}

func defaultCondenser() map[string]any {
	return userstore.Clone(userstore.DefaultAgentSettings("openhands")["condenser"].(map[string]any))
}

func defaultVerification() map[string]any {
	v := userstore.Clone(userstore.DefaultAgentSettings("openhands")["verification"].(map[string]any))
	delete(v, "critic_api_key") // a profile holds no secret
	return v
}

// condenser checks a condenser's settings: llm_summarizing (the
// default kind, completed from its defaults) or no_op. Members the kind
// does not have are left out, as the reference's model ignores them.
func (c *profileChecker) condenser(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail("model_type", "Input should be a valid dictionary", "condenser")
		return nil, false
	}
	kind, _ := m["condenser_kind"].(string)
	switch kind {
	case "", "llm_summarizing":
		return pickFrom(m, defaultCondenser()), true
	case "no_op":
		return pickFrom(m, map[string]any{"condenser_kind": "no_op", "enabled": true}), true
	}
	c.fail("union_tag_invalid", fmt.Sprintf("Input tag '%v' does not match any of the expected tags: 'llm_summarizing', 'no_op'", m["condenser_kind"]), "condenser")
	return nil, false
}

func (c *profileChecker) verification(v any) (any, bool) {
	m, ok := v.(map[string]any)
	if !ok {
		c.fail("model_type", "Input should be a valid dictionary", "verification")
		return nil, false
	}
	return pickFrom(m, defaultVerification()), true
}

// pickFrom returns def with the members of m that def has.
func pickFrom(m, def map[string]any) map[string]any {
	for k := range def {
		if v, ok := m[k]; ok && k != "condenser_kind" {
			def[k] = v
		}
	}
	return def
}

// agentProfileDiagnostics is the reference's AgentProfileDiagnostics:
// what launching a profile would build.
type agentProfileDiagnostics struct {
	AgentKind                  string         `json:"agent_kind"`
	Valid                      bool           `json:"valid"`
	Errors                     []string       `json:"errors"`
	UnusableTools              []string       `json:"unusable_tools"`
	LLMProfileRef              *string        `json:"llm_profile_ref"`
	LLMProfileResolved         bool           `json:"llm_profile_resolved"`
	LLMAPIKeySet               bool           `json:"llm_api_key_set"`
	MCPServerRefs              []string       `json:"mcp_server_refs"`
	ResolvedMCPConfigKeys      []string       `json:"resolved_mcp_config_keys"`
	DanglingMCPServerRefs      []string       `json:"dangling_mcp_server_refs"`
	DisabledSkills             []string       `json:"disabled_skills"`
	PublicSkills               []string       `json:"public_skills"`
	ResolvedSkills             []string       `json:"resolved_skills"`
	SecretRefs                 []string       `json:"secret_refs"`
	ACPAPIKeySecretName        *string        `json:"acp_api_key_secret_name"`
	ACPBaseURLSecretName       *string        `json:"acp_base_url_secret_name"`
	ACPFileSecretNames         []string       `json:"acp_file_secret_names"`
	MetaProfileRef             *string        `json:"meta_profile_ref"`
	DanglingMetaProfileRef     *string        `json:"dangling_meta_profile_ref"`
	DanglingMetaProfileLLMRefs []string       `json:"dangling_meta_profile_llm_refs"`
	ResolvedSettings           map[string]any `json:"resolved_settings"`

	// buildProblem is why the settings cannot be built, when that is the
	// error (Errors has it prefaced).
	buildProblem string
}

// filled gives the lists the reference always sends their empty value.
func (d agentProfileDiagnostics) filled() agentProfileDiagnostics {
	for _, l := range []*[]string{&d.Errors, &d.UnusableTools, &d.ResolvedMCPConfigKeys, &d.DanglingMCPServerRefs, &d.DisabledSkills, &d.ResolvedSkills, &d.ACPFileSecretNames, &d.DanglingMetaProfileLLMRefs} {
		if *l == nil {
			*l = []string{}
		}
	}
	return d
}

// acpCredentials are the secrets each ACP provider reads its credential
// from (the reference's provider registry): an API key variable, a base
// URL variable, credential files. A custom server has none.
var acpCredentials = map[string]struct {
	key, baseURL string
	files        []string
}{
	"claude-code": {"ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL", nil},
	"codex":       {"OPENAI_API_KEY", "OPENAI_BASE_URL", []string{"CODEX_AUTH_JSON"}},
	"gemini-cli":  {"GEMINI_API_KEY", "GEMINI_BASE_URL", []string{"GOOGLE_APPLICATION_CREDENTIALS_JSON"}},
	"kimi-code":   {"", "KIMI_BASE_URL", []string{"KIMI_CODE_CONFIG_TOML"}},
	"pi":          {"ANTHROPIC_API_KEY", "", []string{"PI_AUTH_JSON"}},
	"opencode":    {"OPENCODE_API_KEY", "", nil},
}

// acpFileSecretSpecs are the file credentials of every provider, as the
// reference's resolved ACP settings list them: the ACPAgent's default.
func acpFileSecretSpecs() []any {
	var l []any
	for _, raw := range acp.DefaultFileSecrets() {
		var spec any
		if err := json.Unmarshal(raw, &spec); err != nil {
			panic(err) // a constant
		}
		l = append(l, spec)
	}
	return l
}

func strOrNil(v any) *string {
	if s, ok := v.(string); ok {
		return &s
	}
	return nil
}

func strs(v any) []string {
	l, ok := v.([]any)
	if !ok {
		return nil
	}
	out := make([]string, 0, len(l))
	for _, e := range l {
		out = append(out, fmt.Sprint(e))
	}
	return out
}

// materialize resolves a validated profile against the stores: its LLM
// profile, its MCP servers among the settings' mcp_config, its
// meta-profile and the LLM profiles that routes to, its tools among
// those registered here. Whatever does not resolve is reported, never
// raised; the resolved settings (secrets redacted) come only with a
// valid profile.
func (s *Server) materialize(p map[string]any) (any, error) {
	diag, err := s.resolveAgentProfile(p, false)
	if err != nil {
		return nil, err
	}
	return diag, nil
}

// resolveAgentProfile is materialize's work: the diagnostics of the
// validated profile p and, when valid, the settings it launches with,
// their secrets in the clear when expose (for a launch, never answered).
func (s *Server) resolveAgentProfile(p map[string]any, expose bool) (agentProfileDiagnostics, error) {
	redact := userstore.Redact
	if expose {
		redact = func(m map[string]any) map[string]any { return m }
	}
	d, err := s.settings.Load()
	if err != nil {
		return agentProfileDiagnostics{}, err
	}
	kind := p["agent_kind"].(string)
	diag := agentProfileDiagnostics{AgentKind: kind, MCPServerRefs: strs(p["mcp_server_refs"]), SecretRefs: strs(p["secret_refs"])}
	mcp, _ := d.AgentSettings["mcp_config"].(map[string]any)
	resolvedMCP := map[string]any{}
	if p["mcp_server_refs"] == nil {
		resolvedMCP = mcp
		diag.ResolvedMCPConfigKeys = slices.Collect(maps.Keys(mcp))
		slices.Sort(diag.ResolvedMCPConfigKeys)
	} else {
		for _, r := range diag.MCPServerRefs {
			switch _, ok := mcp[r]; {
			case ok && !slices.Contains(diag.ResolvedMCPConfigKeys, r):
				diag.ResolvedMCPConfigKeys = append(diag.ResolvedMCPConfigKeys, r)
				resolvedMCP[r] = mcp[r]
			case !ok && !slices.Contains(diag.DanglingMCPServerRefs, r):
				diag.DanglingMCPServerRefs = append(diag.DanglingMCPServerRefs, r)
			}
		}
	}
	var settings map[string]any
	if kind == "acp" {
		server, _ := p["acp_server"].(string)
		if c, ok := acpCredentials[server]; ok {
			if c.key != "" {
				diag.ACPAPIKeySecretName = &c.key
			}
			if c.baseURL != "" {
				diag.ACPBaseURLSecretName = &c.baseURL
			}
			diag.ACPFileSecretNames = c.files
		}
		settings = userstore.DefaultAgentSettings("acp")
		for _, k := range []string{"acp_server", "acp_model", "acp_session_mode", "acp_prompt_timeout", "acp_startup_timeout"} {
			settings[k] = p[k]
		}
		if cmd, ok := p["acp_command"].(string); ok && cmd != "" {
			if words, err := shellWords(cmd); err != nil {
				diag.buildProblem = err.Error()
			} else {
				settings["acp_command"] = words
			}
		}
		if args, ok := p["acp_args"].([]any); ok {
			settings["acp_args"] = args
		}
		settings["acp_file_secrets"] = acpFileSecretSpecs()
		// As the reference: no timestamp, no project skills (the ACP
		// server reads the workspace itself).
		ctx := userstore.DefaultAgentSettings("openhands")["agent_context"].(map[string]any)
		ctx["load_project_skills"] = false
		ctx["current_datetime"] = nil
		settings["agent_context"] = ctx
	} else {
		ref := p["llm_profile_ref"].(string)
		diag.LLMProfileRef = &ref
		diag.DisabledSkills = strs(p["disabled_skills"])
		diag.PublicSkills = strs(p["public_skills"])
		diag.MetaProfileRef = strOrNil(p["meta_profile_ref"])
		if tools, ok := p["tools"].([]any); ok {
			registered := tool.Registered()
			for _, t := range tools {
				name := t.(map[string]any)["name"].(string)
				if !slices.Contains(registered, name) {
					diag.UnusableTools = append(diag.UnusableTools, name)
				}
			}
		}
		var failing []string
		for _, n := range diag.UnusableTools {
			if n != "browser_tool_set" { // an unavailable browser is left out, not fatal
				failing = append(failing, n)
			}
		}
		if len(failing) > 0 {
			diag.Errors = append(diag.Errors, "Tool(s) this server cannot run: "+strings.Join(failing, ", "))
		}
		lc, err := s.llmProfileSettings(ref)
		switch {
		case err == nil:
			diag.LLMProfileResolved = true
			key, _ := lc["api_key"].(string)
			diag.LLMAPIKeySet = strings.TrimSpace(key) != ""
		case errors.Is(err, userstore.ErrNoProfile):
			diag.Errors = append(diag.Errors, fmt.Sprintf("LLM profile '%s' not found", ref))
		default:
			diag.Errors = append(diag.Errors, fmt.Sprintf("Failed to build agent settings: Could not load LLM profile '%s': %v", ref, err))
			return diag.filled(), nil
		}
		if len(diag.DanglingMCPServerRefs) > 0 {
			diag.Errors = append(diag.Errors, "MCP server(s) not configured: "+strings.Join(diag.DanglingMCPServerRefs, ", "))
		}
		if p["enable_classify_and_switch_llm_tool"] == true && diag.MetaProfileRef != nil {
			meta, err := s.metaProfiles.Load(*diag.MetaProfileRef)
			if err != nil {
				diag.DanglingMetaProfileRef = diag.MetaProfileRef
				diag.Errors = append(diag.Errors, fmt.Sprintf("Meta-profile '%s' not found", *diag.MetaProfileRef))
			} else {
				refs := []string{fmt.Sprint(meta["classifier_model"])}
				for _, cl := range anyList(meta["classes"]) {
					if m, ok := cl.(map[string]any); ok {
						refs = append(refs, fmt.Sprint(m["model"]))
					}
				}
				for _, r := range refs {
					if _, err := s.llmProfileSettings(r); err != nil && !slices.Contains(diag.DanglingMetaProfileLLMRefs, r) {
						diag.DanglingMetaProfileLLMRefs = append(diag.DanglingMetaProfileLLMRefs, r)
					}
				}
				if len(diag.DanglingMetaProfileLLMRefs) > 0 {
					diag.Errors = append(diag.Errors, "LLM profile(s) routed to by the meta-profile not found: "+strings.Join(diag.DanglingMetaProfileLLMRefs, ", "))
				}
			}
		}
		if len(diag.Errors) > 0 {
			return diag.filled(), nil
		}
		settings = userstore.DefaultAgentSettings("openhands")
		settings["llm"] = redact(userstore.Fill(lc, settings["llm"].(map[string]any)))
		settings["agent"] = p["agent"]
		settings["tools"] = p["tools"]
		if p["tools"] == nil {
			settings["tools"] = defaultToolSelection()
		}
		for _, k := range []string{"persona", "condenser", "enable_classify_and_switch_llm_tool", "tool_concurrency_limit"} {
			settings[k] = p[k]
		}
		settings["active_meta_profile"] = p["meta_profile_ref"]
		v := userstore.Clone(p["verification"].(map[string]any))
		v["critic_api_key"] = nil
		settings["verification"] = v
		ctx := settings["agent_context"].(map[string]any)
		ctx["system_message_suffix"] = p["system_message_suffix"]
		ctx["disabled_skills"] = p["disabled_skills"]
		ctx["load_project_skills"] = true
	}
	if len(diag.DanglingMCPServerRefs) > 0 {
		if kind == "acp" {
			diag.Errors = append(diag.Errors, "MCP server(s) not configured: "+strings.Join(diag.DanglingMCPServerRefs, ", "))
		}
		return diag.filled(), nil
	}
	if kind == "acp" {
		if diag.buildProblem == "" {
			diag.buildProblem = acpCommandProblem(settings)
		}
		if diag.buildProblem != "" {
			diag.Errors = append(diag.Errors, "Failed to build agent settings: "+diag.buildProblem)
			return diag.filled(), nil
		}
	}
	settings["mcp_config"] = redact(resolvedMCP)
	diag.ResolvedSettings = settings
	diag.Valid = true
	return diag.filled(), nil
}

func anyList(v any) []any {
	l, _ := v.([]any)
	return l
}

// defaultToolSelection is the tool selection a profile without one
// launches with here: the standard tools and switch_llm.
func defaultToolSelection() []any {
	var out []any
	for _, n := range []string{"terminal", "file_editor", "task_tracker", "switch_llm"} {
		out = append(out, map[string]any{"name": n, "params": map[string]any{}})
	}
	return out
}

// shlexError is why a command line does not split, in the words of the
// reference's shlex (which a launch answers with).
type shlexError string

func (e shlexError) Error() string { return string(e) }

// shellWords splits a command line as a POSIX shell (and the reference's
// shlex.split) does for words: blanks separate, single quotes keep
// everything, double quotes keep all but a backslash before " or \, a
// backslash outside quotes keeps the next character. An unclosed quote
// or a trailing backslash is an error, with shlex's words.
func shellWords(s string) ([]any, error) {
	out := []any{}
	var w strings.Builder
	inWord := false
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; ch {
		case '\'':
			inWord = true
			j := strings.IndexByte(s[i+1:], '\'')
			if j < 0 {
				return nil, shlexError("No closing quotation")
			}
			w.WriteString(s[i+1 : i+1+j])
			i += j + 1
		case '"':
			inWord = true
			for i++; ; i++ {
				if i >= len(s) {
					return nil, shlexError("No closing quotation")
				}
				if s[i] == '"' {
					break
				}
				if s[i] == '\\' && i+1 < len(s) && (s[i+1] == '"' || s[i+1] == '\\') {
					i++
				}
				w.WriteByte(s[i])
			}
		case '\\':
			if i+1 == len(s) {
				return nil, shlexError("No escaped character")
			}
			inWord = true
			i++
			w.WriteByte(s[i])
		case ' ', '\t', '\r', '\n':
			if inWord {
				out = append(out, w.String())
				w.Reset()
				inWord = false
			}
		default:
			inWord = true
			w.WriteByte(ch)
		}
	}
	if inWord {
		out = append(out, w.String())
	}
	return out, nil
}
