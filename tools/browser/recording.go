package browser

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// RecorderURL is where the rrweb recorder is fetched from when
// Options.RecorderScript is empty: the build the reference loads.
const RecorderURL = "https://unpkg.com/rrweb@2.0.0-alpha.17/dist/rrweb.umd.cjs"

// RecordingDirName is where recordings go under the workspace, as in the
// reference: one recording-<UTC time> directory per recording.
const RecordingDirName = ".agent_tmp/browser_observations"

// StartRecordingAction starts recording the browser session.
type StartRecordingAction struct{}

// StopRecordingAction stops the recording and saves what is left.
type StopRecordingAction struct{}

const (
	startRecDesc = `Start recording the browser session with rrweb: page snapshots, DOM changes, mouse moves, clicks, scrolls and input (typed text masked). The recording follows the current tab across navigations. Events are saved as JSON arrays of rrweb events in ` + RecordingDirName + `/recording-<time>/, one file per flush (before each browser action and at the stop); rrweb-player replays them. Stop with browser_stop_recording.`
	stopRecDesc  = `Stop the recording started by browser_start_recording and save the remaining events. Says how many events and files were saved, and where.`
)

// recording is the state of a running recording.
type recording struct {
	dir      string
	tab      target.ID
	scriptID page.ScriptIdentifier
	events   int
	files    int
}

// recorderBoot starts rrweb in a document once and keeps its events for
// recFlush. The start is deferred to a task of its own: rrweb's first
// record call hung the tab when made inside a DevTools Runtime.evaluate
// (Chromium 156), and runs fine from the page's own tasks.
const recorderBoot = `;(function () {
  if (window.__gohandsRec || typeof rrweb === "undefined") { return; }
  var rec = window.__gohandsRec = { events: [] };
  setTimeout(function () {
    rec.stop = rrweb.record({
      emit: function (e) { rec.events.push(e); },
      maskAllInputs: true,
      recordAfter: "DOMContentLoaded"
    });
  }, 0);
})();`

// recFlush takes the events rrweb has emitted so far, as JSON.
const recFlush = `(function () {
  var rec = window.__gohandsRec;
  return JSON.stringify(rec ? rec.events.splice(0) : []);
})()`

// recStop stops rrweb and returns the events not yet flushed.
const recStop = `(function () {
  var rec = window.__gohandsRec;
  if (!rec) { return "[]"; }
  if (rec.stop) { rec.stop(); }
  delete window.__gohandsRec;
  return JSON.stringify(rec.events);
})()`

// RecorderURLEnv names the environment variable the tool set's factory
// takes Options.RecorderURLOverride from.
const RecorderURLEnv = "GOHANDS_RRWEB_URL"

// recorderScript returns the rrweb recorder's source, fetching it once
// when Options.RecorderScript is empty.
func (b *Browser) recorderScript(ctx context.Context) (string, error) {
	if b.opts.RecorderScript != "" {
		return b.opts.RecorderScript, nil
	}
	if b.fetchedRecorder != "" {
		return b.fetchedRecorder, nil
	}
	url := cmp.Or(b.opts.RecorderURLOverride, RecorderURL)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", modelErrorf("Unable to start recording: the rrweb recorder could not be loaded from %s: %v", url, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", modelErrorf("Unable to start recording: the rrweb recorder could not be loaded from %s (status %d, %v)", url, resp.StatusCode, err)
	}
	b.fetchedRecorder = string(body)
	return b.fetchedRecorder, nil
}

func (b *Browser) startRecording(ctx context.Context, _ *StartRecordingAction) (string, error) {
	if b.rec != nil {
		return "Already recording", nil
	}
	if b.opts.RecordingDir == "" {
		return "", modelErrorf("Unable to start recording: there is no workspace to save it in.")
	}
	src, err := b.recorderScript(ctx)
	if err != nil {
		return "", err
	}
	pctx, t, err := b.page(ctx)
	if err != nil {
		return "", err
	}
	script := src + "\n" + recorderBoot
	res, err := cdp.Call(pctx, t, page.AddScriptToEvaluateOnNewDocument, page.AddScriptToEvaluateOnNewDocumentParams{Source: script})
	if err != nil {
		return "", err
	}
	undo := func() {
		cdp.Call(pctx, t, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams(res))
	}
	ev, err := cdp.Call(pctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: script})
	if err == nil && ev.ExceptionDetails != nil {
		err = fmt.Errorf("script error: %s", ev.ExceptionDetails.Text)
	}
	if err != nil {
		undo()
		return "", err
	}
	dir := filepath.Join(b.opts.RecordingDir, "recording-"+stamp(time.Now()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		undo()
		return "", err
	}
	b.rec = &recording{dir: dir, tab: b.current, scriptID: res.Identifier}
	return "Recording started", nil
}

func (b *Browser) stopRecording(ctx context.Context, _ *StopRecordingAction) (string, error) {
	rec := b.rec
	if rec == nil {
		return "", modelErrorf("Not recording. Call browser_start_recording first.")
	}
	b.rec = nil
	if _, ok := b.tabs[rec.tab]; ok {
		tctx, err := b.tabContext(ctx, rec.tab)
		if err != nil {
			return "", err
		}
		pctx := valuesFrom{ctx, tctx}
		cdp.Call(pctx, chromedp.FromContext(pctx).Target, page.RemoveScriptToEvaluateOnNewDocument, page.RemoveScriptToEvaluateOnNewDocumentParams{Identifier: rec.scriptID})
		if err := b.saveEvents(pctx, rec, recStop); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("Recording stopped. Captured %d events in %d file(s). Saved to: %s", rec.events, rec.files, rec.dir), nil
}

// flushRecording saves the recorded tab's events before an action that
// may leave its page (a navigation loses the page's events).
func (b *Browser) flushRecording(ctx context.Context) {
	rec := b.rec
	if rec == nil {
		return
	}
	if _, ok := b.tabs[rec.tab]; !ok {
		return
	}
	tctx, err := b.tabContext(ctx, rec.tab)
	if err != nil {
		return
	}
	if err := b.saveEvents(valuesFrom{ctx, tctx}, rec, recFlush); err != nil {
		// Recording is secondary: an action never fails for it.
		b.log.Warn("browser: saving recording events failed", "err", err)
	}
}

// saveEvents runs script (recFlush or recStop) in the recorded tab and
// writes the events it returns to the next file of the recording, with
// secret values masked.
func (b *Browser) saveEvents(ctx context.Context, rec *recording, script string) error {
	res, err := cdp.Call(ctx, chromedp.FromContext(ctx).Target, runtime.Evaluate, runtime.EvaluateParams{Expression: script, ReturnByValue: new(true)})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("script error: %s", res.ExceptionDetails.Text)
	}
	var text string
	if err := json.Unmarshal(res.Result.Value, &text); err != nil {
		return fmt.Errorf("recording events: %w", err)
	}
	var events []json.RawMessage
	if err := json.Unmarshal([]byte(text), &events); err != nil {
		return fmt.Errorf("recording events: %w", err)
	}
	if len(events) == 0 {
		return nil
	}
	if b.opts.Mask != nil {
		text = b.opts.Mask(text)
	}
	if err := os.WriteFile(filepath.Join(rec.dir, stamp(time.Now())+".json"), []byte(text), 0o644); err != nil {
		return err
	}
	rec.events += len(events)
	rec.files++
	return nil
}

// stamp is a UTC time as the reference names recordings and their files.
func stamp(t time.Time) string {
	t = t.UTC()
	return t.Format("20060102-150405") + fmt.Sprintf("-%06d", t.Nanosecond()/1000)
}
