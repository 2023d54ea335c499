package main

import (
	"encoding/base64"
	"net/http"
	"os"
	"strings"

	"github.com/gohands/gohands/event"
)

// maxImageBytes bounds an --attach-image file: providers refuse larger images.
const maxImageBytes = 20 << 20

// readImages turns --attach-image values into image URLs: an http(s) or data:
// URL is kept, a file becomes a data: URL of its image type.
func readImages(specs []string) ([]string, error) {
	var urls []string
	for _, s := range specs {
		if strings.HasPrefix(s, "https://") || strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "data:image/") {
			urls = append(urls, s)
			continue
		}
		info, err := os.Stat(s)
		if err != nil {
			return nil, usageErr("--attach-image: %v", err)
		}
		if info.Size() > maxImageBytes {
			return nil, usageErr("--attach-image %s: %d bytes, more than the %d a model takes", s, info.Size(), maxImageBytes)
		}
		data, err := os.ReadFile(s)
		if err != nil {
			return nil, usageErr("--attach-image: %v", err)
		}
		typ := http.DetectContentType(data)
		switch typ {
		case "image/png", "image/jpeg", "image/gif", "image/webp":
		default:
			return nil, usageErr("--attach-image %s: %s is not a PNG, JPEG, GIF or WebP image", s, typ)
		}
		urls = append(urls, "data:"+typ+";base64,"+base64.StdEncoding.EncodeToString(data))
	}
	return urls, nil
}

// taskMessage is the task as the user's message, with the --attach-image images.
func taskMessage(task string, images []string) event.Message {
	m := event.UserMessage(task)
	if len(images) > 0 {
		m.Content = append(m.Content, event.Image(images...))
	}
	return m
}
