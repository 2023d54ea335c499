package tool

import (
	"encoding/json"
	"slices"
)

// Args are the arguments of a model's tool call, a JSON object kept as the
// model wrote it: member order and number literals survive a repair. A
// Repairer reads and changes them.
type Args struct{ o object }

// Get returns the raw value of key.
func (a *Args) Get(key string) (json.RawMessage, bool) { return a.o.get(key) }

// Has reports whether key is present.
func (a *Args) Has(key string) bool { return a.o.index(key) >= 0 }

// String returns the value of key if it is a JSON string.
func (a *Args) String(key string) (string, bool) {
	raw, ok := a.o.get(key)
	if !ok {
		return "", false
	}
	return rawString(raw)
}

// Len returns the number of arguments.
func (a *Args) Len() int { return len(a.o) }

// Keys returns the argument names in order.
func (a *Args) Keys() []string { return a.o.keys() }

// Set sets key to v (a string, number, bool or decoded JSON), in place if
// key is present, else last.
func (a *Args) Set(key string, v any) { a.o.set(key, mustRaw(v)) }

// SetFirst sets key to v and moves it first.
func (a *Args) SetFirst(key string, v any) {
	a.o.pop(key)
	a.o = append(object{{key, mustRaw(v)}}, a.o...)
}

// KeepMeta removes every argument but the meta-arguments
// (MetaSecurityRisk, MetaSummary): for a call rewritten into another
// tool's arguments.
func (a *Args) KeepMeta() { a.o = keepMeta(a.o) }

// A Repairer is a tool that takes calls models make to it under other
// names (the names other agents give the same job) or with arguments it
// can complete. PrepareCall consults the tools that implement it; a tool
// made by New does, through Options.Aliases and Options.Repair.
type Repairer interface {
	// Aliases are names models use for this tool, matched against the
	// leading identifier of the name a model wrote.
	Aliases() []string
	// RepairCall adapts the arguments of a call the model made as name:
	// the tool's own name, one of its aliases, or, when no tool has that
	// name, any name (ok false then means the call is not for this tool,
	// and args must be left alone). An error is written for the model.
	RepairCall(name string, args *Args) (ok bool, err error)
}

// Aliases implements Repairer.
func (t *Typed[A, O]) Aliases() []string { return t.opts.Aliases }

// RepairCall implements Repairer with Options.Repair.
func (t *Typed[A, O]) RepairCall(name string, args *Args) (bool, error) {
	if t.opts.Repair == nil {
		return name == t.name || slices.Contains(t.opts.Aliases, name), nil
	}
	return t.opts.Repair(name, args)
}

// KeyList renders the argument names as a Python list, as the reference's
// error messages show them: ['path', 'old_str'].
func (a *Args) KeyList() string { return pyList(a.o.keys()) }
