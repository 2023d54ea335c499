package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/gohands/gohands/conversation/pgstore"
	"github.com/gohands/gohands/llm"
	"github.com/gohands/gohands/secret"
	"github.com/gohands/gohands/server"
	"github.com/gohands/gohands/telemetry"
	"github.com/gohands/gohands/telemetry/oteltrace"
	"github.com/gohands/gohands/telemetry/prom"
	"github.com/gohands/gohands/tools/childconversation"
	_ "github.com/gohands/gohands/tools/preset" // every tool and provider, for agents sent by clients
)

type serveFlags struct {
	host, config    string
	allowedHosts    []string
	port            int
	allowNoAuth     bool
	verbose         bool
	autotitle       bool
	securityEvents  bool
	shutdownTimeout time.Duration
	stdinLease      bool
	runtime         string
	sandbox         sandboxFlags
	store           string
	advertise       string
	lease           time.Duration
}

func (a *app) serveCmd() *cobra.Command {
	var f serveFlags
	cmd := &cobra.Command{
		Use:   "serve [flags]",
		Short: "Serve the OpenHands agent-server API (REST and WebSocket)",
		Long: `Serve the OpenHands agent-server API, so that OpenHands clients (the Python
SDK's RemoteConversation and RemoteWorkspace, or any HTTP client) can run
conversations here. The API is described at /openapi.json and /docs.

Configuration is read as the reference server reads it: a JSON file (--config,
or $OPENHANDS_AGENT_SERVER_CONFIG_PATH, or
workspace/openhands_agent_server_config.json if it exists) with the keys
session_api_keys, conversations_path, workspace_path, bash_events_dir,
max_concurrent_runs, secret_key, conversation_idle_ttl_seconds and webhooks,
overridden by environment variables:

  OH_SESSION_API_KEYS_0, _1, ...    accepted X-Session-API-Key values (several
                                    allow rotation; legacy SESSION_API_KEY)
  OH_CONVERSATIONS_PATH             where conversations are stored
                                    (default workspace/conversations)
  OH_WORKSPACE_PATH                 default working directory
                                    (default workspace/project)
  OH_BASH_EVENTS_DIR                bash events directory
  OH_MAX_CONCURRENT_RUNS            conversations running at once; more get
                                    429 (default 10)
  OH_SECRET_KEY                     key encrypting secrets at rest (default:
                                    the first session key; without any,
                                    secrets do not survive a restart)
  OH_CONVERSATION_IDLE_TTL_SECONDS  idle seconds before a conversation is
                                    released from memory (default 1200;
                                    "null": never)
  OH_WEBHOOKS_0_BASE_URL, ...       webhooks receiving event batches (with
                                    _HEADERS as JSON, _EVENT_BUFFER_SIZE,
                                    _FLUSH_DELAY, _NUM_RETRIES, _RETRY_DELAY)

Without a session key the server only listens on a loopback address, unless
--allow-unauthenticated says otherwise. SIGINT or SIGTERM drain the server:
new runs are refused with 503, the running conversations pause (waiting at
most --shutdown-timeout), are persisted and, with --store, their leases are
released so another server takes them over at once; then it exits 0. A
second signal quits at once (130 or 143). On restart every stored
conversation is listed again and continues where it paused.

With --runtime docker each conversation runs in its own container of the
gohands image (scripts/image.sh builds it; needs a Docker engine): its REST
calls and sockets are routed there, its files live under --sandbox-dir, a
container unused for --idle-stop is stopped and started again on the next
request, and every container stops with this server.

With --store postgres://..., conversations are kept in PostgreSQL instead of
conversations_path, and several servers share them: each conversation runs
on the server holding its lease, requests for it reaching another server are
forwarded there (--advertise is the URL other servers reach this one at),
and when a server dies the others take its conversations over once its
leases expire (--lease) and resume those that were running.`,
		Example: `  gohands serve
  OH_SESSION_API_KEYS_0=$(openssl rand -hex 16) gohands serve --host 0.0.0.0 --port 8000
  gohands serve --runtime docker --memory 2g --cpus 1 --pids 512`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return a.serve(cmd.Context(), &f)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.host, "host", "127.0.0.1", "`address` to listen on")
	fl.IntVar(&f.port, "port", 8000, "`port` to listen on")
	fl.StringVar(&f.config, "config", "", "JSON configuration `file` (default $"+server.ConfigPathEnv+" or "+server.DefaultConfigPath+")")
	fl.BoolVar(&f.autotitle, "autotitle", true, "title each conversation whose start request leaves autotitle set (its default) from its first message with a model call (its title_llm_profile from the settings' llm_profiles, else the agent's model), as the reference's server does; --autotitle=false leaves titles to PATCH")
	fl.BoolVar(&f.securityEvents, "security-analysis-events", false, "record a SecurityAnalysisEvent for each batch of actions a security analyzer rates (a kind of the reference since 1.58: clients of the Python reference 1.43.1 cannot decode it)")
	fl.StringSliceVar(&f.allowedHosts, "allowed-host", nil, "without a session key, a host `name` (besides localhost and IP addresses) this server answers to in requests' Host header; repeat for several (other names are refused, against DNS rebinding)")
	fl.BoolVar(&f.allowNoAuth, "allow-unauthenticated", false, "listen on a non-loopback address without any session key (anyone who can reach the port controls the agent)")
	fl.DurationVar(&f.shutdownTimeout, "shutdown-timeout", 30*time.Second, "how long to wait for running conversations to pause on shutdown")
	fl.BoolVarP(&f.verbose, "verbose", "v", false, "log requests and diagnostics to standard error")
	fl.StringVar(&f.runtime, "runtime", "local", "where conversations run: local (in this process) or docker (each in its own container)")
	f.sandbox.register(fl)
	fl.BoolVar(&f.stdinLease, "exit-on-stdin-close", false, "shut down (as on SIGTERM) when standard input closes: a sandbox container ends with the program attached to it")
	fl.StringVar(&f.store, "store", "", "keep conversations in PostgreSQL, shared with other servers: a postgres:// `URL`")
	fl.StringVar(&f.advertise, "advertise", "", "the `URL` other servers reach this one at, with --store (default http://HOST:PORT)")
	fl.DurationVar(&f.lease, "lease", 15*time.Second, "with --store, how long a dead server's conversations stay locked before another server takes them over")
	return cmd
}

