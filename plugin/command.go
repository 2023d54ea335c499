package plugin

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/gohands/gohands/skill"
)

// loadCommand reads a command file: its name is the file's, its
// frontmatter may give description, argument-hint (a string or a list)
// and allowed-tools (a string or a list); other keys go to Metadata.
func loadCommand(path string) (Command, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return Command{}, err
	}
	meta := map[string]any{}
	metaText, body, _ := skill.SplitFrontmatter(data)
	if strings.TrimSpace(string(metaText)) != "" {
		var v any
		if err := yaml.Unmarshal(metaText, &v); err != nil {
			return Command{}, fmt.Errorf("frontmatter: %w", err)
		}
		m, ok := v.(map[string]any)
		if v != nil && !ok {
			return Command{}, fmt.Errorf("frontmatter is not a mapping")
		}
		if m != nil {
			meta = m
		}
	}
	src := filepath.ToSlash(path)
	c := Command{
		Name:         strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)),
		Content:      strings.TrimSpace(string(body)),
		Source:       &src,
		AllowedTools: []string{},
		Metadata:     map[string]any{},
	}
	if d, ok := meta["description"]; ok && d != nil {
		c.Description = fmt.Sprint(d)
	}
	hint := first(meta, "argument-hint", "argumentHint")
	switch h := hint.(type) {
	case nil:
	case []any:
		parts := make([]string, len(h))
		for i, p := range h {
			parts[i] = fmt.Sprint(p)
		}
		s := strings.Join(parts, " ")
		c.ArgumentHint = &s
	default:
		s := fmt.Sprint(h)
		c.ArgumentHint = &s
	}
	switch t := first(meta, "allowed-tools", "allowedTools").(type) {
	case string:
		c.AllowedTools = []string{t}
	case []any:
		for _, x := range t {
			c.AllowedTools = append(c.AllowedTools, fmt.Sprint(x))
		}
	}
	for k, v := range meta {
		switch k {
		case "description", "argument-hint", "argumentHint", "allowed-tools", "allowedTools":
		default:
			c.Metadata[k] = v
		}
	}
	return c, nil
}

// first is the value of the first key with a value that is not empty.
func first(meta map[string]any, keys ...string) any {
	for _, k := range keys {
		if v, ok := meta[k]; ok && v != nil && v != "" {
			return v
		}
	}
	return nil
}
