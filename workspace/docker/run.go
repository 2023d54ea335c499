package docker

import (
	"context"
	"fmt"
	"io"
	"os"
	"syscall"
	"time"
)

// Stdio connects Run's container to this process.
type Stdio struct {
	// Stdin, when not nil, is copied to the container's standard input;
	// its end closes it.
	Stdin io.Reader
	// Stdout and Stderr receive the container's (nil discards).
	Stdout, Stderr io.Writer
	// Signals, when not nil, are forwarded to the container's command.
	Signals <-chan os.Signal
}

// Run runs a container of opts (Entrypoint and Cmd say what) to its end
// with stdio connected, and returns its exit status. The container is
// removed when it ends, and killed and removed when ctx is cancelled.
func Run(ctx context.Context, opts *Options, stdio *Stdio) (int, error) {
	var o Options
	if opts != nil {
		o = *opts
	}
	if stdio == nil {
		stdio = &Stdio{}
	}
	api, err := engine(ctx, &o)
	if err != nil {
		return 0, err
	}
	defer api.Close()
	binds, err := binds(o.Volumes)
	if err != nil {
		return 0, err
	}
	cfg := config(&o, binds)
	id, err := api.ContainerCreate(ctx, "gohands-"+newKey()[:12], cfg)
	if err != nil {
		return 0, fmt.Errorf("docker: create container from %s: %w", o.Image, err)
	}
	remove := func() {
		rctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		removed, werr := api.ContainerWait(rctx, id, "removed")
		api.ContainerRemove(rctx, id)
		if werr == nil {
			select {
			case <-removed:
			case <-rctx.Done():
			}
		}
	}
	att, err := api.ContainerAttach(ctx, id)
	if err != nil {
		remove()
		return 0, err
	}
	defer att.Close()
	exited, err := api.ContainerWait(ctx, id, "next-exit")
	if err != nil {
		remove()
		return 0, err
	}
	out := make(chan struct{})
	go func() {
		defer close(out)
		att.OutputTo(orDiscard(stdio.Stdout), orDiscard(stdio.Stderr))
	}()
	if err := api.ContainerStart(ctx, id); err != nil {
		remove()
		return 0, fmt.Errorf("docker: start container from %s: %w", o.Image, err)
	}
	if stdio.Stdin != nil {
		go func() {
			io.Copy(att, stdio.Stdin)
			att.CloseWrite()
		}()
	}
	for {
		select {
		case r := <-exited:
			<-out
			remove()
			return r.StatusCode, r.Err
		case sig := <-stdio.Signals:
			if s, ok := sig.(syscall.Signal); ok {
				api.ContainerKill(context.Background(), id, fmt.Sprint(int(s)))
			}
		case <-ctx.Done():
			remove()
			return 0, ctx.Err()
		}
	}
}

func orDiscard(w io.Writer) io.Writer {
	if w == nil {
		return io.Discard
	}
	return w
}