// isLoopback reports whether host names only loopback addresses.
func isLoopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// openStore opens the PostgreSQL store --store names, or returns nil
// without one; the node is known to the others by --advertise, else by
// the address it listens on.
func openStore(ctx context.Context, f *serveFlags, addr net.Addr, log *slog.Logger) (*pgstore.Backend, error) {
	if f.store == "" {
		return nil, nil
	}
	if !strings.HasPrefix(f.store, "postgres://") && !strings.HasPrefix(f.store, "postgresql://") {
		return nil, usageErr("--store %q: want a postgres:// URL", f.store)
	}
	node := cmp.Or(f.advertise, "http://"+addr.String())
	pb, err := pgstore.Open(ctx, f.store, &pgstore.Options{Node: node, Lease: f.lease, Logger: log})
	if err != nil {
		return nil, &exitErr{code: exitError, msg: err.Error()}
	}
	return pb, nil
}

func (a *app) serve(ctx context.Context, f *serveFlags) error {
	opts, err := server.LoadConfig(f.config, a.getenv)
	if err != nil {
		return usageErr("%v", err)
	}
	// start_child_conversation launches children on this server with its
	// key, which is no longer in the environment once hidden.
	if len(opts.SessionAPIKeys) > 0 {
		childconversation.UseSessionKey(opts.SessionAPIKeys[0])
	}
	if err := a.hideServerCredentials(); err != nil {
		return &exitErr{code: exitError, msg: fmt.Sprintf("hiding the credentials in the environment: %v", err)}
	}
	if len(opts.SessionAPIKeys) == 0 && !isLoopback(f.host) && !f.allowNoAuth {
		return usageErr("refusing to listen on %s without a session key: set OH_SESSION_API_KEYS_0 (or pass --allow-unauthenticated)", f.host)
	}
	if f.port < 0 || f.port > 65535 {
		return usageErr("--port %d: not a port", f.port)
	}
	level := slog.LevelInfo
	if f.verbose {
		level = slog.LevelDebug
	}
	opts.Logger = slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: level}))
	opts.AutoTitle = f.autotitle
	opts.AllowedHosts = append(opts.AllowedHosts, f.allowedHosts...)
	if net.ParseIP(f.host) == nil && f.host != "" {
		opts.AllowedHosts = append(opts.AllowedHosts, f.host) // the name it was told to listen on
	}
	opts.SecurityAnalysisEvents = f.securityEvents
	// switch_profile and title_llm_profile name the settings' llm_profiles.
	if path, err := a.settingsPath(); err == nil {
		if opts.Profiles, err = llm.LoadProfiles(path); err != nil {
			return usageErr("%v", err)
		}
	}
	ln, err := net.Listen("tcp", net.JoinHostPort(f.host, strconv.Itoa(f.port)))
	if err != nil {
		return &exitErr{code: exitError, msg: err.Error()}
	}
	if opts.Postgres, err = openStore(ctx, f, ln.Addr(), opts.Logger); err != nil {
		ln.Close()
		return err
	}
	if opts.Postgres != nil {
		defer opts.Postgres.Close()
	}
	// /metrics counts what the process's spans measure, next to the
	// trace exporter --trace or OTEL_* installed, if any.
	opts.Metrics = prom.New()
	prevTracer := telemetry.SetTracer(nil)
	telemetry.SetTracer(telemetry.Multi(prevTracer, opts.Metrics))
	defer telemetry.SetTracer(prevTracer)
	var srv interface {
		http.Handler
		Close(context.Context) error
	}
	switch f.runtime {
	case "local":
		if opts.DeferredInit {
			srv = server.NewDeferred(opts)
		} else {
			srv, err = server.New(opts)
		}
	case "docker":
		srv, err = newSandboxServer(&f.sandbox, opts)
	default:
		ln.Close()
		return usageErr("--runtime %q: want local or docker", f.runtime)
	}
	if err != nil {
		ln.Close()
		return &exitErr{code: exitError, msg: err.Error()}
	}
	hs := &http.Server{Handler: srv, ReadHeaderTimeout: 30 * time.Second}
	setInternalServerURL(ln.Addr())
	fmt.Fprintf(a.stderr, "gohands: serving the agent API on http://%s (docs at /docs)\n", ln.Addr())
	served := make(chan error, 1)
	go func() { served <- hs.Serve(ln) }()
	var stdinClosed chan struct{} // nil (never ready) without the flag
	if f.stdinLease {
		stdinClosed = make(chan struct{})
		go func() { io.Copy(io.Discard, a.stdin); close(stdinClosed) }()
	}
	// The first signal drains: new runs are refused with 503, running
	// conversations pause (within --shutdown-timeout), their state is
	// written and, with --store, their leases released; a second quits at
	// once.
	sigCtx, stopSignals := a.stopOnSignal(ctx, "")
	defer stopSignals()
	select {
	case err = <-served:
	case <-sigCtx.Done():
		if d, ok := srv.(interface{ Drain() }); ok {
			d.Drain()
		}
		fmt.Fprintf(a.stderr, "gohands: %s: shutting down: refusing new runs, pausing running conversations (again to quit at once)\n", context.Cause(sigCtx))
	case <-stdinClosed:
		fmt.Fprintln(a.stderr, "gohands: standard input closed: shutting down")
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), f.shutdownTimeout)
	defer cancel()
	closeErr := srv.Close(sctx)
	hctx, hcancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer hcancel()
	hs.Shutdown(hctx)
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return &exitErr{code: exitError, msg: err.Error()}
	}
	if closeErr != nil {
		return &exitErr{code: exitError, msg: closeErr.Error()}
	}
	return nil
}

