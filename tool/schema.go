package tool

// Action struct conventions, followed by every tool in this module:
//
//   - `json:"name"` names the argument.
//   - `desc:"..."` is the argument's description for the model.
//   - `enum:"a,b,c"` restricts a string argument to those values.
//   - An argument is required unless its type is a pointer, its json tag
//     has omitempty or omitzero, or it has the tag `optional:"true"`.
//
// For example:
//
//	type Action struct {
//		Command string `json:"command" desc:"The command to run." enum:"view,create"`
//		IsInput bool   `json:"is_input" optional:"true" desc:"Send to the running process."`
//		Timeout *float64 `json:"timeout,omitempty" desc:"Hard timeout in seconds."`
//	}

// SchemaFor derives the LLM-facing JSON schema of the action type A.
//
// Placeholder: the tool package owner replaces this with derivation from
// the struct tags above and simplification as reference-protocol §6.2
// describes.
func SchemaFor[A any]() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// Validate checks args against schema and returns an error that names the
// offending field.
//
// Placeholder: see SchemaFor.
func Validate(schema map[string]any, args []byte) error { return nil }
