package event

import (
	"fmt"
	"strings"
	"testing"
)

// benchEvents are a realistic tool observation (~4.6 KB, most of the bytes
// of a typical conversation are observations like it) and a small user
// message.
func benchEvents() map[string]Event {
	var out strings.Builder
	for i := 0; out.Len() < 4000; i++ {
		fmt.Fprintf(&out, "-rw-r--r-- 1 root root %5d Aug 22 10:15 pkg/file_%03d.go\t\"ok\" — ✓\n", 1000+i*37, i)
	}
	obs := &ObservationEvent{
		Base:     Base{ID: NewID(), Timestamp: Now(), Source: SourceEnvironment, ParentID: NewID()},
		ToolName: "terminal", ToolCallID: "call_Q1w2E3r4", ActionID: NewID(),
		Observation: &terminalObservation{
			ObservationBase: ObservationBase{Content: List[Content]{Text(out.String())}},
			Command:         new("ls -la pkg"), ExitCode: new(0),
			Metadata: cmdOutputMetadata{PID: -1, Username: new("root"), Hostname: new("sandbox"), WorkingDir: new("/workspace/project")},
		},
	}
	msg := &MessageEvent{
		Base:       Base{ID: NewID(), Timestamp: Now(), Source: SourceUser, ParentID: NewID()},
		LLMMessage: UserMessage("List the files in the repo and run the tests."),
	}
	return map[string]Event{"observation": obs, "message": msg}
}

func BenchmarkMarshalEvent(b *testing.B) {
	for _, name := range []string{"observation", "message"} {
		e := benchEvents()[name]
		data, err := Marshal(e)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s_%dB", name, len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Marshal(e); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("%s_%dB_append", name, len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			buf := make([]byte, 0, 8192)
			for b.Loop() {
				var err error
				if buf, err = Append(buf[:0], e); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func BenchmarkUnmarshalEvent(b *testing.B) {
	for _, name := range []string{"observation", "message"} {
		data, err := Marshal(benchEvents()[name])
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("%s_%dB", name, len(data)), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Unmarshal(data); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