// setInternalServerURL points the server's own tools
// (start_child_conversation, secrets given as relative URLs) at addr
// through $OH_INTERNAL_SERVER_URL, whose default is the reference's port
// 8000, unless the deployer set it.
func setInternalServerURL(addr net.Addr) {
	if _, ok := os.LookupEnv(secret.InternalServerURLEnv); !ok {
		os.Setenv(secret.InternalServerURLEnv, "http://"+loopbackAddr(addr))
	}
}

// hideServerCredentials removes, once the configuration is read, the
// server's credentials from its environment, and their values from the
// environment it started with (which /proc/<pid>/environ shows to the
// agents' commands, its children): the session keys, the secret key, the
// webhooks' headers, the OTLP exporter's headers (a tracing backend's
// key, read when the command started), and the model keys the server
// never reads (each request brings its agent's).
func (a *app) hideServerCredentials() error {
	names := append([]string{"SESSION_API_KEY", "OH_SECRET_KEY", envAPIKey}, allKeyVars()...)
	names = append(names, oteltrace.CredentialVars()...)
	for i := 0; a.getenv("OH_SESSION_API_KEYS_"+strconv.Itoa(i)) != ""; i++ {
		names = append(names, "OH_SESSION_API_KEYS_"+strconv.Itoa(i))
	}
	for i := 0; a.getenv("OH_WEBHOOKS_"+strconv.Itoa(i)+"_BASE_URL") != ""; i++ {
		names = append(names, "OH_WEBHOOKS_"+strconv.Itoa(i)+"_HEADERS")
	}
	for _, name := range names {
		if err := a.unsetenv(name); err != nil {
			return err
		}
	}
	return nil
}

// loopbackAddr is the address at which this host reaches the listener at
// addr: a wildcard host (0.0.0.0, ::) is reached on loopback.
func loopbackAddr(addr net.Addr) string {
	tcp, ok := addr.(*net.TCPAddr)
	if !ok || !tcp.IP.IsUnspecified() {
		return addr.String()
	}
	return net.JoinHostPort("127.0.0.1", strconv.Itoa(tcp.Port))
}
