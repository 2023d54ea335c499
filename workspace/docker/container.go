package docker

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gohands/gohands/internal/dockerapi"
	"github.com/gohands/gohands/internal/freeport"
)

// DefaultImage is the image scripts/image.sh builds and tags.
const DefaultImage = "gohands:latest"

// Label marks every container this package starts; its value is the
// starting process's id. LabelKey is the label's key for filters.
const Label = "org.gohands.sandbox"

// ContainerPort is where gohands serve listens inside the image.
const ContainerPort = 8000

// DefaultHealthTimeout bounds the wait for /health to answer.
const DefaultHealthTimeout = 60 * time.Second

// ErrNoImage is returned when the engine does not have the image.
var ErrNoImage = errors.New("docker: image not found")

// ErrNoEngine is returned when no Docker engine answers.
var ErrNoEngine = errors.New("docker: no engine answers")

// Options configure a container. A nil *Options starts DefaultImage with
// no mounts, the default bridge network and no limits.
type Options struct {
	// Image is the agent-server image; empty means $GOHANDS_IMAGE, else
	// DefaultImage.
	Image string
	// WorkingDir is the agent's directory in the container, for New
	// (empty: DefaultWorkingDir).
	WorkingDir string
	// DockerHost is the engine's address ("unix:///var/run/docker.sock");
	// empty means $DOCKER_HOST, else the default socket.
	DockerHost string
	// Env sets variables in the container.
	Env map[string]string
	// ForwardEnv names variables of this process copied into the
	// container when set here.
	ForwardEnv []string
	// Volumes are mounts as `docker run -v` takes them:
	// "host-path:container-path[:ro]" (a relative host path is made
	// absolute) or "volume-name:container-path".
	Volumes []string
	// Network is the container's network mode: "" (the default bridge,
	// the server published on 127.0.0.1), "host" (the server listens on
	// this machine's 127.0.0.1, and the container reaches services on the
	// host's loopback), "none", or a network's name.
	Network string
	// HostPort is the port on 127.0.0.1 the server is reached at; zero
	// picks a free one.
	HostPort int
	// CPUs limits the container to this many CPUs (0: no limit).
	CPUs float64
	// Memory limits the container's memory in bytes (0: no limit).
	Memory int64
	// Pids limits the number of processes in the container (0: no limit).
	Pids int64
	// GPUs gives the container every GPU (`--gpus all`).
	GPUs bool
	// User runs the server as "uid[:gid]" instead of the image's user.
	User string
	// Labels are added to the container's (tests use them to find what
	// they started).
	Labels map[string]string
	// Entrypoint and Cmd replace the image's when not nil. With the
	// image's entry point (gohands serve), Cmd nil means the server's
	// address flags, chosen here; both must keep the server on the port
	// the package chose (ContainerPort, or HostPort on the host network).
	Entrypoint, Cmd []string
	// HealthTimeout bounds the wait for /health (zero: DefaultHealthTimeout).
	HealthTimeout time.Duration
	// Output, when not nil, receives the container's stdout and stderr as
	// they are written.
	Output io.Writer
	// Logger gets the container's life cycle at debug level; nil discards.
	Logger *slog.Logger
}

// Container is a running agent-server container, reached at URL with
// SessionKey. It ends when Close is called and also when the program
// that started it exits by any means: the server reads its stdin, held
// open by this process, and shuts down when it closes.
type Container struct {
	api     *dockerapi.Client
	id      string
	name    string
	url     string
	key     string
	timeout time.Duration
	log     *slog.Logger
	att     *dockerapi.Attachment
	out     *tail
	done    chan struct{} // closed when the container's output ends
	exited  <-chan dockerapi.WaitResult

	mu     sync.Mutex
	paused bool
	closed bool
}

