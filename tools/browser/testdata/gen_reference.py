"""Write the reference browser tool set's wire facts (openhands-tools 1.43.1).

Not run by the tests: it writes reference.json, which the Go tests read.
Regenerate with the reference's Python:

    python gen_reference.py > reference.json

For every tool of BrowserToolSet: its name, kind, annotations, action kind and
the parameters the model sees (security_risk and summary included,
descriptions removed: ours are our own). Then actions and observations as the
reference writes them in events, with the text the model is shown.
"""

import json
import os
import tempfile

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"

from openhands.tools.browser_use import definition as d  # noqa: E402

TOOLS = [
    d.BrowserNavigateTool, d.BrowserClickTool, d.BrowserGetStateTool,
    d.BrowserGetContentTool, d.BrowserTypeTool, d.BrowserScrollTool,
    d.BrowserGoBackTool, d.BrowserListTabsTool, d.BrowserSwitchTabTool,
    d.BrowserCloseTabTool, d.BrowserGetStorageTool, d.BrowserSetStorageTool,
    d.BrowserStartRecordingTool, d.BrowserStopRecordingTool,
]


def strip(v):
    if isinstance(v, dict):
        return {k: strip(x) for k, x in v.items() if k != "description"}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v


tools = []
for cls in TOOLS:
    t = cls.create(executor=None)[0]
    tools.append({
        "name": t.name,
        "kind": type(t).__name__,
        "action_kind": t.action_type.__name__,
        "observation_kind": t.observation_type.__name__,
        "annotations": t.annotations.model_dump(),
        "parameters": strip(t._get_tool_schema(add_security_risk_prediction=True)),
    })

# A 1x1 transparent PNG.
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA"
       "60e6kgAAAABJRU5ErkJggg==")

actions = [
    d.BrowserNavigateAction(url="http://127.0.0.1:8080/form", new_tab=True),
    d.BrowserNavigateAction(url="http://127.0.0.1:8080/"),
    d.BrowserClickAction(index=12),
    d.BrowserTypeAction(index=7, text="Ada Lovelace"),
    d.BrowserGetStateAction(include_screenshot=True),
    d.BrowserGetContentAction(extract_links=True, start_from_char=100),
    d.BrowserScrollAction(),
    d.BrowserGoBackAction(),
    d.BrowserListTabsAction(),
    d.BrowserSwitchTabAction(tab_id="4F2A"),
    d.BrowserCloseTabAction(tab_id="4F2A"),
    d.BrowserGetStorageAction(),
    d.BrowserSetStorageAction(storage_state={"cookies": [{"name": "a", "value": "b", "domain": "127.0.0.1", "path": "/"}], "origins": []}),
]

save_dir = tempfile.mkdtemp(prefix="browser-ref-")
observations = [
    ("text", d.BrowserObservation.from_text(text="Navigated to: http://127.0.0.1:8080/")),
    ("error", d.BrowserObservation.from_text(text="Browser operation failed: boom", is_error=True)),
    ("screenshot", d.BrowserObservation.from_text(text='{\n  "url": "about:blank"\n}', screenshot_data=PNG)),
    ("screenshot_saved", d.BrowserObservation.from_text(text="state", screenshot_data=PNG, full_output_save_dir=save_dir)),
]


def llm(o):
    out = []
    for c in o.to_llm_content:
        c = c.model_dump(mode="json")
        if c.get("type") == "text":
            out.append({"type": "text", "text": c["text"].replace(save_dir, "$SAVE_DIR")})
        else:
            out.append({"type": "image", "image_urls": c["image_urls"]})
    return out


print(json.dumps({
    "tool_set_name": d.BrowserToolSet.name,
    "tools": tools,
    "actions": [a.model_dump_json(exclude_none=True) for a in actions],
    "observations": [
        {"name": n, "raw": o.model_dump_json(exclude_none=True).replace(save_dir, "$SAVE_DIR"), "llm": llm(o)}
        for n, o in observations
    ],
}, indent=2, ensure_ascii=False))
