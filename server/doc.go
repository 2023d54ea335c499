// Package server is gohands' agent server: the REST and WebSocket API of
// the reference's openhands-agent-server, so that OpenHands clients (the
// Python SDK's RemoteConversation and RemoteWorkspace) drive conversations
// that run here.
//
// [New] returns a [Server], an http.Handler, from a nil-able [Options];
// cmd/gohands serve is a thin command over it, and [LoadConfig] reads the
// options as the reference reads its configuration (a JSON file and OH_*
// environment variables).
//
// Each conversation lives in its own directory under
// Options.ConversationsPath, in the reference's layout (meta.json beside
// base_state.json and events/), so the reference's server and gohands can
// serve each other's conversations. A conversation is loaded on first use
// and released after Options.IdleTTL without use, or after a second when it
// has not run since it was loaded (it holds nothing a reload cannot
// rebuild); a released conversation costs its record alone (about 1.3 KB,
// BenchmarkIdleMemory), an idle one no goroutine, and a running one one. Every change of a state
// field is appended to the log and sent to the sockets as a
// ConversationStateUpdateEvent, as the reference does, and a full_state
// snapshot follows every run, pause and rejection.
//
// Sockets receive events through a bounded queue each: publishing never
// blocks the agent, and a socket that falls Options.SubscriberBuffer
// events behind is closed with code 1013, after which its client
// reconciles over REST.
//
// A conversation's agent comes whole in the start request's agent, or is
// built from its agent_settings as the reference builds it (default tools,
// the settings' condenser; an ACPAgent for agent_kind acp, built as an ACP
// agent profile's launch builds it, and refused without acp_command as
// that launch is). gohands adds one key to agent_settings,
// preset, naming a tool preset of package tools/preset (default, gpt5,
// gemini, planning): the agent is then the one the reference's preset of
// that name builds. The reference ignores the key, so a client may send it
// to either server.
//
// The start request (POST /api/conversations) takes every field of the
// reference 1.58.2's StartConversationRequest. Their status here:
//
//   - implemented: agent, agent_settings, workspace, conversation_id,
//     parent_conversation_id, confirmation_policy, security_analyzer,
//     initial_message, max_iterations, stuck_detection, secrets,
//     secrets_encrypted, hook_config, tags, user_id, the observability_*
//     fields (stored, returned, and continuing the caller's trace),
//     title_llm_profile, autotitle (titles need Options.AutoTitle, which
//     gohands serve sets unless --autotitle=false: on by default, as the
//     reference's server titles by default);
//   - worktree and worktree_options: the conversation gets its own git
//     worktree of the workspace's repository under
//     Options.ConversationWorktreeRoot (<root>/<id>/<repository>, branch
//     <branch_prefix><id>), the agent works and is told to work there, and
//     DELETE removes it (its branch stays); a workspace outside any
//     repository runs where it is, as in the reference;
//   - tool_module_qualnames: stored and returned (Python modules; tools
//     are resolved by name from gohands' registry);
//   - client_tools: each spec (the reference's ClientToolSpec, checked as
//     the reference does: 422 for a bad schema, a duplicate name or the
//     name of a registered tool) is added to the agent's tools as the
//     reference stores it, offered to the model with the client's schema,
//     and returned by GET; a call is an ActionEvent of kind
//     ClientAction_<name> that the client sees on its socket, answered at
//     once with a ClientToolObservation ("Tool call dispatched to
//     client."), as the reference 1.58.2 does: the reference does not wait
//     for the client, which sends what came of the call as a message;
//   - agent_definitions: sub-agent definitions (the reference's
//     AgentDefinition, the JSON form of the task tool's Markdown files)
//     registered for the whole server where their names are free, as the
//     reference registers them, so a conversation's task tool runs them;
//     kept in meta.json and registered again when a stored conversation is
//     loaded;
//   - plugins: each source (the reference's PluginSource: source, ref,
//     repo_path; 422 for a bad one) is fetched and loaded when the
//     conversation is created: its skills and MCP servers join the stored
//     agent and its hooks follow the request's own; a plugin that cannot
//     be fetched or loaded is a 400 naming its source;
//   - agent_profile_id (instead of agent or agent_settings): the stored
//     agent profile with that id is resolved as its materialize does (its
//     LLM profile, tools, condenser, MCP servers, verification) and the
//     agent built from those settings; an unknown id is a 404, dangling
//     references a 422 whose detail lists them all (code
//     unresolved_profile_references); an ACP profile launches an ACPAgent
//     (its command, server, model, timeouts and MCP servers) whose server
//     starts with the first run, but gohands has no default launch command
//     per acp_server (the reference's pinned npx packages), so an ACP
//     profile without acp_command is a 422 (invalid_agent_launch) and
//     its materialize not valid (the reference's only for acp_server
//     custom); the
//     conversation's launched_agent_profile records the profile's id,
//     revision and secret_refs, which keeps only the request secrets it
//     names;
//   - agent_launch_additions: added to the agent after it is resolved,
//     whatever its source (launchadditions.go says how): the suffix
//     appended, the skills merged (the agent's own and its
//     disabled_skills win), llm_profile_ref launching an agent profile on
//     that LLM profile (recorded in launched_agent_profile); not stored;
//   - accepted at their defaults only, refused with a 422 naming the field
//     otherwise: prompt, container,
//     conversation_runtime (other than "local").
//
// Where the reference has a quirk that is a bug, this server does better:
//
//   - an unknown event id answers 404, not 500 (a KeyError there);
//   - ask_agent on an unknown conversation answers 404, not 500;
//   - a start request naming an unregistered tool answers 422 at once
//     rather than failing when the agent starts;
//   - pause and interrupt are one operation: pausing cancels the step in
//     progress at once (an LLM call or a tool), which the reference does
//     only on interrupt;
//   - condense answers 409 while actions wait for confirmation (a step
//     would run them), as it does, like the reference 1.58, for an agent
//     without a condenser acting on requests;
//   - secrets given at creation are kept in the state's secret registry
//     (encrypted with the server's key) rather than in meta.json;
//   - bash events are kept in memory (the last 10,000), not in files.
//
// /api/file/archive (and its runtime-scoped twin) streams its archive as
// it is made, where the reference writes it to a temporary file first: a
// failure after the first byte cuts the transfer instead of answering 500.
// git-delta's default base is HEAD (the empty tree before the first
// commit); the reference looks for the branch's remote and merge-base
// first. Its headers never carry a remote's credentials. The search of
// GitHub repositories (/api/git/repositories/search) takes its token from
// the user's secrets as the reference does; where the reference's failure
// detail is only "GitHub repository search failed", this one also names
// the URL asked and the status GitHub answered (never the token), and its
// 15-second bound covers the whole search, not each request.
//
// The OpenAI-compatible gateway (/v1, gateway.go) runs the active agent
// profile with the LLM profile the request's model names, as the
// reference does; its models, like the LLM profiles an agent profile can
// name, are the stored ones (/api/profiles) and also Options.Profiles.
//
// The quirks clients rely on are kept: creation answers 201 (200 for an
// existing id), pause, interrupt and delete of an unknown conversation
// answer 400, PATCH of an unknown one 200 {"success": false}, counts are
// bare integers, conversation page ids are hex.
//
// The ChatGPT subscription login (/api/llm/subscription/openai/...) is the
// reference's device-code flow against OpenAI's OAuth issuer
// (llm/subscription), storing the login where the reference does. That
// issuer cannot be reached from this repository's tests: they run the
// flow against a scripted issuer on loopback (Options.OpenAIIssuer,
// llm/subscription/subscriptiontest), the reference 1.58.2 beside
// gohands (tests/pyclient TestSubscriptionDeviceLogin158); it has not
// been run against the real one.
//
// /openapi.json is generated from the route table and the request and
// response types of the handlers (github.com/swaggest/openapi-go); /docs
// shows it.
package server
