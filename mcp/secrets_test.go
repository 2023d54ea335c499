package mcp

import (
	"encoding/json"
	"testing"
)

func TestExpandSecrets(t *testing.T) {
	t.Parallel()
	lookup := func(name string) (string, bool) {
		v, ok := map[string]string{"TOKEN": "s3cr\"et", "USER": "ann"}[name]
		return v, ok
	}
	for in, want := range map[string]string{
		`{"a": "$TOKEN"}`: `{"a":"s3cr\"et"}`,
		`{"b": 1.50, "$TOKEN": ["x ${USER} y", {"n": null, "t": true}], "c": "${NOPE:-dflt}/${NOPE}/$NOPE/${USER:-z}"}`: `{"b":1.50,"$TOKEN":["x ann y",{"n":null,"t":true}],"c":"dflt/${NOPE}/$NOPE/ann"}`,
		`{"empty": "${NOPE:-}"}`: `{"empty":""}`,
		`{}`:                     `{}`,
	} {
		got, err := expandSecrets(json.RawMessage(in), lookup)
		if err != nil || string(got) != want && !(want == `{}` && string(got) == in) {
			t.Errorf("expandSecrets(%s) = %s, %v; want %s", in, got, err, want)
		}
	}
}
