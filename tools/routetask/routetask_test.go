package routetask_test

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/tool"
	"github.com/gohands/gohands/tools/routetask"
)

type host struct {
	reply    string
	err      error
	asked    []event.Message
	profile  string
	usage    string
	switched string
	profiles []string
}

func (h *host) Consult(_ context.Context, profile, usageID string, msgs []event.Message) (event.Message, error) {
	h.profile, h.usage, h.asked = profile, usageID, msgs
	return event.Message{Role: event.RoleAssistant, Content: event.List[event.Content]{event.Text(h.reply)}}, h.err
}

func (h *host) SwitchProfile(_ context.Context, name string) (string, error) {
	if slices.Contains(h.profiles, name) {
		h.switched = name
		return "openai/" + name + "-model", nil
	}
	return "", errors.New("no such profile")
}

func (h *host) ProfileNames() []string { return h.profiles }

func (h *host) Profile(string) (tool.ProfileInfo, error) { return tool.ProfileInfo{}, nil }

func (h *host) Events() ([]event.Event, error) {
	var evs []event.Event
	for i := range 8 {
		m := &event.MessageEvent{Base: event.NewBase(event.SourceUser), LLMMessage: event.UserMessage("message " + string(rune('a'+i)))}
		evs = append(evs, m)
	}
	return evs, nil
}

func classes() *routetask.MetaProfile {
	return &routetask.MetaProfile{ClassifierModel: "cls", Classes: []routetask.Class{
		{Description: "UI work", Model: "vision"}, {Description: "hard algorithms", Model: "strong"}}}
}

func TestClasses(t *testing.T) {
	h := &host{reply: "2", profiles: []string{"cls", "vision", "strong"}}
	o, err := routetask.New(routetask.Params{MetaProfile: classes()}, t.TempDir(), h).Run(context.Background(), &event.ClassifyAndSwitchLLMAction{})
	if err != nil || o.IsError || o.Model != "strong" || o.ChosenClass != "hard algorithms" || o.ActiveModel != "openai/strong-model" || h.switched != "strong" {
		t.Fatalf("observation %+v, %v", o, err)
	}
	if h.profile != "cls" || h.usage != "classifier:cls" || len(h.asked) != 2 || h.asked[0].Role != event.RoleSystem {
		t.Fatalf("classifier call: %q %q %+v", h.profile, h.usage, h.asked)
	}
	sys, user := event.TextOf(h.asked[0].Content), event.TextOf(h.asked[1].Content)
	if !strings.Contains(sys, "1. UI work\n2. hard algorithms") {
		t.Errorf("system prompt:\n%s", sys)
	}
	// The last six messages only.
	if strings.Contains(user, "message b") || !strings.Contains(user, "user: message c") || !strings.Contains(user, "user: message h") {
		t.Errorf("transcript:\n%s", user)
	}

	for _, bad := range []string{"0", "3", "none of them"} {
		h := &host{reply: bad, profiles: []string{"strong"}}
		o, err := routetask.New(routetask.Params{MetaProfile: classes()}, t.TempDir(), h).Run(context.Background(), &event.ClassifyAndSwitchLLMAction{})
		if err != nil || !o.IsError || h.switched != "" || !strings.Contains(event.TextOf(o.Content), "nothing was switched") {
			t.Errorf("reply %q: %+v %v", bad, o, err)
		}
	}
	// A class whose profile is missing: an error naming it.
	h = &host{reply: "1", profiles: []string{"strong"}}
	o, _ = routetask.New(routetask.Params{MetaProfile: classes()}, t.TempDir(), h).Run(context.Background(), &event.ClassifyAndSwitchLLMAction{})
	if !o.IsError || o.Model != "vision" || o.ChosenClass != "UI work" {
		t.Errorf("missing target profile: %+v", o)
	}
}

