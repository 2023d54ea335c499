package server

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// trajectoryRoute downloads a conversation's stored files as a zip, its
// credentials redacted, as the reference's download-trajectory does.
func (s *Server) trajectoryRoute() *route {
	return &route{method: "GET", path: "/api/file/download-trajectory/{conversation_id}", summary: "A zip of the conversation's stored files, credentials redacted", tag: "Files", resp: []byte{}, errors: []int{404, 422}, h: s.handleTrajectory}
}

// trajectorySecretFields are the members whose string values are
// credentials wherever they appear (the LLM's secret fields and the
// settings' llm_api_key).
var trajectorySecretFields = map[string]bool{"api_key": true, "aws_access_key_id": true, "aws_secret_access_key": true, "aws_session_token": true, "llm_api_key": true}

// redactedValue replaces a credential, the reference's marker.
const redactedValue = "**********"

func (s *Server) handleTrajectory(w http.ResponseWriter, r *http.Request) {
	id, err := conversationID(r)
	if err != nil {
		writeErr(w, err)
		return
	}
	dir := filepath.Join(s.opts.ConversationsPath, hexID(id))
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		writeDetail(w, http.StatusNotFound, "Conversation not found")
		return
	}
	name := hexID(id) + ".zip"
	w.Header().Set("Content-Type", "application/octet-stream")
	w.Header().Set("Content-Disposition", `attachment; filename="`+name+`"`)
	w.WriteHeader(http.StatusOK)
	// Streamed: the archive is never held whole, in memory or on disk. An
	// error past this point can only cut the stream short, which the
	// client sees as a truncated zip.
	zw := zip.NewWriter(w)
	if err := writeTrajectory(zw, dir); err != nil {
		s.log.Warn("download-trajectory: the archive is cut short", "conversation", id, "err", err)
		return
	}
	if err := zw.Close(); err != nil {
		s.log.Warn("download-trajectory: closing the archive", "conversation", id, "err", err)
	}
}

// writeTrajectory adds dir and what it holds under dir's name: "acp" at
// the top (runtime credentials) and files being written (*.tmp) left out,
// JSON files redacted, entries that vanish while walked skipped.
func writeTrajectory(zw *zip.Writer, dir string) error {
	parent := filepath.Dir(dir)
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if os.IsNotExist(err) {
				return nil
			}
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if top, _, _ := strings.Cut(rel, string(filepath.Separator)); top == "acp" {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".tmp") {
			return nil
		}
		arc, _ := filepath.Rel(parent, p)
		arc = filepath.ToSlash(arc)
		fi, err := d.Info()
		if err != nil {
			return nil // gone since listed
		}
		hdr, err := zip.FileInfoHeader(fi)
		if err != nil {
			return err
		}
		hdr.Name = arc
		if d.IsDir() {
			hdr.Name += "/"
			_, err := zw.CreateHeader(hdr)
			return err
		}
		if !fi.Mode().IsRegular() {
			return nil
		}
		hdr.Method = zip.Deflate
		f, err := os.Open(p)
		if err != nil {
			return nil // gone since listed
		}
		defer f.Close()
		var src io.Reader = f
		if ext := strings.ToLower(filepath.Ext(p)); ext == ".json" || ext == ".jsonl" {
			data, err := io.ReadAll(f)
			if err != nil {
				return err
			}
			src = bytes.NewReader(redactJSON(data, ext == ".jsonl"))
		}
		out, err := zw.CreateHeader(hdr)
		if err != nil {
			return err
		}
		_, err = io.Copy(out, src)
		return err
	})
}

// redactJSON returns data with its credentials replaced; data that is
// not JSON, or holds none, is returned as it is.
func redactJSON(data []byte, lines bool) []byte {
	if !lines {
		var v any
		if json.Unmarshal(data, &v) != nil || !redact(&v, "") {
			return data
		}
		out, err := json.Marshal(v)
		if err != nil {
			return data
		}
		return out
	}
	var b bytes.Buffer
	changed := false
	for line := range bytes.Lines(data) {
		trimmed := bytes.TrimSpace(line)
		var v any
		if len(trimmed) == 0 || json.Unmarshal(trimmed, &v) != nil || !redact(&v, "") {
			b.Write(line)
			continue
		}
		out, err := json.Marshal(v)
		if err != nil {
			b.Write(line)
			continue
		}
		changed = true
		b.Write(out)
		if bytes.HasSuffix(line, []byte("\n")) {
			b.WriteByte('\n')
		}
	}
	if !changed {
		return data
	}
	return b.Bytes()
}

// redact replaces, in place, the credentials under *v: the string values
// of secret fields, and any Fernet token (ciphertext of the server's key,
// hence recoverable). It reports whether it changed anything.
func redact(v *any, key string) bool {
	switch x := (*v).(type) {
	case string:
		if x == "" || x == redactedValue {
			return false
		}
		if strings.HasPrefix(x, "gAAAAA") || trajectorySecretFields[key] {
			*v = redactedValue
			return true
		}
	case map[string]any:
		changed := false
		for k, val := range x {
			if redact(&val, k) {
				x[k] = val
				changed = true
			}
		}
		return changed
	case []any:
		changed := false
		for i := range x {
			if redact(&x[i], "") {
				changed = true
			}
		}
		return changed
	}
	return false
}
