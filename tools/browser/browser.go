// Package browser is the browser tool set: fourteen tools that let the model
// drive a real Chromium — navigate, read the page as a list of indexed
// interactive elements (with a screenshot if asked) or as markdown, click,
// type, scroll, go back, manage tabs, read or restore cookies and web
// storage, and record the session with rrweb.
//
// The set is registered as "browser_tool_set" and its tools, actions and
// observation have the reference's names and JSON (BrowserNavigateTool,
// BrowserNavigateAction, ..., BrowserObservation with screenshot_data and
// full_output_save_dir). The tools share one [Browser]: one Chromium per
// conversation, started headless with a fresh profile on the first action
// and stopped (with every process it started) when the conversation closes
// the tools.
//
// Chromium is driven over the DevTools protocol with chromedp. Interactive
// elements are numbered as in the reference: an element's index is its
// DevTools backend node id, found from a DOM snapshot with the reference's
// rules (form controls, links, ARIA roles, click listeners, pointer cursor,
// ...), so an index stays valid as long as the element lives.
//
// Differences from the reference, on purpose:
//   - Each conversation has its own browser; the reference shares one
//     process-wide.
//   - Failures that are the model's to fix (an unknown element index or tab,
//     a page that cannot be reached) are error observations; the reference
//     reports some of them as ordinary text.
//   - A navigation waits for the page's load event at most
//     Options.LoadTimeout and then reports the page as still loading instead
//     of waiting for the whole action timeout.
//   - A click that opens a new tab moves to it and says so.
//   - JSON shown to the model keeps non-ASCII text as is (the reference
//     escapes it), which is shorter and easier to read.
//   - Recording (browser_start_recording, browser_stop_recording) saves
//     the recorded tab's rrweb events before each action and at the stop
//     rather than every five seconds, masks typed input and secret values,
//     and follows the tab it started in. The rrweb script is
//     Options.RecorderScript, or the reference's build fetched once from
//     RecorderURL ($GOHANDS_RRWEB_URL, if set, for the tool set).
package browser

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"time"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool set's registry name.
const Name = "browser_tool_set"

// Tool names.
const (
	NavigateName   = "browser_navigate"
	ClickName      = "browser_click"
	TypeName       = "browser_type"
	GetStateName   = "browser_get_state"
	GetContentName = "browser_get_content"
	ScrollName     = "browser_scroll"
	GoBackName     = "browser_go_back"
	ListTabsName   = "browser_list_tabs"
	SwitchTabName  = "browser_switch_tab"
	CloseTabName   = "browser_close_tab"
	GetStorageName = "browser_get_storage"
	SetStorageName = "browser_set_storage"
	StartRecName   = "browser_start_recording"
	StopRecName    = "browser_stop_recording"
)

// NavigateAction opens a URL.
type NavigateAction struct {
	URL    string `json:"url" desc:"The URL to open, e.g. https://example.com or http://localhost:3000/page."`
	NewTab bool   `json:"new_tab" default:"false" desc:"Open the URL in a new tab instead of the current one."`
}

// ClickAction clicks an element.
type ClickAction struct {
	Index  int  `json:"index" desc:"Index of the element, from the latest browser_get_state."`
	NewTab bool `json:"new_tab" default:"false" desc:"For a link: open its target in a new tab."`
}

// TypeAction types into an element.
type TypeAction struct {
	Index int    `json:"index" desc:"Index of the input element, from the latest browser_get_state."`
	Text  string `json:"text" desc:"The text to type; it replaces what the field holds."`
}

// GetStateAction reads the page's state.
type GetStateAction struct {
	IncludeScreenshot bool `json:"include_screenshot" default:"false" desc:"Also return a screenshot of the visible part of the page."`
}

// GetContentAction reads the page as markdown.
type GetContentAction struct {
	ExtractLinks  bool `json:"extract_links" default:"false" desc:"Keep link targets in the markdown."`
	StartFromChar int  `json:"start_from_char" default:"0" desc:"Start at this character of the markdown, to read on after a cut."`
}

// ScrollAction scrolls the page.
type ScrollAction struct {
	Direction string `json:"direction" default:"down" enum:"up,down" desc:"Scroll up or down, by about one screen."`
}

// GoBackAction goes back in the tab's history.
type GoBackAction struct{}

// ListTabsAction lists the open tabs.
type ListTabsAction struct{}

// SwitchTabAction makes a tab current.
type SwitchTabAction struct {
	TabID string `json:"tab_id" desc:"The 4-character tab id, from browser_list_tabs."`
}

// CloseTabAction closes a tab.
type CloseTabAction struct {
	TabID string `json:"tab_id" desc:"The 4-character tab id, from browser_list_tabs."`
}

// GetStorageAction reads cookies and web storage.
type GetStorageAction struct{}

