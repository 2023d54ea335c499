package browser

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"

	"github.com/gohands/gohands/event"
)

// Defaults of Options.
const (
	DefaultActionTimeout = 300 * time.Second
	DefaultLoadTimeout   = 20 * time.Second
)

// The reference's recovery rules: after this many timeouts in a row the
// browser is restarted; the last try before that gets a shorter timeout.
const (
	maxConsecutiveTimeouts = 3
	degradedTimeout        = 30 * time.Second
	// initTimeout bounds starting Chromium, as the reference's
	// init_timeout_seconds.
	initTimeout = 30 * time.Second
)

// Options configure a Browser. A nil *Options is valid.
type Options struct {
	// ExecPath is the Chromium binary; "" finds one with FindChromium.
	ExecPath string
	// SaveDir is where screenshots and text too long to show are saved;
	// "" saves nothing.
	SaveDir string
	// ActionTimeout bounds each action; 0 means DefaultActionTimeout.
	ActionTimeout time.Duration
	// LoadTimeout is how long a navigation, a click or going back waits for
	// the page to load before reporting it as still loading; 0 means
	// DefaultLoadTimeout.
	LoadTimeout time.Duration
	// WindowWidth and WindowHeight are the browser window's size (the
	// viewport is a little shorter); 0 means 1280x720.
	WindowWidth, WindowHeight int
	// Mask hides secret values in what the tools show the model; nil
	// shows text as is.
	Mask func(string) string
	// Logger receives diagnostics; nil means slog.Default().
	Logger *slog.Logger
	// RecorderScript is the rrweb recorder's source (its UMD build, which
	// defines window.rrweb); "" fetches RecorderURLOverride, or
	// RecorderURL, on the first recording.
	RecorderScript string
	// RecorderURLOverride is where the recorder is fetched from instead of
	// RecorderURL (a mirror, or a copy served on the machine where the
	// internet is out of reach).
	RecorderURLOverride string
	// RecordingDir is where browser_start_recording makes its
	// recording-<time> directories; "" disables recording.
	RecordingDir string
}

// Browser is one headless Chromium with its tabs, shared by the tools of a
// tool set. It starts on the first action; Close stops it. Actions run one
// at a time.
type Browser struct {
	opts Options
	log  *slog.Logger

	// closing is cancelled by Close; it cancels a running action.
	closing   context.Context
	cancelAll context.CancelFunc
	closeOnce sync.Once
	closeErr  error

	mu       sync.Mutex // held while an action runs
	closed   bool
	timeouts int // consecutive timeouts

	allocCancel context.CancelFunc
	root        context.Context // owns the browser process
	rootCancel  context.CancelFunc
	rootTarget  target.ID
	tabs        map[target.ID]*tab
	order       []target.ID // tabs in the order they were first seen
	current     target.ID

	rec             *recording // the running recording, or nil
	fetchedRecorder string     // RecorderURL's script, once fetched
}

// tab is a page target and the chromedp context attached to it.
type tab struct {
	ctx    context.Context
	cancel context.CancelFunc // nil for the root's own tab
}

// New returns a Browser; Chromium starts on the first action.
func New(opts *Options) *Browser {
	b := &Browser{}
	b.closing, b.cancelAll = context.WithCancel(context.Background())
	if opts != nil {
		b.opts = *opts
	}
	if b.opts.ActionTimeout <= 0 {
		b.opts.ActionTimeout = DefaultActionTimeout
	}
	if b.opts.LoadTimeout <= 0 {
		b.opts.LoadTimeout = DefaultLoadTimeout
	}
	if b.opts.WindowWidth <= 0 || b.opts.WindowHeight <= 0 {
		b.opts.WindowWidth, b.opts.WindowHeight = 1280, 720
	}
	b.log = b.opts.Logger
	if b.log == nil {
		b.log = slog.Default()
	}
	return b
}

// errClosed is reported for actions after Close.
var errClosed = errors.New("the browser is closed")

// result is what an action returns: text for the model, and a screenshot
// for get_state.
type result struct {
	text       string
	screenshot []byte
}

// run adapts a method of Browser to a tool executor.
func run[A any](b *Browser, f func(*Browser, context.Context, *A) (string, error)) func(context.Context, *A) (*Observation, error) {
	return func(ctx context.Context, a *A) (*Observation, error) {
		return b.do(ctx, func(ctx context.Context) (result, error) {
			s, err := f(b, ctx, a)
			return result{text: s}, err
		}), nil
	}
}

// getState is the executor of browser_get_state.
func (b *Browser) getState(ctx context.Context, a *GetStateAction) (*Observation, error) {
	return b.do(ctx, func(ctx context.Context) (result, error) { return b.state(ctx, a.IncludeScreenshot) }), nil
}

