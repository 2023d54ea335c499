package filestore

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
)

// Summary is what a listing shows of a stored conversation, read without
// opening its store: a conversation being run by another process is
// listed too, as its files stood (events still in the journal are not
// seen).
type Summary struct {
	ID              string
	Dir             string
	ExecutionStatus string
	Model           string
	BaseURL         string
	WorkingDir      string  // the workspace's working directory
	Cost            float64 // accumulated cost over all the conversation's models
	CreatedAt       string  // timestamp of the first event
	UpdatedAt       string  // timestamp of the last readable event
	Events          int
	// FirstMessage is the text of the first user message, looked for in
	// the first maxScan events.
	FirstMessage string
}

// maxScan bounds how many events List reads looking for the first user
// message.
const maxScan = 50

// List reads the conversations under the persistence directory base,
// most recently updated first, without locking them. A conversation that
// cannot be read is reported to skip (which may be nil) and left out; a
// missing base lists nothing.
func List(base string, skip func(dir string, err error)) ([]Summary, error) {
	entries, err := os.ReadDir(base)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var out []Summary
	for _, e := range entries {
		if !e.IsDir() {
			continue
		}
		dir := filepath.Join(base, e.Name())
		data, err := os.ReadFile(filepath.Join(dir, BaseStateFile))
		if errors.Is(err, fs.ErrNotExist) {
			continue // not a conversation
		}
		if err == nil {
			var s Summary
			if s, err = summarize(dir, data); err == nil {
				out = append(out, s)
				continue
			}
		}
		if skip != nil {
			skip(dir, err)
		}
	}
	slices.SortStableFunc(out, func(a, b Summary) int {
		return cmp.Or(strings.Compare(b.UpdatedAt, a.UpdatedAt), strings.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Describe reads the base state of conversation id under base, without
// its events (Summary's event fields are left empty); ok is false when
// there is no such conversation.
func Describe(base, id string) (s Summary, ok bool, err error) {
	dir := Dir(base, id)
	data, err := os.ReadFile(filepath.Join(dir, BaseStateFile))
	if errors.Is(err, fs.ErrNotExist) {
		return s, false, nil
	}
	if err != nil {
		return s, false, err
	}
	s, err = readSummary(dir, data)
	return s, err == nil, err
}

// summaryState is the part of base_state.json a Summary shows.
type summaryState struct {
	ID              string `json:"id"`
	ExecutionStatus string `json:"execution_status"`
	Agent           struct {
		LLM struct {
			Model   string `json:"model"`
			BaseURL string `json:"base_url"`
		} `json:"llm"`
	} `json:"agent"`
	Workspace struct {
		WorkingDir string `json:"working_dir"`
	} `json:"workspace"`
	Stats struct {
		UsageToMetrics map[string]struct {
			AccumulatedCost float64 `json:"accumulated_cost"`
		} `json:"usage_to_metrics"`
	} `json:"stats"`
}

func readSummary(dir string, base []byte) (Summary, error) {
	var bs summaryState
	if err := json.Unmarshal(base, &bs); err != nil {
		return Summary{}, fmt.Errorf("%s: %w", BaseStateFile, err)
	}
	s := Summary{ID: bs.ID, ExecutionStatus: bs.ExecutionStatus, Model: bs.Agent.LLM.Model, Dir: dir,
		WorkingDir: bs.Workspace.WorkingDir, BaseURL: bs.Agent.LLM.BaseURL}
	for _, m := range bs.Stats.UsageToMetrics {
		s.Cost += m.AccumulatedCost
	}
	return s, nil
}

// eventHead is the part of an event a Summary shows.
type eventHead struct {
	Kind       string `json:"kind"`
	Source     string `json:"source"`
	Timestamp  string `json:"timestamp"`
	LLMMessage *struct {
		Content []struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"content"`
	} `json:"llm_message"`
}

func summarize(dir string, base []byte) (Summary, error) {
	s, err := readSummary(dir, base)
	if err != nil {
		return s, err
	}
	names, err := eventFiles(filepath.Join(dir, EventsDir))
	if err != nil {
		return s, err
	}
	s.Events = len(names)
	read := func(name string) (eventHead, error) {
		var h eventHead
		b, err := os.ReadFile(filepath.Join(dir, EventsDir, name))
		if err == nil {
			err = json.Unmarshal(b, &h)
		}
		return h, err
	}
	for i, name := range names {
		if i == maxScan {
			break
		}
		h, err := read(name)
		if err != nil {
			continue // a torn file; the store sets it aside when opened
		}
		if s.CreatedAt == "" {
			s.CreatedAt = h.Timestamp
		}
		if h.Kind == event.KindMessage && h.Source == string(event.SourceUser) && h.LLMMessage != nil {
			for _, c := range h.LLMMessage.Content {
				if c.Type == event.ContentText {
					s.FirstMessage = c.Text
					break
				}
			}
			break
		}
	}
	for i := len(names) - 1; i >= 0 && s.UpdatedAt == ""; i-- {
		if h, err := read(names[i]); err == nil {
			s.UpdatedAt = h.Timestamp
		}
	}
	return s, nil
}

// eventFiles returns the event file names of an events directory in log
// order.
func eventFiles(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, len(entries))
	for i, e := range entries {
		names[i] = e.Name()
	}
	return logOrder(names), nil
}

// logOrder returns the event file names among names, in log order. A
// log as written has the indexes 0 to n-1 once each, and its names are
// put in place as they come; any other (a gap, two files of one index)
// is sorted.
func logOrder(names []string) []string {
	out := make([]string, len(names))
	n := 0
	for _, name := range names {
		idx, _, ok := parseEventName(name)
		if !ok {
			continue
		}
		if idx >= len(out) || out[idx] != "" {
			return sortedLogOrder(names)
		}
		out[idx] = name
		n++
	}
	if slices.Contains(out[:n], "") { // a gap: an index at or past n is taken
		return sortedLogOrder(names)
	}
	return out[:n]
}

// sortedLogOrder is logOrder for any names.
func sortedLogOrder(names []string) []string {
	type file struct {
		idx  int
		name string
	}
	var files []file
	for _, name := range names {
		if idx, _, ok := parseEventName(name); ok {
			files = append(files, file{idx, name})
		}
	}
	slices.SortFunc(files, func(a, b file) int { return cmp.Compare(a.idx, b.idx) })
	out := make([]string, len(files))
	for i, f := range files {
		out[i] = f.name
	}
	return out
}

// ReadEvents decodes the event files of the conversation directory dir in
// log order, without locking it: for a conversation a process holds open,
// where Open would fail with conversation.ErrLocked. Events still in that
// process's journal are not there yet. On an error the events read before
// it are returned with it.
//
// It writes nothing, so it also reads a conversation in a directory it
// may not write, and it is what a replay that only reads costs: the same
// work as the reference's EventLog listed in full.
func ReadEvents(dir string) ([]event.Event, error) {
	return readEvents(filepath.Join(dir, EventsDir))
}
