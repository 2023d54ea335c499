# Regenerates reference_repair.json: what the Python reference SDK (1.43.1)
# does with each tool call of the cases below (name normalisation, argument
# repair against the built-in action types).
#   python reference_repair.py > reference_repair.json
# The Go test only reads the JSON.
import json, os, shutil
os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
from openhands.sdk.agent.utils import normalize_tool_call, parse_tool_call_arguments, fix_malformed_tool_arguments
from openhands.tools.terminal.definition import TerminalAction
from openhands.tools.file_editor.definition import FileEditorAction
from openhands.tools.task_tracker.definition import TaskTrackerAction

actions = {"terminal": TerminalAction, "file_editor": FileEditorAction, "task_tracker": TaskTrackerAction}
available = ["terminal", "file_editor", "task_tracker"]
cases = [
    ("terminal", '{"command": "ls"}'),
    ("bash", '{"command": "ls -la", "timeout": 5}'),
    ("execute_bash", '{"command": "pwd", "security_risk": "LOW"}'),
    ("command", '{"command": "echo hi"}'),
    ("execute", '{"command": "echo hi", "is_input": false}'),
    ("git", '{"command": "status", "extra": 1, "summary": "s"}'),
    ("git", '{"command": "git log -1"}'),
    ("git", '{"command": "github"}'),
    ("git", '{}'),
    ("reset", '{"command": "--hard"}'),
    ("str_replace", '{"path": "/a", "old_str": "x", "new_str": "y"}'),
    ("str_replace_editor", '{"command": "view", "path": "/a", "view_range": "[1, 5]"}'),
    ("str_replace </parameter", '{"path": "/a"}'),
    ("file_editor</function>", '{"command": "create", "path": "/a", "file_text": "x"}'),
    ("file_editor", '{"path": "/a", "insert_line": 3, "new_str": "z"}'),
    ("file_editor", '{"path": "/a", "file_text": "hello"}'),
    ("file_editor", '{"path": "/a", "old_str": ["a", "b"], "new_str": ["c"]}'),
    ("file_editor", '{"command": "view", "path": "/a", "view_range": "[1, 5]</parameter>"}'),
    ("task_tracker", '{"command": "plan", "task_list": "[{\\"title\\": \\"a\\"}]"}'),
    ("task_tracker", '{"command": "plan", "task_list": "[{\\"title\\": \\"a\\nb\\"}]"}'),
    ("ls", '{}'),
    ("pwd", '{}'),
    ("find", '{}'),
    ("ls", '{"path": "/"}'),
    ("cat", '{}'),
    ("unknown_tool", '{"a": 1}'),
    ("terminal", '{"command": "ls", "securtiy_risk": "HIGH", "timeout": null}'),
    ("terminal", '"just a string"'),
    ("terminal", '{"command": "a\nb"}'),
    ("str_replace_editor", '{}'),
    ("file_editor", '{"security_risk": "LOW"}'),
    ("file_editor", '{"new_str": "x"}'),
]
out = []
for name, raw in cases:
    case = {"name": name, "arguments": raw}
    try:
        args = parse_tool_call_arguments(raw)
        n, a = normalize_tool_call(name, args, available)
        if n in actions:
            a = fix_malformed_tool_arguments(a, actions[n])
        case["want_name"], case["want_arguments"] = n, a
    except Exception as e:
        case["want_error"] = str(e)
    out.append(case)
print(json.dumps(out, indent=2))