// modelError is an error the model caused and can fix; its text is shown
// as is.
type modelError struct{ msg string }

func (e *modelError) Error() string { return e.msg }

func modelErrorf(format string, args ...any) error {
	return &modelError{fmt.Sprintf(format, args...)}
}

// do runs one action with the browser started, under the action timeout,
// and turns its result into an observation.
func (b *Browser) do(ctx context.Context, f func(ctx context.Context) (result, error)) *Observation {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return b.observe(result{}, errClosed)
	}
	timeout := b.opts.ActionTimeout
	if b.timeouts >= maxConsecutiveTimeouts-1 {
		timeout = min(timeout, degradedTimeout)
	}
	// Starting Chromium has its own bound: it can take seconds on a busy
	// machine, which is not the action's time.
	sctx, cancel := context.WithTimeout(ctx, initTimeout)
	defer cancel()
	stop := context.AfterFunc(b.doneCtx(), cancel)
	defer stop()
	if err := b.start(sctx); err != nil {
		return b.observe(result{}, fmt.Errorf("starting Chromium: %w", err))
	}

	actx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	stop = context.AfterFunc(b.doneCtx(), cancel)
	defer stop()
	b.flushRecording(actx)
	res, err := f(actx)
	return b.observe(res, b.timedOut(ctx, actx, err, timeout))
}

// doneCtx is a context cancelled by Close.
func (b *Browser) doneCtx() context.Context { return b.closing }

// timedOut counts timeouts and, after too many in a row, restarts the
// browser; it returns err reworded for the model.
func (b *Browser) timedOut(ctx, actx context.Context, err error, timeout time.Duration) error {
	if err == nil || ctx.Err() != nil || !errors.Is(actx.Err(), context.DeadlineExceeded) {
		if err == nil {
			b.timeouts = 0
		}
		return err
	}
	b.timeouts++
	msg := fmt.Sprintf("Operation timed out after %d seconds", int(timeout.Seconds()))
	if b.timeouts >= maxConsecutiveTimeouts {
		b.timeouts = 0
		b.stop()
		msg += "\n\nThe browser was restarted after several timeouts in a row (it may have hung). It starts again on the next action; retry yours."
	}
	return errors.New(msg)
}

// observe builds the observation of an action.
func (b *Browser) observe(res result, err error) *Observation {
	o := &Observation{FullOutputSaveDir: b.opts.SaveDir}
	text := res.text
	if err != nil {
		o.IsError = true
		var me *modelError
		if errors.As(err, &me) {
			text = me.msg
		} else {
			text = "Browser operation failed: " + err.Error()
		}
	}
	if b.opts.Mask != nil {
		text = b.opts.Mask(text)
	}
	o.Content = event.List[event.Content]{event.Text(b.fit(text))}
	if res.screenshot != nil {
		o.ScreenshotData = encodeBase64(res.screenshot)
		if b.opts.SaveDir != "" {
			if _, err := saveScreenshot(b.opts.SaveDir, o.ScreenshotData, res.screenshot); err != nil {
				b.log.Warn("browser: saving a screenshot failed", "err", err)
			}
		}
	}
	return o
}

// start launches Chromium unless it runs.
func (b *Browser) start(ctx context.Context) error {
	if b.root != nil {
		if b.root.Err() == nil {
			return nil
		}
		// Chromium died (it crashed or was killed): start a new one.
		b.log.Warn("browser: Chromium exited; starting a new one", "err", context.Cause(b.root))
		b.stop()
	}
	exe, err := FindChromium(b.opts.ExecPath)
	if err != nil {
		return err
	}
	opts := append(slices.Clone(chromedp.DefaultExecAllocatorOptions[:]),
		chromedp.ExecPath(exe),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-quic", true),
		chromedp.WindowSize(b.opts.WindowWidth, b.opts.WindowHeight),
	)
	// The browser lives until Close, not as long as ctx: chromedp binds
	// the process to the context of the first Run. chromedp gives it a
	// fresh temporary profile, removed (with any leftover child process)
	// when it exits.
	allocCtx, allocCancel := chromedp.NewExecAllocator(context.Background(), opts...)
	root, rootCancel := chromedp.NewContext(allocCtx)
	started := make(chan error, 1)
	go func() { started <- chromedp.Do(root) }()
	select {
	case err = <-started:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		rootCancel()
		allocCancel()
		return err
	}
	b.allocCancel, b.root, b.rootCancel = allocCancel, root, rootCancel
	b.rootTarget = chromedp.FromContext(root).Target.TargetID
	b.tabs = map[target.ID]*tab{b.rootTarget: {ctx: root}}
	b.order = []target.ID{b.rootTarget}
	b.current = b.rootTarget
	return nil
}

