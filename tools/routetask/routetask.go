// Package routetask is the route_task_to_model tool (the reference's
// ClassifyAndSwitchLLMTool): a classifier model reads the last messages
// of the conversation and picks the kind of task from a meta-profile; the
// conversation then switches to that kind's LLM profile from its next step
// on. A reply that names no kind is an error observation, never a silent
// default.
//
// A meta-profile is the reference's model-routing configuration: either
// numbered classes (a description and a profile each) or a direct-routing
// prompt_template whose reply is JSON naming a profile. Every model it
// names is a saved LLM profile.
package routetask

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
)

// Name is the tool's name; KindName its kind and its registry name (the
// reference's: a tool spec carries the Params).
const (
	Name     = "route_task_to_model"
	KindName = "ClassifyAndSwitchLLMTool"
)

// recentMessages is how many of the last messages the classifier reads.
const recentMessages = 6

// Class is one kind of task and the LLM profile that handles it.
type Class struct {
	Description string `json:"description"`
	Model       string `json:"model"`
}

// MetaProfile is a model-routing configuration, as the reference stores
// it (meta-profiles/NAME.json).
type MetaProfile struct {
	ClassifierModel string  `json:"classifier_model"`
	Classes         []Class `json:"classes"`
	PromptTemplate  *string `json:"prompt_template"`
	ModelTable      *string `json:"model_table"`
}

// Params are the tool spec's params.
type Params struct {
	// ActiveMetaProfile names the meta-profile in the store (it wins over
	// MetaProfile while the store has it).
	ActiveMetaProfile string `json:"active_meta_profile,omitempty"`
	// MetaProfile is one given inline.
	MetaProfile *MetaProfile `json:"meta_profile,omitempty"`
	// MetaProfileLLMs would give the profiles inline; gohands takes them
	// from the saved profiles only and refuses this param.
	MetaProfileLLMs map[string]json.RawMessage `json:"meta_profile_llms,omitempty"`
}

func init() {
	tool.Register(KindName, func(ctx tool.Context, params json.RawMessage) ([]tool.Tool, error) {
		p, err := DecodeParams(params)
		if err != nil {
			return nil, err
		}
		return []tool.Tool{New(p, StoreDir(), ctx.Conversation)}, nil
	})
}

// DecodeParams reads a tool spec's params.
func DecodeParams(data []byte) (Params, error) {
	var p Params
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		return p, fmt.Errorf("%s params: %w (it takes active_meta_profile and meta_profile)", KindName, err)
	}
	if len(p.MetaProfileLLMs) > 0 {
		return p, fmt.Errorf("%s params: meta_profile_llms is not supported: save the profiles it names as LLM profiles", KindName)
	}
	return p, nil
}

// StoreDir returns where the reference keeps meta-profiles:
// $OH_PERSISTENCE_DIR/meta-profiles, else ~/.openhands/meta-profiles.
func StoreDir() string {
	base := os.Getenv("OH_PERSISTENCE_DIR")
	if base == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return ""
		}
		base = filepath.Join(home, ".openhands")
	}
	return filepath.Join(base, "meta-profiles")
}

const description = `Pick the best saved model for the current task and switch this conversation to it. A classifier reads the recent messages and chooses a kind of task from the active meta-profile; the next steps run on that kind's model. Use it at the start of a task or when the task changes.`

// New returns the tool, reading named meta-profiles from dir.
func New(p Params, dir string, h tool.Conversation) *tool.Typed[event.ClassifyAndSwitchLLMAction, *event.ClassifyAndSwitchLLMObservation] {
	return tool.New(Name, description, func(ctx context.Context, _ *event.ClassifyAndSwitchLLMAction) (*event.ClassifyAndSwitchLLMObservation, error) {
		if h == nil {
			return failed("Cannot route the task: this tool needs a conversation."), nil
		}
		meta, err := resolve(p, dir)
		if err != nil {
			return failed("Cannot route the task: %v", err), nil
		}
		evs, err := h.Events()
		if err != nil {
			return nil, err
		}
		transcript := Transcript(evs)
		if transcript == "" {
			transcript = "(no messages yet)"
		}
		reply, err := h.Consult(ctx, meta.ClassifierModel, "classifier:"+meta.ClassifierModel, Messages(meta, transcript))
		if err != nil {
			if ctx.Err() != nil {
				return nil, context.Cause(ctx)
			}
			return failed("The classifier (profile %q) failed: %v", meta.ClassifierModel, err), nil
		}
		text := event.TextOf(reply.Content)
		var target, class string
		if meta.PromptTemplate == nil {
			i := ClassIndex(text, len(meta.Classes))
			if i == 0 {
				return failed("The classifier picked no listed kind of task (it answered %q); nothing was switched. Call the tool again or fix the meta-profile's classes.", text), nil
			}
			target, class = meta.Classes[i-1].Model, meta.Classes[i-1].Description
		} else {
			if target = DirectModel(text, h.ProfileNames()); target == "" {
				return failed("The classifier named no saved LLM profile (it answered %q); nothing was switched. Call the tool again or fix the model table.", text), nil
			}
			class = "model: " + target
		}
		model, err := h.SwitchProfile(ctx, target)
		if err != nil {
			o := failed("Could not switch to LLM profile %q: %v", target, err)
			o.ChosenClass, o.Model = class, target
			return o, nil
		}
		return &event.ClassifyAndSwitchLLMObservation{
			ObservationBase: event.ObservationBase{Content: event.List[event.Content]{event.Text(fmt.Sprintf(
				"The task is %q: switched to LLM profile %q (model %s) from the next step on.", class, target, model))}},
			ChosenClass: class, Model: target, ActiveModel: model,
		}, nil
	}, &tool.Options{Kind: KindName})
}

