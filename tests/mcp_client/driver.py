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
"""

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.types import Implementation


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


async def main():
    cmd, args = sys.argv[1], sys.argv[2:]
    params = StdioServerParameters(command=cmd, args=args)
    progress = []

    async def on_progress(p, total, message):
        progress.append(message)

    async with stdio_client(params) as (read, write):
        async with ClientSession(
            read, write, client_info=Implementation(name="py-mcp-e2e", version="1.0")
        ) as session:
            init = await session.initialize()
            emit({"ready": True, "server": init.server_info.name if hasattr(init, "server_info") else init.serverInfo.name})
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
                        r = await session.call_tool(c["tool"], c.get("args", {}), progress_callback=on_progress)
                        out = dump_result(r)
                        out["progress"] = list(progress)
                        emit(out)
                    else:
                        emit({"error": f"unknown op {op}"})
                except Exception as e:  # the test reads the failure, it must not hang
                    emit({"error": repr(e)})


anyio.run(main)
