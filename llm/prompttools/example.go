package prompttools

import "strings"

// The worked example shown before the first task, assembled from the steps
// of the tools that are present (as the reference does; the example itself
// is ours). Steps use the tools' real parameter names.
const (
	exampleHead = `Below is a worked example of a task done with these tools.

--------------------- START OF EXAMPLE ---------------------

USER: Write a script that prints the squares of 1 to 5, run it, then make it go up to 10.

`
	exampleFoot = `
--------------------- END OF EXAMPLE ---------------------

The example's files and output are made up; do not assume your environment matches it.

--------------------- NEW TASK DESCRIPTION ---------------------
`
	exampleTrailer = `
--------------------- END OF NEW TASK DESCRIPTION ---------------------

Keep to the format exactly, and make ONE function call per message.
`
)

type exampleStep struct {
	tool string // tool that must be present
	text string
	// security arguments for the call, "LOW|summary", added when the
	// tools take them
	risk, summary string
}

var exampleSteps = []exampleStep{
	{tool: "task_tracker", text: `ASSISTANT: I'll plan the work first.
<function=task_tracker>
<parameter=command>plan</parameter>
<parameter=task_list>
[
  {"title": "Write squares.py", "status": "in_progress", "notes": ""},
  {"title": "Run it and extend the range", "status": "todo", "notes": ""}
]
</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [task_tracker]:
Task list updated with 2 tasks.
`, risk: "LOW", summary: "Plan the two steps of the task"},
	{tool: "terminal", text: `ASSISTANT: Let me see where I am.
<function=terminal>
<parameter=command>pwd && ls</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [terminal]:
/workspace
`, risk: "LOW", summary: "Show the working directory"},
	{tool: "file_editor", text: `ASSISTANT: Now the script.
<function=file_editor>
<parameter=command>create</parameter>
<parameter=path>/workspace/squares.py</parameter>
<parameter=file_text>
for n in range(1, 6):
    print(n * n)
</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [file_editor]:
File created successfully at: /workspace/squares.py
`, risk: "LOW", summary: "Create squares.py"},
	{tool: "edit_file", text: `ASSISTANT: Now the script.
<function=edit_file>
<parameter=path>/workspace/squares.py</parameter>
<parameter=content>
for n in range(1, 6):
    print(n * n)
</parameter>
<parameter=start>1</parameter>
<parameter=end>-1</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [edit_file]:
File created successfully at: /workspace/squares.py
`, risk: "LOW", summary: "Create squares.py"},
	{tool: "terminal", text: `ASSISTANT: Running it:
<function=terminal>
<parameter=command>python3 /workspace/squares.py</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [terminal]:
1
4
9
16
25
`, risk: "LOW", summary: "Run squares.py"},
	{tool: "file_editor", text: `ASSISTANT: It works. Extending the range to 10:
<function=file_editor>
<parameter=command>str_replace</parameter>
<parameter=path>/workspace/squares.py</parameter>
<parameter=old_str>range(1, 6)</parameter>
<parameter=new_str>range(1, 11)</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [file_editor]:
The file /workspace/squares.py has been edited.
`, risk: "LOW", summary: "Extend the range to 10"},
	{tool: "terminal", text: `ASSISTANT:
<function=terminal>
<parameter=command>python3 /workspace/squares.py | tail -n 2</parameter>
%SEC%</function>

USER: EXECUTION RESULT of [terminal]:
81
100
`, risk: "LOW", summary: "Check the last squares"},
	{tool: "finish", text: `ASSISTANT: Done.
<function=finish>
<parameter=message>squares.py prints the squares of 1 to 10.</parameter>
%SEC%</function>
`, risk: "LOW", summary: "Report that the task is done"},
}

// Example returns the worked example for the tools, or "" when none of
// the tools it knows (terminal, file_editor, edit_file, task_tracker,
// finish) is present.
func Example(tools []Tool) string {
	have := map[string]bool{}
	for _, t := range tools {
		have[t.Name] = true
	}
	security := hasSecurityParam(tools)
	var b strings.Builder
	for _, s := range exampleSteps {
		if !have[s.tool] || (s.tool == "edit_file" && have["file_editor"]) {
			continue
		}
		sec := ""
		if security {
			sec = "<parameter=security_risk>" + s.risk + "</parameter>\n<parameter=summary>" + s.summary + "</parameter>\n"
		}
		b.WriteString(strings.Replace(s.text, "%SEC%", sec, 1))
		b.WriteString("\n")
	}
	if b.Len() == 0 {
		return ""
	}
	return exampleHead + b.String() + exampleFoot
}