func failed(format string, args ...any) *event.ClassifyAndSwitchLLMObservation {
	return &event.ClassifyAndSwitchLLMObservation{ObservationBase: event.ObservationBase{
		Content: event.List[event.Content]{event.Text(fmt.Sprintf(format, args...))}, IsError: true}}
}

var profileName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]*$`)

// resolve finds the meta-profile as the reference does: the named one in
// the store, else the inline one, else (no name) the store's first.
func resolve(p Params, dir string) (*MetaProfile, error) {
	load := func(name string) (*MetaProfile, error) {
		if !profileName.MatchString(name) {
			return nil, fmt.Errorf("meta-profile name %q: use letters, digits, '.', '_' and '-'", name)
		}
		data, err := os.ReadFile(filepath.Join(dir, name+".json"))
		if err != nil {
			return nil, err
		}
		var m MetaProfile
		if err := json.Unmarshal(data, &m); err != nil {
			return nil, fmt.Errorf("meta-profile %q: %w", name, err)
		}
		return &m, validate(&m)
	}
	names := func() []string {
		files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		var out []string
		for _, f := range files {
			out = append(out, strings.TrimSuffix(filepath.Base(f), ".json"))
		}
		slices.Sort(out)
		return out
	}
	if n := p.ActiveMetaProfile; n != "" {
		m, err := load(n)
		if err == nil || !errors.Is(err, fs.ErrNotExist) {
			return m, err
		}
		if p.MetaProfile != nil {
			return p.MetaProfile, validate(p.MetaProfile)
		}
		return nil, fmt.Errorf("no meta-profile %q in %s (have %v)", n, dir, names())
	}
	if p.MetaProfile != nil {
		return p.MetaProfile, validate(p.MetaProfile)
	}
	all := names()
	if len(all) == 0 {
		return nil, fmt.Errorf("no meta-profile is active and %s has none", dir)
	}
	return load(all[0])
}

func validate(m *MetaProfile) error {
	switch {
	case m.ClassifierModel == "":
		return errors.New("the meta-profile names no classifier_model")
	case m.PromptTemplate == nil && len(m.Classes) == 0:
		return errors.New("the meta-profile has neither classes nor a prompt_template")
	}
	return nil
}

// Transcript renders the last messages of events as "source: text" lines.
func Transcript(events []event.Event) string {
	var lines []string
	for _, e := range events {
		m, ok := e.(*event.MessageEvent)
		if !ok {
			continue
		}
		if t := strings.TrimSpace(event.TextOf(m.LLMMessage.Content)); t != "" {
			lines = append(lines, string(m.Source)+": "+t)
		}
	}
	return strings.Join(lines[max(0, len(lines)-recentMessages):], "\n")
}

// systemPrefix opens every classifier system prompt.
const systemPrefix = "You route tasks to models."

// Messages returns the classifier's request: a system message and a user
// message holding the transcript (some providers refuse a request with
// only a system message).
func Messages(m *MetaProfile, transcript string) []event.Message {
	if m.PromptTemplate == nil {
		var b strings.Builder
		b.WriteString(systemPrefix + " Read the conversation and pick the one kind of task below that fits the current task best.\n\nKinds:\n")
		for i, c := range m.Classes {
			fmt.Fprintf(&b, "%d. %s\n", i+1, c.Description)
		}
		b.WriteString("\nAnswer with the number of the kind only; answer 0 if none fits.")
		return []event.Message{
			{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(b.String())}},
			event.UserMessage("Conversation:\n" + transcript + "\n\nKind number:"),
		}
	}
	table := ""
	if m.ModelTable != nil {
		table = *m.ModelTable
	}
	body := placeholder.ReplaceAllStringFunc(*m.PromptTemplate, func(s string) string {
		if strings.Contains(s, "instance_text") {
			return transcript
		}
		return table
	})
	return []event.Message{
		{Role: event.RoleSystem, Content: event.List[event.Content]{event.Text(systemPrefix)}},
		event.UserMessage(strings.TrimSpace(body)),
	}
}

var placeholder = regexp.MustCompile(`{{\s*(instance_text|model_table)\s*}}`)

var number = regexp.MustCompile(`-?\d+`)

// ClassIndex reads the classifier's class number from reply: 1..n, or 0
// when it gave none in range.
func ClassIndex(reply string, n int) int {
	i, err := strconv.Atoi(number.FindString(reply))
	if err != nil || i < 1 || i > n {
		return 0
	}
	return i
}

var fence = regexp.MustCompile("(?s)^```[a-zA-Z]*\n?|\n?```$")

// DirectModel reads the profile a direct-routing reply names: the "model"
// field of its JSON object, else the longest profile name found in it
// (case folded); "" if none of profiles.
func DirectModel(reply string, profiles []string) string {
	raw := strings.TrimSpace(fence.ReplaceAllString(strings.TrimSpace(reply), ""))
	find := func(s string) string {
		for _, p := range profiles {
			if strings.EqualFold(p, s) {
				return p
			}
		}
		return ""
	}
	if i, j := strings.Index(raw, "{"), strings.LastIndex(raw, "}"); i >= 0 && j > i {
		var obj map[string]any
		if json.Unmarshal([]byte(raw[i:j+1]), &obj) == nil {
			if v, ok := obj["model"]; ok {
				s := "None" // what the reference makes of a null
				if v != nil {
					s = strings.TrimSpace(fmt.Sprint(v))
				}
				if s != "" {
					return find(s)
				}
			}
		}
	}
	sorted := slices.Clone(profiles)
	slices.SortStableFunc(sorted, func(a, b string) int { return len(b) - len(a) })
	low := strings.ToLower(raw)
	for _, p := range sorted {
		if strings.Contains(low, strings.ToLower(p)) {
			return p
		}
	}
	return ""
}
