package tool

// SchemaFor derives the LLM-facing JSON schema of the action type A.
//
// Placeholder: the tool package owner replaces this with derivation from
// struct tags (description, enum, required) and simplification as
// reference-protocol §6.2 describes.
func SchemaFor[A any]() map[string]any {
	return map[string]any{"type": "object", "properties": map[string]any{}}
}

// Validate checks args against schema and returns an error that names the
// offending field.
//
// Placeholder: see SchemaFor.
func Validate(schema map[string]any, args []byte) error { return nil }