// SetStorageAction restores cookies and web storage.
type SetStorageAction struct {
	StorageState Object `json:"storage_state" desc:"An object with \"cookies\" (a list of cookies) and \"origins\" (a list of {origin, localStorage, sessionStorage}, each a list of {name, value}), as browser_get_storage returns."`
}

// Object is a JSON object kept as its text, so that it is written back
// with its keys in their order.
type Object json.RawMessage

// JSONSchema implements tool.Schemaer.
func (Object) JSONSchema() map[string]any { return map[string]any{"type": "object"} }

// MarshalJSON implements json.Marshaler.
func (o Object) MarshalJSON() ([]byte, error) {
	if len(o) == 0 {
		return []byte("{}"), nil
	}
	return o, nil
}

// UnmarshalJSON implements json.Unmarshaler; it accepts only an object.
func (o *Object) UnmarshalJSON(data []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil || m == nil {
		return fmt.Errorf("expected a JSON object, got %.40s", data)
	}
	*o = append((*o)[:0], data...)
	return nil
}

// Observation is the result of every browser tool.
type Observation struct {
	event.ObservationBase
	// ScreenshotData is a base64 PNG of the page, for browser_get_state
	// with include_screenshot.
	ScreenshotData string `json:"screenshot_data,omitempty"`
	// FullOutputSaveDir is where screenshots and text too long to show
	// are saved, when the conversation has a directory.
	FullOutputSaveDir string `json:"full_output_save_dir,omitempty"`
}

// MaxText is the most characters of text an observation shows the model;
// longer text is cut in the middle (and saved in full when there is a
// save directory).
const MaxText = 50000

// LLMContent implements event.LLMRenderer: the text, then, with a
// screenshot, where it was saved and the image itself.
func (o *Observation) LLMContent() []event.Content {
	var out []event.Content
	if o.IsError {
		out = append(out, event.Text(event.ErrorHeader))
	}
	out = append(out, o.Content...)
	if o.ScreenshotData != "" {
		if o.FullOutputSaveDir != "" {
			out = append(out, event.Text("Screenshot saved to: "+screenshotPath(o.FullOutputSaveDir, o.ScreenshotData)))
		}
		out = append(out, event.Image("data:"+imageMIME(o.ScreenshotData)+";base64,"+o.ScreenshotData))
	}
	return out
}

func init() {
	event.RegisterKind[NavigateAction]("BrowserNavigateAction")
	event.RegisterKind[ClickAction]("BrowserClickAction")
	event.RegisterKind[TypeAction]("BrowserTypeAction")
	event.RegisterKind[GetStateAction]("BrowserGetStateAction")
	event.RegisterKind[GetContentAction]("BrowserGetContentAction")
	event.RegisterKind[ScrollAction]("BrowserScrollAction")
	event.RegisterKind[GoBackAction]("BrowserGoBackAction")
	event.RegisterKind[ListTabsAction]("BrowserListTabsAction")
	event.RegisterKind[SwitchTabAction]("BrowserSwitchTabAction")
	event.RegisterKind[CloseTabAction]("BrowserCloseTabAction")
	event.RegisterKind[GetStorageAction]("BrowserGetStorageAction")
	event.RegisterKind[SetStorageAction]("BrowserSetStorageAction")
	event.RegisterKind[StartRecordingAction]("BrowserStartRecordingAction")
	event.RegisterKind[StopRecordingAction]("BrowserStopRecordingAction")
	event.RegisterKind[Observation]("BrowserObservation")
	tool.Register(Name, factory)
}

// params are the tool set's spec params.
type params struct {
	// ExecutablePath overrides the Chromium binary.
	ExecutablePath string `json:"executable_path"`
	// ActionTimeoutSeconds bounds each action (default 300).
	ActionTimeoutSeconds *float64 `json:"action_timeout_seconds"`
}

// factory makes the tool set for a conversation. Without a Chromium it
// makes no tools, as the reference does, and logs why.
func factory(ctx tool.Context, raw json.RawMessage) ([]tool.Tool, error) {
	var p params
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return nil, fmt.Errorf("params: %w", err)
	}
	opts := &Options{ExecPath: p.ExecutablePath, Mask: ctx.Mask, RecorderURLOverride: os.Getenv(RecorderURLEnv)}
	if s := p.ActionTimeoutSeconds; s != nil {
		if *s <= 0 {
			return nil, fmt.Errorf("params: action_timeout_seconds must be positive, got %v", *s)
		}
		opts.ActionTimeout = time.Duration(*s * float64(time.Second))
	}
	if ctx.WorkingDir != "" {
		opts.RecordingDir = filepath.Join(ctx.WorkingDir, RecordingDirName)
	}
	if ctx.ConversationDir != "" {
		opts.SaveDir = filepath.Join(ctx.ConversationDir, "observations")
	}
	if _, err := FindChromium(opts.ExecPath); err != nil {
		slog.Warn("browser tools are unavailable", "err", err)
		return nil, nil
	}
	return New(opts).Tools(), nil
}

