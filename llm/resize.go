package llm

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/draw"
	_ "image/gif" // decoders for image.Decode
	"image/jpeg"
	"image/png"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
)

// Anthropic's image limits (its vision guide, as the reference applies
// them): a request of more than 20 images takes none larger than
// 2000×2000, others none larger than 8000×8000.
const (
	anthropicManyImages    = 20
	anthropicManyImagesDim = 2000
	anthropicImageDim      = 8000
)

// AnthropicImageLimit returns the largest side an image of msgs may have on
// Anthropic's API.
func AnthropicImageLimit(msgs []event.Message) int {
	n := 0
	for _, m := range msgs {
		for _, c := range m.Content {
			if c.Type == event.ContentImage {
				n += len(c.ImageURLs)
			}
		}
	}
	if n > anthropicManyImages {
		return anthropicManyImagesDim
	}
	return anthropicImageDim
}

// ShrinkImages returns msgs with every base64 data: image whose larger side
// exceeds maxSide scaled down to fit it, keeping its aspect ratio (PNG and
// GIF become PNG, JPEG stays JPEG). Images it cannot decode (WebP, say)
// and URLs are left as they are, and so is msgs when nothing is too large.
// Only an image's header is read unless it must shrink.
func ShrinkImages(msgs []event.Message, maxSide int) []event.Message {
	var out []event.Message
	for i, m := range msgs {
		for j, c := range m.Content {
			if c.Type != event.ContentImage {
				continue
			}
			for k, u := range c.ImageURLs {
				small, ok := shrinkDataURL(u, maxSide)
				if !ok {
					continue
				}
				if out == nil {
					out = slices.Clone(msgs)
				}
				if &out[i].Content[0] == &msgs[i].Content[0] {
					out[i].Content = slices.Clone(m.Content)
				}
				if &out[i].Content[j].ImageURLs[0] == &msgs[i].Content[j].ImageURLs[0] {
					out[i].Content[j].ImageURLs = slices.Clone(c.ImageURLs)
				}
				out[i].Content[j].ImageURLs[k] = small
			}
		}
	}
	if out == nil {
		return msgs
	}
	return out
}

// shrinkDataURL returns u scaled to fit maxSide, and whether it had to be.
func shrinkDataURL(u string, maxSide int) (string, bool) {
	rest, ok := strings.CutPrefix(u, "data:image/")
	if !ok {
		return "", false
	}
	_, data, ok := strings.Cut(rest, ";base64,")
	if !ok {
		return "", false
	}
	cfg, _, err := image.DecodeConfig(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil || max(cfg.Width, cfg.Height) <= maxSide {
		return "", false
	}
	img, format, err := image.Decode(base64.NewDecoder(base64.StdEncoding, strings.NewReader(data)))
	if err != nil {
		return "", false
	}
	w, h := cfg.Width, cfg.Height
	if w >= h {
		w, h = maxSide, max(1, h*maxSide/w)
	} else {
		w, h = max(1, w*maxSide/h), maxSide
	}
	small := boxScale(img, w, h)
	var b bytes.Buffer
	mime := "image/png"
	if format == "jpeg" {
		mime = "image/jpeg"
		err = jpeg.Encode(&b, small, &jpeg.Options{Quality: 90})
	} else {
		err = png.Encode(&b, small)
	}
	if err != nil {
		return "", false
	}
	return "data:" + mime + ";base64," + base64.StdEncoding.EncodeToString(b.Bytes()), true
}

// boxScale scales src down to w×h, each pixel the average of the source
// pixels it covers.
func boxScale(src image.Image, w, h int) *image.NRGBA {
	sb := src.Bounds()
	rgba := image.NewNRGBA(sb)
	draw.Draw(rgba, sb, src, sb.Min, draw.Src)
	dst := image.NewNRGBA(image.Rect(0, 0, w, h))
	sw, sh := sb.Dx(), sb.Dy()
	for y := range h {
		y0, y1 := y*sh/h, max((y+1)*sh/h, y*sh/h+1)
		for x := range w {
			x0, x1 := x*sw/w, max((x+1)*sw/w, x*sw/w+1)
			var r, g, b, a, n uint64
			for sy := y0; sy < y1; sy++ {
				off := rgba.PixOffset(x0+sb.Min.X, sy+sb.Min.Y)
				for sx := x0; sx < x1; sx++ {
					p := rgba.Pix[off : off+4 : off+4]
					r, g, b, a = r+uint64(p[0]), g+uint64(p[1]), b+uint64(p[2]), a+uint64(p[3])
					n++
					off += 4
				}
			}
			dst.SetNRGBA(x, y, color.NRGBA{uint8(r / n), uint8(g / n), uint8(b / n), uint8(a / n)})
		}
	}
	return dst
}
