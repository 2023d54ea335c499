package main

import (
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
)

// table collects samples per row and side and prints medians.
type table struct {
	c       *config
	rows    []string
	samples map[string]map[string][]float64
	notes   map[string]string
}

func newTable(c *config) *table {
	return &table{c: c, samples: map[string]map[string][]float64{}, notes: map[string]string{}}
}

func (t *table) add(row, side string, v float64) {
	if t.samples[row] == nil {
		t.rows = append(t.rows, row)
		t.samples[row] = map[string][]float64{}
	}
	t.samples[row][side] = append(t.samples[row][side], v)
}

// note adds text under the table for rows whose name starts with prefix.
func (t *table) note(prefix, text string) { t.notes[prefix] = text }

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// write prints the table in Markdown: medians, and the reference's figure
// divided by gohands' (how many times less gohands takes), or gohands'
// divided by the reference's for a rate ("per second": how many times more
// gohands does).
func (t *table) write(w io.Writer) {
	fmt.Fprintf(w, "| job (medians of %d runs; servers once) | reference %s | gohands | ratio |\n|---|---:|---:|---:|\n", t.c.Runs, t.c.RefVersion)
	for _, row := range t.rows {
		ref, goh := median(t.samples[row]["reference"]), median(t.samples[row]["gohands"])
		ratio := "-"
		switch {
		case goh <= 0 || ref <= 0:
		case strings.Contains(row, "per second"): // higher is better
			ratio = fmt.Sprintf("%.1f×", goh/ref)
		default:
			ratio = fmt.Sprintf("%.1f×", ref/goh)
		}
		cell := func(side string, v float64) string {
			if len(t.samples[row][side]) == 0 {
				return "-" // a row of one side only (cluster)
			}
			return num(v)
		}
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", row, cell("reference", ref), cell("gohands", goh), ratio)
	}
	for _, k := range slices.Sorted(maps.Keys(t.notes)) {
		fmt.Fprintf(w, "\n%s: %s\n", k, t.notes[k])
	}
}

// num prints v with three significant digits or so.
func num(v float64) string {
	switch {
	case v >= 100:
		return fmt.Sprintf("%.0f", v)
	case v >= 10:
		return fmt.Sprintf("%.1f", v)
	case v >= 1:
		return fmt.Sprintf("%.2f", v)
	default:
		return fmt.Sprintf("%.3f", v)
	}
}
