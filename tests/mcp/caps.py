"""The tool groups of `malo mcp`, through the official MCP Python SDK over stdio.

    caps.py list -- <malo> mcp ...
        prints {"names": [...], "listed": "<the tools as JSON>"}: each tool as the SDK
        lists it (name, description, inputSchema), the text a client hands a model
    caps.py grow -- <malo> mcp ...
        lists, enables the `files` group at run time, waits for
        notifications/tools/list_changed and lists again
    caps.py task <fixtures-url> <file> -- <malo> mcp ...
        an agent's task with the core set and one group (`files`): sign in, fill a form,
        upload a file, read the request log

Prints one JSON object with what it saw; exits non-zero on a protocol failure.
"""
import asyncio
import json
import os
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def listed(session):
    tools = (await session.list_tools()).tools
    dumped = [tool.model_dump(mode="json", by_alias=True, exclude_none=True) for tool in tools]
    return {"names": sorted(tool.name for tool in tools), "listed": json.dumps(dumped, ensure_ascii=False)}


async def grow(session, changes):
    seen = {"before": (await listed(session))["names"]}
    enabled = await session.call_tool("browser_enable_caps", {"groups": ["files"]})
    seen["enable_error"] = enabled.is_error
    seen["enabled"] = json.loads(text_of(enabled))
    for _ in range(50):
        if changes:
            break
        await asyncio.sleep(0.1)
    seen["list_changed_notifications"] = len(changes)
    seen["after"] = (await listed(session))["names"]
    again = await session.call_tool("browser_enable_caps", {"groups": ["files"]})
    seen["again"] = json.loads(text_of(again))
    await asyncio.sleep(0.3)
    seen["notifications_after_again"] = len(changes)
    unknown = await session.call_tool("browser_enable_caps", {"groups": ["teleport"]})
    seen["unknown_group"] = [unknown.is_error, text_of(unknown)]
    return seen


def ref_of(snapshot, role, name):
    found = re.search(r"(e\d+) " + role + r" \"" + re.escape(name) + r"\"", snapshot)
    if not found:
        raise SystemExit(f"no {role} {name!r} in:\n{snapshot}")
    return found.group(1)


async def task(session, base, upload_path):
    seen = {"calls": []}

    async def call(name, arguments):
        seen["calls"].append(name)
        result = await session.call_tool(name, arguments)
        if result.is_error:
            raise SystemExit(f"{name} {arguments}: {text_of(result)}")
        return text_of(result)

    default_tools = (await listed(session))["names"]
    seen["default_tools"] = default_tools
    # Sign in.
    await call("browser_navigate", {"url": f"{base}/f/login.html"})
    login = await call("browser_snapshot", {})
    await call("browser_fill", {"ref": ref_of(login, "textbox", "Email or username"), "text": "demo"})
    await call("browser_type", {"ref": ref_of(login, "textbox", "Password"), "text": "s3cret-pass"})
    await call("browser_click", {"ref": ref_of(login, "button", "Sign in")})
    await call("browser_wait_for", {"text": "Welcome back"})
    # Fill a form; its file input needs the `files` group, which the answer names.
    await call("browser_navigate", {"url": f"{base}/f/files.html"})
    form = await call("browser_snapshot", {})
    await call("browser_fill", {"selector": "#note", "text": "sent by an agent"})
    refused = await session.call_tool("browser_set_file_input", {"selector": "#one", "files": [upload_path]})
    seen["before_enabling"] = [refused.is_error, text_of(refused)]
    seen["enabled"] = json.loads(await call("browser_enable_caps", {"groups": ["files"]}))
    seen["file_input"] = json.loads(await call("browser_set_file_input", {"selector": "#one", "files": [upload_path]}))
    await call("browser_click", {"ref": ref_of(form, "button", "Send")})
    await call("browser_wait_for", {"selector": "#result"})
    # What happened on the wire.
    seen["requests"] = await call("browser_requests", {})
    seen["tools_after"] = (await listed(session))["names"]
    return seen


async def main():
    mode = sys.argv[1]
    command = sys.argv[sys.argv.index("--") + 1:]
    # The whole environment (the SDK passes only a few variables by default): MALO_MCP_CAPS.
    parameters = StdioServerParameters(command=command[0], args=command[1:], env=dict(os.environ))
    changes = []

    async def on_message(message):
        if getattr(message, "method", "") == "notifications/tools/list_changed":
            changes.append(message)

    async with stdio_client(parameters) as (read, write):
        async with ClientSession(read, write, message_handler=on_message) as session:
            initialized = await session.initialize()
            capabilities = initialized.capabilities.tools
            if mode == "list":
                seen = await listed(session)
            elif mode == "grow":
                seen = await grow(session, changes)
            else:
                seen = await task(session, sys.argv[2], sys.argv[3])
            seen["tools_list_changed"] = bool(capabilities and capabilities.list_changed)
    print(json.dumps(seen))


asyncio.run(main())
