package llm

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"

	"github.com/gohands/gohands/event"
)

// inlineImageModels only take images as data: URLs.
// Bedrock's Converse takes image bytes only.
var inlineImageModels = []string{"moonshot/kimi-k2.6", "moonshot/kimi-k3", "openhands/kimi-k3", "bedrock/"}

// maxInlineImage bounds the size of an image fetched for inlining.
const maxInlineImage = 20 << 20

// wantsInlineImages reports whether http(s) image URLs must be sent as
// data: URLs: the config says so, or the model takes nothing else.
func (l *LLM) wantsInlineImages() bool {
	if v := l.cfg.InlineImageURLs; v != nil {
		return *v
	}
	return matches(l.cfg.Model, inlineImageModels...)
}

// inlineImages returns messages with every http(s) image URL replaced by a
// data: URL of the image, fetched with the LLM's HTTP client.
func (l *LLM) inlineImages(ctx context.Context, messages []event.Message) ([]event.Message, error) {
	remote := func(u string) bool { return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") }
	out := slices.Clone(messages)
	for i, m := range out {
		if !slices.ContainsFunc(m.Content, func(c event.Content) bool { return slices.ContainsFunc(c.ImageURLs, remote) }) {
			continue
		}
		m.Content = slices.Clone(m.Content)
		for j, c := range m.Content {
			if c.Type != event.ContentImage {
				continue
			}
			urls := slices.Clone(c.ImageURLs)
			for k, u := range urls {
				if !remote(u) {
					continue
				}
				data, err := l.fetchImage(ctx, u)
				if err != nil {
					return nil, fmt.Errorf("llm: inlining image %s: %w", u, err)
				}
				urls[k] = data
			}
			m.Content[j].ImageURLs = urls
		}
		out[i] = m
	}
	return out, nil
}

func (l *LLM) fetchImage(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", err
	}
	resp, err := l.hc.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return "", fmt.Errorf("HTTP %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxInlineImage+1))
	if err != nil {
		return "", err
	}
	if len(body) > maxInlineImage {
		return "", fmt.Errorf("image larger than %d bytes", maxInlineImage)
	}
	typ, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if !strings.HasPrefix(typ, "image/") {
		typ = http.DetectContentType(body)
	}
	if !strings.HasPrefix(typ, "image/") {
		return "", fmt.Errorf("not an image (%s)", typ)
	}
	return "data:" + typ + ";base64," + base64.StdEncoding.EncodeToString(body), nil
}
