package llm_test

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/png"
	"strings"
	"testing"

	"github.com/gohands/gohands/event"
	"github.com/gohands/gohands/llm"
)

func pngURL(t *testing.T, w, h int) string {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = 200
	}
	img.SetNRGBA(0, 0, color.NRGBA{255, 0, 0, 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return "data:image/png;base64," + base64.StdEncoding.EncodeToString(b.Bytes())
}

func sizeOf(t *testing.T, u string) (int, int) {
	t.Helper()
	_, data, _ := strings.Cut(u, ",")
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil {
		t.Fatal(err)
	}
	return cfg.Width, cfg.Height
}

// TestShrinkImages: an image larger than the limit is scaled to fit it,
// keeping its aspect ratio; smaller ones, URLs and the input are untouched.
// Over 20 images, Anthropic's limit drops from 8000 to 2000.
func TestShrinkImages(t *testing.T) {
	big, small := pngURL(t, 1200, 600), pngURL(t, 100, 50)
	msgs := []event.Message{
		{Role: event.RoleUser, Content: event.List[event.Content]{event.Text("look"), event.Image(small, "https://x/y.png", big)}},
		{Role: event.RoleTool, ToolCallID: "c", Content: event.List[event.Content]{event.Image(big)}},
	}
	out := llm.ShrinkImages(msgs, 400)
	if msgs[0].Content[1].ImageURLs[2] != big || msgs[1].Content[0].ImageURLs[0] != big {
		t.Fatal("the input was modified")
	}
	for _, u := range []string{out[0].Content[1].ImageURLs[2], out[1].Content[0].ImageURLs[0]} {
		if w, h := sizeOf(t, u); w != 400 || h != 200 {
			t.Errorf("shrunk to %dx%d, want 400x200", w, h)
		}
	}
	if out[0].Content[1].ImageURLs[0] != small || out[0].Content[1].ImageURLs[1] != "https://x/y.png" {
		t.Error("an image within the limit, or a URL, was changed")
	}
	if got := llm.ShrinkImages(msgs, 8000); &got[0] != &msgs[0] {
		t.Error("nothing to shrink, yet a copy")
	}
	if llm.AnthropicImageLimit(msgs) != 8000 {
		t.Errorf("limit for 4 images = %d, want 8000", llm.AnthropicImageLimit(msgs))
	}
	many := []event.Message{{Role: event.RoleUser, Content: event.List[event.Content]{event.Image(make([]string, 21)...)}}}
	if llm.AnthropicImageLimit(many) != 2000 {
		t.Errorf("limit for 21 images = %d, want 2000", llm.AnthropicImageLimit(many))
	}
}