// stop stops Chromium and forgets its tabs; the next action starts a new
// one.
func (b *Browser) stop() error {
	if b.root == nil {
		return nil
	}
	for _, t := range b.tabs {
		if t.cancel != nil {
			t.cancel()
		}
	}
	ctx, cancel := context.WithTimeout(b.root, 5*time.Second)
	err := chromedp.Cancel(ctx)
	cancel()
	b.rootCancel()
	b.allocCancel() // kills the process if the graceful close failed, and waits
	b.root, b.tabs, b.order, b.current = nil, nil, nil, ""
	b.rec = nil // its tab is gone with the browser
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		err = nil
	}
	return err
}

// Close stops Chromium and every process it started. It is safe to call
// more than once and while an action runs (the action is cancelled).
func (b *Browser) Close() error {
	b.closeOnce.Do(func() {
		b.cancelAll()
		b.mu.Lock()
		defer b.mu.Unlock()
		b.closed = true
		b.closeErr = b.stop()
	})
	return b.closeErr
}

// pages returns the browser's page targets, known tabs first in the
// order they were seen, new ones after; it forgets tabs that are gone.
func (b *Browser) pages(ctx context.Context) ([]*target.Info, error) {
	res, err := chromedp.CallBrowser(b.withRoot(ctx), target.GetTargets, target.GetTargetsParams{})
	if err != nil {
		return nil, err
	}
	byID := map[target.ID]*target.Info{}
	for _, ti := range res.TargetInfos {
		if ti.Type == "page" {
			byID[ti.TargetID] = ti
		}
	}
	var out []*target.Info
	kept := b.order[:0]
	for _, id := range b.order {
		if ti, ok := byID[id]; ok {
			out = append(out, ti)
			kept = append(kept, id)
			delete(byID, id)
		} else if t := b.tabs[id]; t != nil {
			if t.cancel != nil {
				t.cancel()
			}
			delete(b.tabs, id)
		}
	}
	b.order = kept
	// New tabs, in Chrome's order (newest first) reversed.
	var fresh []*target.Info
	for _, ti := range res.TargetInfos {
		if _, ok := byID[ti.TargetID]; ok {
			fresh = append(fresh, ti)
		}
	}
	slices.Reverse(fresh)
	for _, ti := range fresh {
		b.order = append(b.order, ti.TargetID)
		out = append(out, ti)
	}
	if _, ok := b.tabs[b.current]; !ok && !slices.Contains(b.order, b.current) {
		b.current = ""
		if len(b.order) > 0 {
			b.current = b.order[len(b.order)-1]
		}
	}
	return out, nil
}

// withRoot returns a context with the values of the root chromedp context
// and the deadline and cancellation of ctx.
func (b *Browser) withRoot(ctx context.Context) context.Context {
	return valuesFrom{ctx, b.root}
}

// valuesFrom is ctx with the values of vals.
type valuesFrom struct {
	context.Context
	vals context.Context
}

func (v valuesFrom) Value(key any) any { return v.vals.Value(key) }

// tabContext returns the chromedp context of tab id, attaching to it if
// needed.
func (b *Browser) tabContext(ctx context.Context, id target.ID) (context.Context, error) {
	if t, ok := b.tabs[id]; ok {
		return t.ctx, nil
	}
	tctx, cancel := chromedp.NewContext(b.root, chromedp.WithTargetID(id))
	attached := make(chan error, 1)
	go func() { attached <- chromedp.Do(tctx) }()
	var err error
	select {
	case err = <-attached:
	case <-ctx.Done():
		err = ctx.Err()
	}
	if err != nil {
		cancel()
		return nil, err
	}
	b.tabs[id] = &tab{ctx: tctx, cancel: cancel}
	return tctx, nil
}

// page runs f on the current tab with a context that has the tab's
// chromedp values and ctx's deadline.
func (b *Browser) page(ctx context.Context) (context.Context, *chromedp.Target, error) {
	if _, ok := b.tabs[b.current]; !ok {
		if _, err := b.pages(ctx); err != nil {
			return nil, nil, err
		}
		if b.current == "" {
			if err := b.newTab(ctx, "about:blank"); err != nil {
				return nil, nil, err
			}
		}
	}
	tctx, err := b.tabContext(ctx, b.current)
	if err != nil {
		return nil, nil, err
	}
	c := chromedp.FromContext(tctx)
	return valuesFrom{ctx, tctx}, c.Target, nil
}

