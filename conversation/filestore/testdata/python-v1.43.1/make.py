import sys, uuid, shutil, os, json
from pydantic import SecretStr
from openhands.sdk import LLM, Agent
from openhands.sdk.conversation.state import ConversationState, ConversationExecutionStatus
from openhands.sdk.event import MessageEvent, ActionEvent, ObservationEvent
from openhands.sdk.llm import Message, TextContent, MessageToolCall
from openhands.sdk.workspace import LocalWorkspace
from openhands.sdk.utils.cipher import Cipher
from openhands.sdk.security.confirmation_policy import ConfirmRisky
from openhands.tools.terminal import TerminalAction, TerminalObservation
from openhands.tools.terminal.metadata import CmdOutputMetadata

out = sys.argv[1]
cid = uuid.UUID("5d3f2c1b-0a9e-4d8c-b7a6-1f2e3d4c5b6a")
base = os.path.join(out)
shutil.rmtree(base, ignore_errors=True)
llm = LLM(model="gpt-4o", api_key=SecretStr("sk-fixture-key"), usage_id="agent")
agent = Agent(llm=llm, tools=[])
cipher = Cipher("fixture secret key")
conv_dir = os.path.join(base, cid.hex)
st = ConversationState.create(id=cid, agent=agent, workspace=LocalWorkspace(working_dir="/workspace/project"),
                              persistence_dir=conv_dir, cipher=cipher)
st.secret_registry.update_secrets({"GITHUB_TOKEN": "ghp_fixture"})
st.confirmation_policy = ConfirmRisky()
st.tags = {"origin": "python"}
m = MessageEvent(source="user", llm_message=Message(role="user", content=[TextContent(text="List the files")]))
st.append_event(m)
def cycle(n, answered):
    tc = MessageToolCall(id=f"call_{n}", name="terminal", arguments=json.dumps({"command": "ls -la"}), origin="completion")
    a = ActionEvent(source="agent", thought=[TextContent(text="Listing files.")], action=TerminalAction(command="ls -la"),
                    tool_name="terminal", tool_call_id=f"call_{n}", tool_call=tc, llm_response_id=f"resp_{n}")
    st.append_event(a)
    if answered:
        obs = TerminalObservation.from_text(text="total 8\nfile.txt\n", command="ls -la", exit_code=0)
        o = ObservationEvent(source="environment", tool_name="terminal", tool_call_id=f"call_{n}", observation=obs, action_id=a.id)
        st.append_event(o)
cycle(1, True)
cycle(2, False)
st.execution_status = ConversationExecutionStatus.RUNNING
print(conv_dir)
