"""Record the reference's JSON and texts for the conversation controls.

Run with the reference venv's python (scripts/deps.d/20-reference.sh);
prints conversation/testdata/controls_reference.json on stdout.
"""

import json
import os

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.agent_server.models import (
    ForkConversationRequest,
    NavigateConversationRequest,
)
from openhands.sdk.conversation.title_utils import generate_fallback_title
from openhands.sdk.event import InterruptEvent, PauseEvent
from openhands.sdk.event.conversation_error import ConversationErrorEvent

ID = "5f1c2a3b-4d5e-4f60-8a7b-9c0d1e2f3a4b"
TS = "2026-11-24T01:02:03.456789"


def dump(e):
    # As the reference stores events: nulls left out.
    return json.loads(e.model_dump_json(exclude_none=True))


budget = (
    f"Agent reached maximum budget limit (${0.3:.4f}); accumulated cost ${0.36:.4f}."
)
out = {
    "interrupt_event": dump(InterruptEvent(id=ID, timestamp=TS)),
    "pause_event": dump(PauseEvent(id=ID, timestamp=TS)),
    "budget_error_event": dump(
        ConversationErrorEvent(
            id=ID, timestamp=TS, source="environment", code="MaxBudgetReached", detail=budget
        )
    ),
    "fork_request_defaults": json.loads(ForkConversationRequest().model_dump_json()),
    "navigate_request_defaults": json.loads(
        NavigateConversationRequest().model_dump_json()
    ),
    "fallback_titles": [
        [msg, n, generate_fallback_title(msg, n)]
        for msg, n in [
            ("The login test fails one time in ten, please fix it", 30),
            ("short", 50),
            ("  padded message  ", 50),
            ("✅ émojis and accents count as one character each here", 20),
        ]
    ],
}
print(json.dumps(out, indent=1, ensure_ascii=False, sort_keys=True))
