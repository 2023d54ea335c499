package skill_test

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/gohands/gohands/skill"
)

// Load a workspace's skills, then inject the ones a user message triggers,
// once per conversation.
func ExampleLoadProject() {
	dir, _ := os.MkdirTemp("", "skills")
	defer os.RemoveAll(dir)
	os.WriteFile(filepath.Join(dir, "AGENTS.md"), []byte("Run `make test` before committing."), 0o644)
	os.MkdirAll(filepath.Join(dir, ".openhands", "skills"), 0o755)
	os.WriteFile(filepath.Join(dir, ".openhands", "skills", "docker.md"),
		[]byte("---\ntriggers: [docker, container]\n---\nUse docker compose v2."), 0o644)

	skills, warnings := skill.LoadProject(dir)
	fmt.Println(len(warnings), "warnings")
	for _, s := range skills {
		fmt.Printf("%s always-on=%v\n", s.Name, s.AlwaysOn())
	}

	ctx := &skill.AgentContext{Skills: skills}
	text, activated := ctx.UserMessageExtra("Why does the Docker build fail?", nil)
	fmt.Println(activated)
	fmt.Println(text)
	_, again := ctx.UserMessageExtra("docker again", activated)
	fmt.Println(len(again), "new")
	// Output:
	// 0 warnings
	// agents always-on=true
	// docker always-on=false
	// [docker]
	// <EXTRA_INFO>
	// The message mentions "docker", which brings in skill "docker":
	// Use docker compose v2.
	// </EXTRA_INFO>
	// 0 new
}