// Start creates and starts a container from opts.Image and waits until
// its /health answers. On any failure nothing is left running and the
// error says why, with the container's output when it printed any.
func Start(ctx context.Context, opts *Options) (*Container, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if o.HealthTimeout <= 0 {
		o.HealthTimeout = DefaultHealthTimeout
	}
	log := o.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	api, err := engine(ctx, &o)
	if err != nil {
		return nil, err
	}
	binds, err := binds(o.Volumes)
	if err != nil {
		api.Close()
		return nil, err
	}
	key := newKey()
	if o.HostPort == 0 && o.Cmd == nil && o.Entrypoint == nil {
		// The image's gohands serve: the port is chosen where it is
		// bound (by the server on the host network, by the engine when
		// published) and read back, so no other program can take it
		// between a pick and the bind and answer our health checks.
		c := newContainer(api, key, &o, log)
		if err := c.start(ctx, &o, binds, 0); err != nil {
			c.remove()
			api.Close()
			return nil, err
		}
		return c, nil
	}
	// A port we picked for the caller's command may be taken between the
	// pick and the start: pick again a few times. A port the caller chose
	// is tried once.
	tries := 1
	if o.HostPort == 0 {
		tries = 5
	}
	for i := range tries {
		port := o.HostPort
		if port == 0 {
			if port, err = freeport.Pick(); err != nil {
				api.Close()
				return nil, err
			}
		}
		// The engine may publish a port another program listens on
		// (with iptables and no userland proxy it does not bind it), so
		// check it here.
		if ln, lerr := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port))); lerr != nil {
			err = fmt.Errorf("%w: %v", errPortTaken, lerr)
			if o.HostPort == 0 && i < tries-1 {
				continue
			}
			break
		} else {
			ln.Close()
		}
		c := newContainer(api, key, &o, log)
		err = c.start(ctx, &o, binds, port)
		if err == nil {
			return c, nil
		}
		c.remove()
		if !errors.Is(err, errPortTaken) || i == tries-1 {
			break
		}
		log.Debug("docker: host port taken, trying another", "port", port)
	}
	api.Close()
	if errors.Is(err, errPortTaken) && o.HostPort != 0 {
		return nil, fmt.Errorf("docker: port %d on 127.0.0.1 is taken: %w", o.HostPort, err)
	}
	return nil, err
}

func newContainer(api *dockerapi.Client, key string, o *Options, log *slog.Logger) *Container {
	return &Container{api: api, key: key, timeout: o.HealthTimeout, log: log, out: &tail{max: 64 << 10, w: o.Output}, done: make(chan struct{})}
}

// serving is the line gohands serve prints once it listens.
var serving = regexp.MustCompile(`serving the agent API on (http://127\.0\.0\.1:[0-9]+)`)

var errPortTaken = errors.New("host port in use")

// engine returns a client of o's engine after checking it has o.Image
// (filling in the default image).
func engine(ctx context.Context, o *Options) (*dockerapi.Client, error) {
	if o.Image == "" {
		o.Image = os.Getenv("GOHANDS_IMAGE")
	}
	if o.Image == "" {
		o.Image = DefaultImage
	}
	api, err := dockerapi.New(o.DockerHost)
	if err != nil {
		return nil, err
	}
	if _, err := api.ImageInspect(ctx, o.Image); err != nil {
		api.Close()
		switch {
		case dockerapi.IsNotFound(err):
			return nil, fmt.Errorf("%w: %s is not on this engine; build it with scripts/image.sh", ErrNoImage, o.Image)
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case isUnreachable(err):
			return nil, fmt.Errorf("%w at %s (start dockerd, or set DOCKER_HOST): %v", ErrNoEngine, api.Host(), err)
		}
		return nil, err
	}
	return api, nil
}