func TestDirect(t *testing.T) {
	tmpl := "Pick a model.\n{{ model_table }}\nTask:\n{{instance_text}}"
	table := "strong: hard things"
	m := &routetask.MetaProfile{ClassifierModel: "cls", PromptTemplate: &tmpl, ModelTable: &table}
	h := &host{reply: "```json\n{\"model\": \"STRONG\"}\n```", profiles: []string{"cls", "strong"}}
	o, err := routetask.New(routetask.Params{MetaProfile: m}, t.TempDir(), h).Run(context.Background(), &event.ClassifyAndSwitchLLMAction{})
	if err != nil || o.IsError || o.Model != "strong" || o.ChosenClass != "model: strong" {
		t.Fatalf("observation %+v, %v", o, err)
	}
	if u := event.TextOf(h.asked[1].Content); !strings.Contains(u, "strong: hard things") || !strings.Contains(u, "user: message h") {
		t.Errorf("direct prompt:\n%s", u)
	}
	for reply, want := range map[string]string{`{"model":"nope"}`: "", "use strong please": "strong", "weak": ""} {
		if got := routetask.DirectModel(reply, []string{"strong", "cls"}); got != want {
			t.Errorf("DirectModel(%q) = %q, want %q", reply, got, want)
		}
	}
}

// Named meta-profiles come from the store directory; the inline one is
// the fallback; with neither, the store's first.
func TestResolve(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "b.json"), []byte(`{"classifier_model":"cls","classes":[{"description":"stored","model":"strong"}]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(p routetask.Params) *event.ClassifyAndSwitchLLMObservation {
		h := &host{reply: "1", profiles: []string{"strong", "vision"}}
		o, err := routetask.New(p, dir, h).Run(context.Background(), &event.ClassifyAndSwitchLLMAction{})
		if err != nil {
			t.Fatal(err)
		}
		return o
	}
	if o := run(routetask.Params{ActiveMetaProfile: "b", MetaProfile: classes()}); o.ChosenClass != "stored" {
		t.Errorf("named: %+v", o)
	}
	if o := run(routetask.Params{ActiveMetaProfile: "gone", MetaProfile: classes()}); o.ChosenClass != "UI work" {
		t.Errorf("named, missing, inline fallback: %+v", o)
	}
	if o := run(routetask.Params{}); o.ChosenClass != "stored" {
		t.Errorf("first of the store: %+v", o)
	}
	for _, p := range []routetask.Params{{ActiveMetaProfile: "gone"}, {ActiveMetaProfile: "../b"}, {MetaProfile: &routetask.MetaProfile{ClassifierModel: "cls"}}} {
		if o := run(p); !o.IsError || !strings.Contains(event.TextOf(o.Content), "Cannot route") {
			t.Errorf("%+v: %+v", p, o)
		}
	}
	if _, err := routetask.DecodeParams([]byte(`{"meta_profile_llms":{"x":{}}}`)); err == nil {
		t.Error("meta_profile_llms accepted")
	}
	if _, err := routetask.DecodeParams([]byte(`{"bogus":1}`)); err == nil {
		t.Error("unknown param accepted")
	}
}

// TestReferenceParse reads classifier replies as the reference 1.58.2 does
// (testdata/reference_parse.json, made by testdata/gen_parse.py with it).
func TestReferenceParse(t *testing.T) {
	data, err := os.ReadFile("testdata/reference_parse.json")
	if err != nil {
		t.Fatal(err)
	}
	var ref struct {
		Classes []struct {
			Reply string `json:"reply"`
			N     int    `json:"n"`
			Index int    `json:"index"`
		} `json:"classes"`
		Profiles []string `json:"profiles"`
		Direct   []struct {
			Reply string `json:"reply"`
			Model string `json:"model"`
		} `json:"direct"`
	}
	if err := json.Unmarshal(data, &ref); err != nil {
		t.Fatal(err)
	}
	if len(ref.Classes) < 10 || len(ref.Direct) < 10 {
		t.Fatalf("%d and %d cases", len(ref.Classes), len(ref.Direct))
	}
	for _, c := range ref.Classes {
		if got := routetask.ClassIndex(c.Reply, c.N); got != c.Index {
			t.Errorf("ClassIndex(%q, %d) = %d, reference %d", c.Reply, c.N, got, c.Index)
		}
	}
	for _, c := range ref.Direct {
		if got := routetask.DirectModel(c.Reply, ref.Profiles); got != c.Model {
			t.Errorf("DirectModel(%q) = %q, reference %q", c.Reply, got, c.Model)
		}
	}
}
