package plugin

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// ErrNotFound is returned (wrapped) by ResolveRef for a plugin that no
// registered marketplace has, or a marketplace that is not registered.
var ErrNotFound = errors.New("plugin: not found")

// ParseRef splits a plugin reference, "name" or "name@marketplace" (the
// last "@" separates them), into its parts.
func ParseRef(ref string) (name, marketplace string, err error) {
	i := strings.LastIndex(ref, "@")
	if i < 0 {
		if ref == "" {
			return "", "", errors.New("plugin: the plugin reference is empty")
		}
		return ref, "", nil
	}
	name, marketplace = ref[:i], ref[i+1:]
	if name == "" || marketplace == "" {
		return "", "", fmt.Errorf("plugin: reference %q: want plugin-name@marketplace-name", ref)
	}
	return name, marketplace, nil
}

// ResolveRef finds where the plugin ref names is: in its marketplace
// (name@marketplace), or in the one registration of regs whose
// marketplace has it (name). Marketplaces that cannot be fetched are
// skipped when searching them all, unless none could be: then the plugin
// is not found and the error says why. A plugin that several marketplaces
// have is an error asking for name@marketplace.
func ResolveRef(ctx context.Context, regs []Registration, ref string, opts *FetchOptions) (Source, error) {
	name, market, err := ParseRef(ref)
	if err != nil {
		return Source{}, err
	}
	seen := map[string]bool{}
	for _, r := range regs {
		if seen[r.Name] {
			return Source{}, fmt.Errorf("plugin: marketplace %q is registered twice", r.Name)
		}
		seen[r.Name] = true
	}
	if market != "" {
		if !seen[market] {
			return Source{}, fmt.Errorf("%w: marketplace %q is not registered", ErrNotFound, market)
		}
		for i := range regs {
			if regs[i].Name != market {
				continue
			}
			m, err := regs[i].Fetch(ctx, opts)
			if err != nil {
				return Source{}, err
			}
			e := m.Plugin(name)
			if e == nil {
				return Source{}, fmt.Errorf("%w: plugin %q is not in marketplace %q", ErrNotFound, name, market)
			}
			return m.Resolve(e)
		}
	}
	var (
		found    []Source
		in       []string
		failures []string
	)
	for i := range regs {
		m, err := regs[i].Fetch(ctx, opts)
		if err != nil {
			// Fetch names the URL without its credentials already.
			failures = append(failures, err.Error())
			continue
		}
		if e := m.Plugin(name); e != nil {
			src, err := m.Resolve(e)
			if err != nil {
				return Source{}, err
			}
			found = append(found, src)
			in = append(in, regs[i].Name)
		}
	}
	switch {
	case len(found) == 1:
		return found[0], nil
	case len(found) > 1:
		return Source{}, fmt.Errorf("plugin: %q is in several marketplaces (%s): name one, as %s@<marketplace>", name, strings.Join(in, ", "), name)
	case len(failures) > 0 && len(failures) == len(regs):
		return Source{}, fmt.Errorf("%w: plugin %q: no marketplace could be fetched: %s", ErrNotFound, name, strings.Join(failures, "; "))
	}
	return Source{}, fmt.Errorf("%w: plugin %q is in no registered marketplace", ErrNotFound, name)
}
