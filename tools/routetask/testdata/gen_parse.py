# Writes reference_parse.json: how the reference 1.58.2 reads classifier
# replies (parse_class_index, parse_direct_model), for TestReferenceParse.
# Run with the reference's venv:
#   OPENHANDS_SUPPRESS_BANNER=1 ~/.cache/gohands/reference158/venv-*/bin/python gen_parse.py > reference_parse.json
import json

from openhands.sdk.tool.builtins.classify_and_switch_llm import (
    parse_class_index,
    parse_direct_model,
)

replies = [
    "1", "2", "3", "0", "-1", " 2 ", "Category 2.", "2 or 1", "none", "", "10",
    "I pick 3", "02", "1.5",
]
profiles = ["strong", "Strong-Large", "cheap", "vision"]
direct = [
    '{"model": "strong"}', '{"model": "STRONG"}', '```json\n{"model": "cheap"}\n```',
    '{"model": "nope"}', "use strong-large here", "strong", "Vision please",
    '{"other": 1} cheap', "nothing fits", "", '{"model": ""} vision',
    '{"model": 7}', "strong or cheap",
]
print(json.dumps({
    "classes": [{"reply": r, "n": 3, "index": parse_class_index(r, 3)} for r in replies],
    "profiles": profiles,
    "direct": [{"reply": r, "model": parse_direct_model(r, profiles) or ""} for r in direct],
}, indent=1))
