package think_test

import (
	"testing"

	"github.com/gohands/gohands/agent/think"
	"github.com/gohands/gohands/tool/tooltest"
)

func TestConformance(t *testing.T) {
	tooltest.Conformance(t, tooltest.Case{
		Tool: think.New(), Kind: "ThinkTool", Action: "ThinkAction", Observation: "ThinkObservation", ReadOnly: true,
		Args: `{"thought":"Check the parser first."}`, Text: think.LoggedText,
		BadArgs: map[string]string{
			`{}`:                    `missing required field "thought"`,
			`{"thought":3}`:         `field "thought": expected string, got number 3`,
			`{"thought":"x","y":1}`: `unknown field "y"`,
			`[1]`:                   `arguments must be a JSON object`,
		},
		Reference: true,
	})
}
