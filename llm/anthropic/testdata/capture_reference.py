# Captures the Messages API requests the Python reference sends, into
# llm/anthropic/testdata/reference_requests.json.
import json, os, sys, threading
from http.server import BaseHTTPRequestHandler, HTTPServer
os.environ["OPENHANDS_SUPPRESS_BANNER"] = "1"
os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"
from pydantic import SecretStr
from openhands.sdk import LLM, Message, TextContent, ImageContent
from openhands.sdk.llm.message import MessageToolCall, ThinkingBlock, RedactedThinkingBlock
from openhands.sdk.tool.builtins import ThinkTool

captured = []
REPLY = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": [{"type": "text", "text": "ok"}],
         "stop_reason": "end_turn", "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 2}}

class H(BaseHTTPRequestHandler):
    def do_POST(self):
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        captured.append({"path": self.path, "headers": {k: v for k, v in self.headers.items() if k.lower() in ("x-api-key", "anthropic-version", "anthropic-beta", "authorization")}, "body": body})
        out = json.dumps(REPLY).encode()
        self.send_response(200); self.send_header("Content-Type", "application/json"); self.send_header("Content-Length", str(len(out))); self.end_headers(); self.wfile.write(out)
    def log_message(self, *a): pass

srv = HTTPServer(("127.0.0.1", 0), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{srv.server_port}"

msgs = [
    Message(role="system", content=[TextContent(text="SYS static"), TextContent(text="SYS dynamic")]),
    Message(role="user", content=[TextContent(text="do it"), ImageContent(image_urls=["https://x/y.png"])]),
    Message(role="assistant", content=[TextContent(text="ok")],
            thinking_blocks=[ThinkingBlock(thinking="t1", signature="S1"), RedactedThinkingBlock(data="R1")],
            tool_calls=[MessageToolCall(id="toolu_a", name="think", arguments='{"thought":"ls"}', origin="completion"),
                        MessageToolCall(id="toolu_b", name="think", arguments='{"thought":"pwd"}', origin="completion")]),
    Message(role="tool", tool_call_id="toolu_a", name="think", content=[TextContent(text="file1")]),
    Message(role="tool", tool_call_id="toolu_b", name="think", content=[TextContent(text="/root")]),
]
tools = [ThinkTool.create()[0]]
models = sys.argv[2:]
for m in models:
    llm = LLM(model=m, api_key=SecretStr("test-key"), base_url=base, usage_id="x", num_retries=1)
    llm.completion(messages=msgs, tools=tools)
json.dump(captured, open(sys.argv[1], "w"), indent=1, sort_keys=True)
print(len(captured), "requests")
