# Regenerates reference_schemas.json from the Python reference SDK
# (openhands-sdk/openhands-tools 1.43.1):
#   python reference_schemas.py > reference_schemas.json
# The Go test only reads the JSON; it never needs Python.
import json, os
os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
from openhands.tools.terminal.definition import TerminalAction
from openhands.tools.task_tracker.definition import TaskTrackerAction
from openhands.tools.file_editor.definition import FileEditorAction
from openhands.tools.glob.definition import GlobAction
from openhands.tools.grep.definition import GrepAction
from openhands.sdk.tool.builtins.think import ThinkAction
from openhands.sdk.tool.builtins.finish import FinishAction

actions = {"terminal": TerminalAction, "file_editor": FileEditorAction,
           "task_tracker": TaskTrackerAction, "glob": GlobAction, "grep": GrepAction,
           "think": ThinkAction, "finish": FinishAction}
print(json.dumps({name: a.to_mcp_schema() for name, a in actions.items()}, indent=2))