// newTab opens url in a new tab and makes it current; it does not wait
// for the page to load.
func (b *Browser) newTab(ctx context.Context, url string) error {
	res, err := chromedp.CallBrowser(b.withRoot(ctx), target.CreateTarget, target.CreateTargetParams{URL: "about:blank"})
	if err != nil {
		return err
	}
	b.order = append(b.order, res.TargetID)
	b.current = res.TargetID
	if _, err := b.tabContext(ctx, res.TargetID); err != nil {
		return err
	}
	return nil
}

// tabID is the id the model sees for a target: its last four characters,
// as in the reference.
func tabID(id target.ID) string {
	s := string(id)
	return s[max(0, len(s)-4):]
}

// findTab returns the tab whose id ends with the model's tab id.
func (b *Browser) findTab(ctx context.Context, id string) (*target.Info, error) {
	pages, err := b.pages(ctx)
	if err != nil {
		return nil, err
	}
	id = strings.TrimSpace(id)
	for _, p := range pages {
		if id != "" && strings.EqualFold(tabID(p.TargetID), id) {
			return p, nil
		}
	}
	ids := make([]string, len(pages))
	for i, p := range pages {
		ids[i] = tabID(p.TargetID)
	}
	return nil, modelErrorf("No tab with id %q; the open tabs are %s (see browser_list_tabs).", id, strings.Join(ids, ", "))
}

// events subscribes to ev on s and delivers the payloads on a channel
// until ctx ends. The subscription is in place when events returns.
func events[E any](ctx context.Context, s cdp.Session, ev cdp.Event[E]) <-chan E {
	seq := cdp.Events(ctx, s, ev)
	ch := make(chan E, 32)
	go func() {
		defer close(ch)
		for e, err := range seq {
			if err != nil {
				return
			}
			select {
			case ch <- e:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// loadWatch follows the main frame of a tab through a navigation: its
// document's HTTP status and whether it finished loading.
type loadWatch struct {
	cancel    context.CancelFunc
	loads     <-chan page.EventLoadEventFired
	stopped   <-chan page.EventFrameStoppedLoading
	started   <-chan page.EventFrameStartedLoading
	responses <-chan network.EventResponseReceived
	frame     cdp.FrameID
	status    int64
}

// watchLoad subscribes to the events of a navigation of t; call it
// before the navigation starts, and stop it when done.
func watchLoad(ctx context.Context, t *chromedp.Target) (*loadWatch, error) {
	tree, err := cdp.Call(ctx, t, page.GetFrameTree, cdp.Empty{})
	if err != nil {
		return nil, err
	}
	wctx, cancel := context.WithCancel(ctx)
	return &loadWatch{
		cancel:    cancel,
		loads:     events(wctx, t, page.LoadEventFired),
		stopped:   events(wctx, t, page.FrameStoppedLoading),
		started:   events(wctx, t, page.FrameStartedLoading),
		responses: events(wctx, t, network.ResponseReceived),
		frame:     tree.FrameTree.Frame.ID,
	}, nil
}

func (w *loadWatch) stop() { w.cancel() }

// waitStart reports whether the main frame starts loading within d.
func (w *loadWatch) waitStart(ctx context.Context, d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case e := <-w.started:
			if e.FrameID == w.frame {
				return true
			}
		case e := <-w.responses:
			w.noteResponse(e)
		case <-timer.C:
			return false
		case <-ctx.Done():
			return false
		}
	}
}

func (w *loadWatch) noteResponse(e network.EventResponseReceived) {
	if e.Type == network.ResourceTypeDocument && e.FrameID == w.frame && e.Response != nil {
		w.status = e.Response.Status
	}
}

// waitLoad waits at most d for the main frame to finish loading and
// reports whether it did.
func (w *loadWatch) waitLoad(ctx context.Context, d time.Duration) (bool, error) {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-w.loads:
			return true, nil
		case e := <-w.stopped:
			if e.FrameID == w.frame {
				return true, nil
			}
		case e := <-w.responses:
			w.noteResponse(e)
		case <-timer.C:
			return false, nil
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// loadNote is what a navigation adds to its message: an HTTP error
// status, or that the page is still loading.
func (b *Browser) loadNote(w *loadWatch, loaded bool) string {
	var notes []string
	if w.status >= 400 {
		notes = append(notes, fmt.Sprintf("HTTP status %d", w.status))
	}
	if !loaded {
		notes = append(notes, fmt.Sprintf("the page was still loading after %s; use browser_get_state to see what has arrived", b.opts.LoadTimeout))
	}
	if len(notes) == 0 {
		return ""
	}
	return " (" + strings.Join(notes, "; ") + ")"
}
