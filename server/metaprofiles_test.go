package server_test

import (
	"os"
	"path/filepath"
	"testing"
)

func TestMetaProfiles(t *testing.T) {
	dir := t.TempDir()
	ts := settingsServer(t, dir)
	var list struct {
		MetaProfiles []struct {
			Name            string  `json:"name"`
			ClassifierModel *string `json:"classifier_model"`
			NumClasses      int     `json:"num_classes"`
		} `json:"meta_profiles"`
		Active *string `json:"active_meta_profile"`
	}
	ts.must(200, "GET", "/api/meta-profiles", nil, &list)
	if list.MetaProfiles == nil || len(list.MetaProfiles) != 0 {
		t.Fatalf("empty store: %+v", list)
	}
	mp := map[string]any{"classifier_model": "fast", "classes": []any{
		map[string]any{"description": "UI work", "model": "vision"},
		map[string]any{"description": "anything else", "model": "fast"},
	}}
	ts.must(201, "POST", "/api/meta-profiles/router", mp, nil)
	if _, err := os.Stat(filepath.Join(dir, "meta-profiles", "router.json")); err != nil {
		t.Errorf("the reference's layout: %v", err)
	}
	ts.must(200, "GET", "/api/meta-profiles", nil, &list)
	if len(list.MetaProfiles) != 1 || list.MetaProfiles[0].NumClasses != 2 || *list.MetaProfiles[0].ClassifierModel != "fast" {
		t.Errorf("list: %+v", list)
	}
	var det struct {
		Name   string         `json:"name"`
		Config map[string]any `json:"config"`
	}
	ts.must(200, "GET", "/api/meta-profiles/router", nil, &det)
	if det.Name != "router" || det.Config["classifier_model"] != "fast" || det.Config["prompt_template"] != nil {
		t.Errorf("detail: %+v", det)
	}
	for _, bad := range []any{
		map[string]any{},                        // no classifier_model
		map[string]any{"classifier_model": "x"}, // nothing to route with
		map[string]any{"classifier_model": "x", "prompt_template": "no placeholder"},
		map[string]any{"classifier_model": "x", "prompt_template": "{{ instance_text }}", "classes": mp["classes"]},
		map[string]any{"classifier_model": "x", "classes": []any{map[string]any{"model": "m"}}},
		"{",
	} {
		if st, body := ts.do("POST", "/api/meta-profiles/bad", bad); st != 422 {
			t.Errorf("%v: %d %s", bad, st, body)
		}
	}
	ts.must(201, "POST", "/api/meta-profiles/direct", map[string]any{"classifier_model": "x", "prompt_template": "Route: {{instance_text}}"}, nil)
	ts.must(404, "GET", "/api/meta-profiles/bad", nil, nil)
	ts.must(422, "GET", "/api/meta-profiles/-x", nil, nil)
	ts.must(200, "DELETE", "/api/meta-profiles/router", nil, nil)
	ts.must(200, "DELETE", "/api/meta-profiles/router", nil, nil)
	ts.must(404, "GET", "/api/meta-profiles/router", nil, nil)
	ts.key = ""
	if st, body := ts.do("GET", "/api/meta-profiles", nil); st != 401 {
		t.Errorf("without the key: %d %s", st, body)
	}
}
