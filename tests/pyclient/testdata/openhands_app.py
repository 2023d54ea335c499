"""Starts the OpenHands app server (openhands-ai 1.11.0) for TestOpenHandsApp.

usage: python openhands_app.py FD TRACE_FILE

FD is a listening socket the test made (so no other process can take the
port while the app imports, which takes tens of seconds).

Everything is the app's own code, configured by the environment the test
sets, with two additions:

- Its process sandbox service counts a sandbox as running only while the
  agent server's process is on a CPU (psutil STATUS_RUNNING); an idle
  server sleeps in its event loop and would never be seen ready (this holds
  for the app's own Python agent server too). Here a sleeping process counts
  as running.
- Every request the app makes with httpx (to the agent server, and its own
  webhooks) is written to TRACE_FILE, one JSON object per line: method, url,
  status, and the response body of failures, so the test can list what the
  app asked of gohands serve.
"""
import json
import sys

import httpx
import psutil
import uvicorn

from openhands.app_server.sandbox import process_sandbox_service as pss
from openhands.app_server.sandbox.sandbox_models import SandboxStatus

_status = pss.ProcessSandboxService._get_process_status


def _get_process_status(self, info):
    st = _status(self, info)
    if st == SandboxStatus.STARTING:
        try:
            if psutil.Process(info.pid).status() in (psutil.STATUS_SLEEPING, psutil.STATUS_DISK_SLEEP):
                return SandboxStatus.RUNNING
        except psutil.Error:
            return SandboxStatus.MISSING
    return st


pss.ProcessSandboxService._get_process_status = _get_process_status

_send = httpx.AsyncClient.send
_trace = sys.argv[2]


async def _traced_send(self, request, **kw):
    resp = await _send(self, request, **kw)
    rec = {"method": request.method, "url": str(request.url), "status": resp.status_code}
    if resp.status_code >= 400:
        await resp.aread()
        rec["body"] = resp.text[:2000]
    with open(_trace, "a") as f:
        f.write(json.dumps(rec) + "\n")
    return resp


httpx.AsyncClient.send = _traced_send
uvicorn.run("openhands.app_server.app:app", fd=int(sys.argv[1]), log_level="warning")