// start starts the container with its server on port of the host's
// loopback; port 0 lets the server (host network) or the engine
// (published port) choose, and c.url is set once it is known.
func (c *Container) start(ctx context.Context, o *Options, binds []string, port int) error {
	if port != 0 {
		c.url = "http://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	}
	hostPort := ""
	if port != 0 {
		hostPort = strconv.Itoa(port)
	}
	cfg := config(o, binds, "OH_SESSION_API_KEYS_0="+c.key)
	cmd := cfg.Cmd
	// The server is this client's own: it titles nothing (a title is a
	// model call, and gohands' clients never show it), as before gohands
	// serve titled by default.
	if o.Network == "host" {
		// The server shares this machine's network: it listens on the
		// chosen port of the host's loopback, nothing is published.
		if cmd == nil {
			cmd = []string{"--host", "127.0.0.1", "--port", strconv.Itoa(port), "--exit-on-stdin-close", "--autotitle=false"}
		}
	} else {
		if cmd == nil {
			cmd = []string{"--host", "0.0.0.0", "--port", strconv.Itoa(ContainerPort), "--exit-on-stdin-close", "--autotitle=false"}
		}
		p := strconv.Itoa(ContainerPort) + "/tcp"
		cfg.ExposedPorts = map[string]struct{}{p: {}}
		cfg.HostConfig.PortBindings = map[string][]dockerapi.PortBinding{p: {{HostIP: "127.0.0.1", HostPort: hostPort}}}
	}
	cfg.Cmd = cmd
	c.name = "gohands-" + newKey()[:12]
	id, err := c.api.ContainerCreate(ctx, c.name, cfg)
	if err != nil {
		return fmt.Errorf("docker: create container from %s: %w", o.Image, err)
	}
	c.id = id
	c.log.Debug("docker: container created", "id", id[:12], "name", c.name, "url", c.url)
	// Attach and register the wait before starting: the container's
	// whole output is kept and an immediate exit is seen.
	if c.att, err = c.api.ContainerAttach(ctx, id); err != nil {
		return err
	}
	go func() {
		c.att.Output(c.out)
		close(c.done)
	}()
	if c.exited, err = c.api.ContainerWait(ctx, id, "next-exit"); err != nil {
		return err
	}
	if err := c.api.ContainerStart(ctx, id); err != nil {
		if s := err.Error(); strings.Contains(s, "port is already allocated") || strings.Contains(s, "address already in use") {
			return fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return fmt.Errorf("docker: start container from %s: %w", o.Image, err)
	}
	if port == 0 && o.Network != "host" {
		if err := c.publishedURL(ctx); err != nil {
			return err
		}
	}
	if err := c.waitHealthy(ctx); err != nil {
		if o.Network == "host" && strings.Contains(c.out.String(), "address already in use") {
			return fmt.Errorf("%w: %v", errPortTaken, err)
		}
		return err
	}
	c.log.Debug("docker: container healthy", "id", id[:12])
	return nil
}

// waitHealthy polls /health until it answers 200, the container ends, or
// the health timeout passes.
func (c *Container) waitHealthy(ctx context.Context) error {
	hc := &http.Client{Timeout: 2 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	defer hc.CloseIdleConnections()
	deadline := time.NewTimer(c.timeout)
	defer deadline.Stop()
	delay := 10 * time.Millisecond
	for {
		if c.url == "" {
			// The server on the host network chose its port: it says
			// which when it listens.
			if m := serving.FindStringSubmatch(c.out.String()); m != nil {
				c.url = m[1]
			}
		}
		if c.url != "" {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, c.url+"/health", nil)
			if resp, err := hc.Do(req); err == nil {
				io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case r := <-c.exited:
			<-c.done // the output, complete
			return fmt.Errorf("docker: container %s exited with status %d before /health answered; its output:\n%s", c.name, r.StatusCode, c.out.Indented())
		case <-deadline.C:
			return fmt.Errorf("docker: container %s did not answer /health within %v; its output:\n%s", c.name, c.timeout, c.out.Indented())
		case <-time.After(delay):
		}
		delay = min(delay*3/2, 250*time.Millisecond)
	}
}

// publishedURL sets c.url from the host port the engine chose.
func (c *Container) publishedURL(ctx context.Context) error {
	j, err := c.api.ContainerInspect(ctx, c.id)
	if err != nil {
		return fmt.Errorf("docker: inspect container %s: %w", c.name, err)
	}
	for _, b := range j.NetworkSettings.Ports[strconv.Itoa(ContainerPort)+"/tcp"] {
		if b.HostPort != "" && b.HostPort != "0" {
			c.url = "http://" + net.JoinHostPort("127.0.0.1", b.HostPort)
			return nil
		}
	}
	return fmt.Errorf("docker: container %s: the engine published no port for %d/tcp", c.name, ContainerPort)
}

// URL is the agent server's base URL, on this machine's loopback.
func (c *Container) URL() string { return c.url }

// SessionKey is the key the server accepts in X-Session-API-Key. It is
// made for this container and is never logged.
func (c *Container) SessionKey() string { return c.key }

// ID is the container's id on the engine.
func (c *Container) ID() string { return c.id }

// Name is the container's name on the engine.
func (c *Container) Name() string { return c.name }

// Output returns the last 64 KiB the container wrote to stdout and stderr.
func (c *Container) Output() string { return c.out.String() }

// Done is closed when the container has stopped (its output ended).
func (c *Container) Done() <-chan struct{} { return c.done }

// Memory returns the container's memory use in bytes, page cache excluded.
func (c *Container) Memory(ctx context.Context) (uint64, error) {
	return c.api.ContainerMemory(ctx, c.id)
}

// Pause freezes every process in the container.
func (c *Container) Pause(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paused {
		return nil
	}
	if err := c.api.ContainerPause(ctx, c.id); err != nil {
		return err
	}
	c.paused = true
	return nil
}

// Resume thaws a paused container and waits for /health.
func (c *Container) Resume(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.paused {
		return nil
	}
	if err := c.api.ContainerUnpause(ctx, c.id); err != nil {
		return err
	}
	c.paused = false
	return c.waitHealthy(ctx)
}

// Close stops the container (the server pauses and persists its
// conversations first) and removes it. It waits until the engine has
// removed it.
func (c *Container) Close() error {
	c.mu.Lock()
	if c.closed {
		c.mu.Unlock()
		return nil
	}
	c.closed = true
	paused := c.paused
	c.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if paused {
		c.api.ContainerUnpause(ctx, c.id)
	}
	removed, werr := c.api.ContainerWait(ctx, c.id, "removed")
	// Closing stdin lets the server shut down cleanly; a stop follows if
	// it takes too long.
	c.att.Close()
	select {
	case <-c.done:
	case <-time.After(10 * time.Second):
		c.api.ContainerStop(ctx, c.id, 5*time.Second)
	}
	err := c.api.ContainerRemove(ctx, c.id)
	if werr == nil {
		select {
		case <-removed:
		case <-ctx.Done():
			err = errors.Join(err, fmt.Errorf("docker: container %s not removed after 30s", c.name))
		}
	}
	c.api.Close()
	c.log.Debug("docker: container removed", "name", c.name)
	return err
}

// remove ends a container that failed to start, whatever state it is in.
func (c *Container) remove() {
	if c.att != nil {
		c.att.Close()
	}
	if c.id == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	removed, werr := c.api.ContainerWait(ctx, c.id, "removed")
	if err := c.api.ContainerRemove(ctx, c.id); err != nil {
		c.log.Warn("docker: removing a container that failed to start", "name", c.name, "err", err)
	}
	if werr == nil {
		select {
		case <-removed:
		case <-ctx.Done():
		}
	}
}

// config is the container's configuration from o, with the extra
// environment variables env; Cmd is o.Cmd (nil keeps the image's).
func config(o *Options, binds []string, env ...string) *dockerapi.ContainerConfig {
	for _, k := range o.ForwardEnv {
		if v, ok := os.LookupEnv(k); ok {
			env = append(env, k+"="+v)
		}
	}
	for _, k := range slices.Sorted(maps.Keys(o.Env)) {
		env = append(env, k+"="+o.Env[k])
	}
	labels := map[string]string{Label: strconv.Itoa(os.Getpid())}
	maps.Copy(labels, o.Labels)
	useInit := true
	hc := &dockerapi.HostConfig{
		Binds:       binds,
		NetworkMode: o.Network,
		AutoRemove:  true,
		Init:        &useInit,
		NanoCPUs:    int64(o.CPUs * 1e9),
		Memory:      o.Memory,
	}
	if o.Memory > 0 {
		hc.MemorySwap = o.Memory // no swap beyond the limit
	}
	if o.Pids > 0 {
		hc.PidsLimit = &o.Pids
	}
	if o.GPUs {
		hc.DeviceRequests = []dockerapi.DeviceRequest{{Count: -1, Capabilities: [][]string{{"gpu"}}}}
	}
	cmd := o.Cmd
	if cmd == nil && o.Entrypoint != nil {
		cmd = []string{} // the engine drops the image's Cmd with its Entrypoint
	}
	return &dockerapi.ContainerConfig{
		Image: o.Image, Entrypoint: o.Entrypoint, Cmd: cmd, Env: env, User: o.User, Labels: labels,
		AttachStdin: true, AttachStdout: true, AttachStderr: true, OpenStdin: true, StdinOnce: true,
		HostConfig: hc,
	}
}

// binds checks and completes volume specifications.
func binds(vols []string) ([]string, error) {
	var out []string
	for _, v := range vols {
		parts := strings.Split(v, ":")
		if len(parts) < 2 || len(parts) > 3 || parts[0] == "" || !strings.HasPrefix(parts[1], "/") {
			return nil, fmt.Errorf("docker: volume %q: want host-path:/container-path[:ro]", v)
		}
		if strings.ContainsAny(parts[0], `/.\`) { // a path, not a named volume
			abs, err := filepath.Abs(parts[0])
			if err != nil {
				return nil, fmt.Errorf("docker: volume %q: %w", v, err)
			}
			if _, err := os.Stat(abs); err != nil {
				return nil, fmt.Errorf("docker: volume %q: %w", v, err)
			}
			parts[0] = abs
		}
		out = append(out, strings.Join(parts, ":"))
	}
	return out, nil
}

func newKey() string {
	b := make([]byte, 24)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func isUnreachable(err error) bool {
	var e *dockerapi.Error
	return !errors.As(err, &e)
}

// tail keeps the last max bytes written to it and passes every write on
// to w when set.
type tail struct {
	mu  sync.Mutex
	max int
	b   []byte
	w   io.Writer
}

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > t.max {
		t.b = append(t.b[:0], t.b[len(t.b)-t.max:]...)
	}
	if t.w != nil {
		t.w.Write(p)
	}
	return len(p), nil
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return string(t.b)
}

// Indented is the output for an error message: indented, or a note that
// there was none.
func (t *tail) Indented() string {
	s := strings.TrimRight(t.String(), "\n")
	if s == "" {
		return "  (no output)"
	}
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}
