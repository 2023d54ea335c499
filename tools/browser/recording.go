package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/chromedp/cdproto/cdp"
	"github.com/chromedp/cdproto/dom"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/cdproto/target"
	"github.com/chromedp/chromedp"
)

// RecordingDirName is where recordings go under the workspace, as in the
// reference: one recording-<UTC time> directory per recording.
const RecordingDirName = ".agent_tmp/browser_observations"

// StartRecordingAction starts recording the browser session.
type StartRecordingAction struct{}

// StopRecordingAction stops the recording and saves what is left.
type StopRecordingAction struct{}

const (
	startRecDesc = `Start recording the browser session. Before each browser action and at the stop, the recorded tab's page is saved as rrweb events (a meta event with the URL and a full DOM snapshot, form values masked), following the tab across navigations. Files are JSON arrays of rrweb events in ` + RecordingDirName + `/recording-<time>/; rrweb-player replays them. Stop with browser_stop_recording.`
	stopRecDesc  = `Stop the recording started by browser_start_recording and save the current page. Says how many events and files were saved, and where.`
)

// The rrweb event and node types a recording writes.
const (
	rrFullSnapshot = 2
	rrMeta         = 4

	rrDocument     = 0
	rrDocumentType = 1
	rrElement      = 2
	rrText         = 3
	rrCDATA        = 4
	rrComment      = 5
)

// recording is the state of a running recording.
//
// rrweb itself (the reference injects it into the page) froze the page's
// main thread in our Chromium 156 on its first record call, both 2.0.0-alpha.17 and
// 2.2.2; so the events are made here from DevTools DOM snapshots in
// rrweb's format, without mouse or mutation events.
type recording struct {
	dir    string
	tab    target.ID
	events int
	files  int
}

func (b *Browser) startRecording(ctx context.Context, _ *StartRecordingAction) (string, error) {
	if b.rec != nil {
		return "Already recording", nil
	}
	if b.opts.RecordingDir == "" {
		return "", modelErrorf("Unable to start recording: there is no workspace to save it in.")
	}
	if _, _, err := b.page(ctx); err != nil {
		return "", err
	}
	dir := filepath.Join(b.opts.RecordingDir, "recording-"+stamp(time.Now()))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	b.rec = &recording{dir: dir, tab: b.current}
	return "Recording started", nil
}

func (b *Browser) stopRecording(ctx context.Context, _ *StopRecordingAction) (string, error) {
	rec := b.rec
	if rec == nil {
		return "", modelErrorf("Not recording. Call browser_start_recording first.")
	}
	// The flush before this action saved the page as it is now.
	b.rec = nil
	return fmt.Sprintf("Recording stopped. Captured %d events in %d file(s). Saved to: %s", rec.events, rec.files, rec.dir), nil
}

// flushRecording saves the recorded tab's page before an action that may
// change or leave it.
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
	if err := b.saveSnapshot(valuesFrom{ctx, tctx}, rec); err != nil {
		// Recording is secondary: an action never fails for it.
		b.log.Warn("browser: saving the recording failed", "err", err)
	}
}

// pageMetrics is read from the page for the meta and snapshot events.
const pageMetrics = `JSON.stringify({href: location.href, width: innerWidth, height: innerHeight, left: scrollX, top: scrollY})`

// saveSnapshot writes a meta and a full snapshot event of the page to the
// next file of the recording, with secret values masked.
func (b *Browser) saveSnapshot(ctx context.Context, rec *recording) error {
	t := chromedp.FromContext(ctx).Target
	res, err := cdp.Call(ctx, t, runtime.Evaluate, runtime.EvaluateParams{Expression: pageMetrics, ReturnByValue: new(true)})
	if err != nil {
		return err
	}
	if res.ExceptionDetails != nil {
		return fmt.Errorf("script error: %s", res.ExceptionDetails.Text)
	}
	var s string
	var m struct {
		Href          string `json:"href"`
		Width, Height int
		Left, Top     float64
	}
	if err := json.Unmarshal(res.Result.Value, &s); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(s), &m); err != nil {
		return err
	}
	doc, err := cdp.Call(ctx, t, dom.GetDocument, dom.GetDocumentParams{Depth: new(int64(-1))})
	if err != nil {
		return err
	}
	now := time.Now().UnixMilli()
	events := []map[string]any{
		{"type": rrMeta, "data": map[string]any{"href": m.Href, "width": m.Width, "height": m.Height}, "timestamp": now},
		{"type": rrFullSnapshot, "data": map[string]any{"node": rrNode(doc.Root, ""), "initialOffset": map[string]any{"left": m.Left, "top": m.Top}}, "timestamp": now},
	}
	data, err := json.Marshal(events)
	if err != nil {
		return err
	}
	text := string(data)
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

// rrNode is n as rrweb serializes a node (its id is the node's backend
// id). Form values are masked as rrweb's maskAllInputs does, and script
// text is left out.
func rrNode(n *cdp.Node, parentTag string) map[string]any {
	out := map[string]any{"id": int64(n.BackendNodeID)}
	switch n.NodeType {
	case 9: // document
		out["type"] = rrDocument
	case 10: // doctype
		out["type"] = rrDocumentType
		out["name"], out["publicId"], out["systemId"] = n.NodeName, n.PublicID, n.SystemID
		return out
	case 1: // element
		tag := strings.ToLower(n.LocalName)
		out["type"], out["tagName"] = rrElement, tag
		attrs := map[string]string{}
		for i := 0; i+1 < len(n.Attributes); i += 2 {
			k, v := n.Attributes[i], n.Attributes[i+1]
			if k == "value" && (tag == "input" || tag == "textarea" || tag == "select" || tag == "option") {
				v = strings.Repeat("*", len([]rune(v)))
			}
			attrs[k] = v
		}
		out["attributes"] = attrs
		parentTag = tag
	case 3: // text
		text := n.NodeValue
		switch parentTag {
		case "script":
			text = "SCRIPT_PLACEHOLDER"
		case "textarea":
			text = strings.Repeat("*", len([]rune(text)))
		}
		out["type"], out["textContent"] = rrText, text
		return out
	case 4: // CDATA
		out["type"], out["textContent"] = rrCDATA, ""
		return out
	case 8: // comment
		out["type"], out["textContent"] = rrComment, n.NodeValue
		return out
	default:
		return nil
	}
	children := []map[string]any{}
	for _, c := range n.Children {
		if rc := rrNode(c, parentTag); rc != nil {
			children = append(children, rc)
		}
	}
	out["childNodes"] = children
	return out
}

// stamp is a UTC time as the reference names recordings and their files.
func stamp(t time.Time) string {
	t = t.UTC()
	return t.Format("20060102-150405") + fmt.Sprintf("-%06d", t.Nanosecond()/1000)
}
