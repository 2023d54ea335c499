package finish_test

import (
	"testing"

	"github.com/gohands/gohands/agent/finish"
	"github.com/gohands/gohands/tool/tooltest"
)

func TestConformance(t *testing.T) {
	tooltest.Conformance(t, tooltest.Case{
		Tool: finish.New(), Kind: "FinishTool", Action: "FinishAction", Observation: "FinishObservation", ReadOnly: true,
		Args: `{"message":"All tests pass."}`, Text: "All tests pass.",
		BadArgs: map[string]string{
			`{}`:                    `missing required field "message"`,
			`{"message":3}`:         `field "message": expected string, got number 3`,
			`{"message":"x","y":1}`: `unknown field "y"`,
			`[1]`:                   `arguments must be a JSON object`,
		},
		Reference: true,
	})
}