// chromiumNames are the programs FindChromium looks for on PATH, in order.
var chromiumNames = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable", "chrome"}

// FindChromium returns the Chromium binary to run: path if set (which
// must exist), else the first of chromium, chromium-browser and Google
// Chrome found on PATH.
func FindChromium(path string) (string, error) {
	if path != "" {
		return exec.LookPath(path)
	}
	for _, n := range chromiumNames {
		if p, err := exec.LookPath(n); err == nil {
			return p, nil
		}
	}
	return "", fmt.Errorf("no Chromium found on PATH (looked for %v); install Debian's chromium package", chromiumNames)
}

// Tool descriptions: ours, short.
const (
	navigateDesc = `Open a URL in the browser, in the current tab or a new one. Then use browser_get_state to see the page's interactive elements, or browser_get_content to read it.`
	clickDesc    = `Click an element by its index from the latest browser_get_state (links, buttons, checkboxes...). Indices change when the page changes: get the state again after a navigation.`
	typeDesc     = `Type text into an input field, text area or editable element, by its index from the latest browser_get_state. The text replaces the field's content.`
	stateDesc    = `Show the current page: URL, title, open tabs, scroll position and the numbered interactive elements (tag, text, placeholder, link target) to use with browser_click and browser_type. Optionally with a screenshot of the visible part of the page.`
	contentDesc  = `Read the current page as markdown, without scripts, styles and layout noise. Long pages are cut; continue with start_from_char as the output says.`
	scrollDesc   = `Scroll the current page up or down by about one screen.`
	backDesc     = `Go back to the previous page of the current tab, like the browser's back button.`
	listDesc     = `List the open tabs with their 4-character ids, URLs and titles.`
	switchDesc   = `Make another tab the current one, by its id from browser_list_tabs.`
	closeDesc    = `Close a tab by its id from browser_list_tabs. Closing the current tab moves to another one.`
	getStoreDesc = `Show the browser's cookies and the localStorage and sessionStorage of the open pages' origins, as JSON that browser_set_storage accepts.`
	setStoreDesc = `Restore cookies and localStorage/sessionStorage from an object like the one browser_get_storage returns: {"cookies": [...], "origins": [{"origin": ..., "localStorage": [{"name": ..., "value": ...}], "sessionStorage": [...]}]}.`
)

// Tools returns the tool set, all driving b. Closing any of them closes b.
func (b *Browser) Tools() []tool.Tool {
	ann := func(title string, readOnly, destructive, idempotent, openWorld bool) *tool.Options {
		return &tool.Options{
			Annotations: &event.ToolAnnotations{Title: title, ReadOnlyHint: readOnly, DestructiveHint: destructive, IdempotentHint: idempotent, OpenWorldHint: openWorld},
			Close:       b.Close,
		}
	}
	return []tool.Tool{
		tool.New(NavigateName, navigateDesc, run(b, (*Browser).navigate), ann(NavigateName, false, false, false, true)),
		tool.New(ClickName, clickDesc, run(b, (*Browser).click), ann(ClickName, false, false, false, true)),
		tool.New(GetStateName, stateDesc, b.getState, ann(GetStateName, true, false, true, true)),
		tool.New(GetContentName, contentDesc, run(b, (*Browser).getContent), ann(GetContentName, true, false, true, true)),
		tool.New(TypeName, typeDesc, run(b, (*Browser).typeText), ann(TypeName, false, false, false, true)),
		tool.New(ScrollName, scrollDesc, run(b, (*Browser).scroll), ann(ScrollName, false, false, false, true)),
		tool.New(GoBackName, backDesc, run(b, (*Browser).goBack), ann(GoBackName, false, false, false, true)),
		tool.New(ListTabsName, listDesc, run(b, (*Browser).listTabs), ann(ListTabsName, true, false, true, false)),
		tool.New(SwitchTabName, switchDesc, run(b, (*Browser).switchTab), ann(SwitchTabName, false, false, false, false)),
		tool.New(CloseTabName, closeDesc, run(b, (*Browser).closeTab), ann(CloseTabName, false, true, false, false)),
		tool.New(GetStorageName, getStoreDesc, run(b, (*Browser).getStorage), ann(GetStorageName, true, false, true, false)),
		tool.New(SetStorageName, setStoreDesc, run(b, (*Browser).setStorage), ann(SetStorageName, false, true, false, false)),
		tool.New(StartRecName, startRecDesc, run(b, (*Browser).startRecording), ann(StartRecName, false, false, false, false)),
		tool.New(StopRecName, stopRecDesc, run(b, (*Browser).stopRecording), ann(StopRecName, false, false, false, false)),
	}
}
