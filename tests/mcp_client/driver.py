"""A real MCP client (the official Python SDK, PyPI `mcp`) driven line by line.

Started by tests/mcp_e2e.rs as `python3 driver.py NBOOK_BIN ARG...`: it spawns
`NBOOK_BIN ARG...` (e.g. `nbook mcp --project P`) over stdio through the SDK's own stdio
client, then reads one JSON command per line on stdin and answers each with one JSON line
on stdout:

  {"op": "list"}                                  -> {"tools": [...]}
  {"op": "call", "tool": T, "args": {...}}        -> {"isError": b, "structured": .., "text": ..}
  {"op": "quit"}                                  -> ends

The SDK does the protocol (initialize with clientInfo, tools/list, tools/call): nothing
here speaks JSON-RPC by hand.

With NBOOK_MCP_TASKS=1 the client speaks the 2026 protocol (`server/discover`) and declares
the MCP Tasks extension (`io.modelcontextprotocol/tasks`) through the SDK's own extension
interface: a `tools/call` answered with a task (`resultType: "task"`) is resolved here by
polling `tasks/get` until the task ends; the call's answer then also carries `taskId` and
`statuses` (each status and status message seen). `{"op": "call", ..., "cancelWhenWaiting":
true}` sends `tasks/cancel` once the task says it waits for the author.
"""

import json
import os
import sys
from typing import Any, Literal

import anyio
from pydantic import ConfigDict
from mcp import Client, ClientSession, StdioServerParameters
from mcp.client.extension import ClientExtension, ResultClaim
from mcp.client.stdio import stdio_client
from mcp.types import CallToolResult, EmptyResult, Implementation, Request, RequestParams, Result, TextContent

TASKS = "io.modelcontextprotocol/tasks"


class TaskHandle(Result):
    """What a server answers a task-augmented tools/call with."""

    result_type: Literal["task"]
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None


class TaskIdParams(RequestParams):
    task_id: str


class TasksGet(Request[TaskIdParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskIdParams
    name_param = "taskId"


class TasksCancel(Request[TaskIdParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskIdParams
    name_param = "taskId"


class TaskState(Result):
    model_config = ConfigDict(extra="allow")
    task_id: str
    status: str
    status_message: str | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


# What the running call's task did, for the answer line; and whether to cancel it.
TASK_LOG: dict[str, Any] = {}


async def resolve_task(handle: TaskHandle, ctx) -> CallToolResult:
    TASK_LOG["taskId"] = handle.task_id
    statuses = TASK_LOG.setdefault("statuses", [])
    statuses.append([handle.status, handle.status_message])
    cancelled = False
    while True:
        st = await ctx.session.send_request(TasksGet(params=TaskIdParams(task_id=handle.task_id)), TaskState)
        if [st.status, st.status_message] != statuses[-1]:
            statuses.append([st.status, st.status_message])
        if st.status == "completed":
            return CallToolResult.model_validate(st.result or {})
        if st.status in ("failed", "cancelled"):
            return CallToolResult(content=[TextContent(type="text", text=f"task {st.status}: {st.error}")], is_error=True)
        waiting = "waiting for the author" in (st.status_message or "")
        if TASK_LOG.get("cancelWhenWaiting") and waiting and not cancelled:
            await ctx.session.send_request(TasksCancel(params=TaskIdParams(task_id=handle.task_id)), EmptyResult)
            cancelled = True
        await anyio.sleep((handle.poll_interval_ms or 1000) / 1000 / 4)


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def dump_result(r):
    text = "".join(getattr(c, "text", "") for c in (r.content or []))
    return {
        "isError": bool(r.is_error) if hasattr(r, "is_error") else bool(getattr(r, "isError", False)),
        "structured": getattr(r, "structured_content", None) if hasattr(r, "structured_content") else getattr(r, "structuredContent", None),
        "text": text,
    }


async def serve(session, progress, on_progress):
    """Answer the test's commands over `session` (a ClientSession or a Client)."""
    stdin = anyio.wrap_file(sys.stdin)
    async for line in stdin:
        line = line.strip()
        if not line:
            continue
        c = json.loads(line)
        op = c["op"]
        try:
            if op == "quit":
                break
            if op == "list":
                tools = await session.list_tools()
                emit({"tools": [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools.tools]})
            elif op == "call":
                progress.clear()
                TASK_LOG.clear()
                TASK_LOG["cancelWhenWaiting"] = bool(c.get("cancelWhenWaiting"))
                r = await session.call_tool(c["tool"], c.get("args", {}), progress_callback=on_progress)
                out = dump_result(r)
                out["progress"] = list(progress)
                if "taskId" in TASK_LOG:
                    out["taskId"] = TASK_LOG["taskId"]
                    out["statuses"] = TASK_LOG["statuses"]
                emit(out)
            else:
                emit({"error": f"unknown op {op}"})
        except Exception as e:  # the test reads the failure, it must not hang
            emit({"error": repr(e)})


class TasksExtension(ClientExtension):
    """The MCP Tasks extension, through the SDK's extension interface."""

    identifier = TASKS

    def claims(self):
        return [ResultClaim(result_type="task", model=TaskHandle, resolve=resolve_task)]


async def main_tasks(params, progress, on_progress):
    client = Client(
        params,
        client_info=Implementation(name="py-mcp-e2e-tasks", version="1.0"),
        extensions=[TasksExtension()],
    )
    async with client:
        info = client.server_info
        emit({"ready": True, "server": info.name if info else None, "protocol": client.protocol_version})
        await serve(client, progress, on_progress)


async def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    params = StdioServerParameters(command=cmd, args=args)
    progress = []

    async def on_progress(p, total, message):
        progress.append(message)

    if os.environ.get("NBOOK_MCP_TASKS") == "1":
        await main_tasks(params, progress, on_progress)
        return
    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, client_info=Implementation(name="py-mcp-e2e", version="1.0")
        ) as session:
            init = await session.initialize()
            emit({"ready": True, "server": init.server_info.name if hasattr(init, "server_info") else init.serverInfo.name})
            await serve(session, progress, on_progress)


anyio.run(main)
