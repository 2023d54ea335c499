"""Record the reference's JSON and texts for the conversation controls.

Run with the reference venv's python (scripts/deps.d/20-reference.sh);
prints conversation/testdata/controls_reference.json on stdout.
"""

import json
import os

os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"

from openhands.agent_server.models import (
    ConversationInfo,
    ForkConversationRequest,
    NavigateConversationRequest,
    StartGoalRequest,
)
from openhands.sdk.conversation.goal import GoalOutcome, GoalStatus, GoalVerdict
from openhands.sdk.conversation.title_utils import generate_fallback_title
from openhands.sdk.event import ConversationStateUpdateEvent
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


def goal_event(**status):
    # A goal loop's status as the reference's server records it; the raw
    # JSON, compared byte for byte.
    return ConversationStateUpdateEvent(
        id=ID, timestamp=TS, key="goal", value=GoalStatus(**status).model_dump()
    ).model_dump_json(exclude_none=True)


GOAL = "add calc.go with passing tests"
out = {
    "goal_events": [
        goal_event(active=True, status="running", iteration=0, max_iterations=10, objective=GOAL),
        goal_event(
            active=True, status="running", iteration=1, max_iterations=10, objective=GOAL,
            verdict=GoalVerdict(score=0.4, complete=False, missing="no test was run"),
        ),
        goal_event(
            active=False, status="complete", iteration=2, max_iterations=10, objective=GOAL,
            verdict=GoalVerdict(score=1.0, complete=True),
        ),
        goal_event(active=False, status="interrupted", iteration=1, max_iterations=3, objective="é\n\"q\""),
    ],
    "goal_outcome": json.loads(
        GoalOutcome(status="capped", iterations=2, verdict=GoalVerdict(score=0.0, complete=False, missing="x")).model_dump_json()
    ),
    "goal_request_defaults": json.loads(StartGoalRequest(objective="o").model_dump_json()),
    "interrupt_event": dump(InterruptEvent(id=ID, timestamp=TS)),
    "pause_event": dump(PauseEvent(id=ID, timestamp=TS)),
    "budget_error_event": dump(
        ConversationErrorEvent(
            id=ID, timestamp=TS, source="environment", code="MaxBudgetReached", detail=budget
        )
    ),
    # The body RemoteConversation.fork posts (every option set), as the
    # reference's server reads it, and the members of the ConversationInfo
    # it answers with.
    "fork_request_full": json.loads(
        ForkConversationRequest.model_validate(
            {
                "reset_metrics": False,
                "id": "0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9",
                "title": "Alt",
                "tags": {"team": "x"},
                "from_event_id": ID,
            }
        ).model_dump_json()
    ),
    "conversation_info_fields": sorted(ConversationInfo.model_json_schema()["properties"]),
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
