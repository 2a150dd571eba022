"""A real MCP client (the official Python SDK) driving malo: list the tools, enable the
groups it needs, then on a fixture page navigate, snapshot, click by ref, fill, assert and
take a screenshot.

    client.py stdio <fixture-url> -- <malo> mcp --data-dir ... [--agent-id ...]
    client.py http <fixture-url> <mcp-url> <lease-token>

Prints one JSON object with what it saw; exits non-zero on a protocol failure.
"""
import asyncio
import json
import re
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


def text_of(result):
    return "\n".join(block.text for block in result.content if getattr(block, "type", "") == "text")


async def flow(session, fixture_url):
    seen = {}
    seen["core_tools"] = sorted(tool.name for tool in (await session.list_tools()).tools)
    # assert and observe are in `devtools` and `vision`, more sessions in `sessions`.
    enabled = await session.call_tool("browser_enable_caps", {"groups": ["devtools", "vision", "sessions"]})
    seen["enabled"] = json.loads(text_of(enabled))["enabled"]
    listed = await session.list_tools()
    seen["tools"] = sorted(tool.name for tool in listed.tools)
    schemas = {tool.name: tool.input_schema for tool in listed.tools}
    seen["navigate_schema_required"] = schemas["browser_navigate"].get("required")
    seen["has_session_property"] = "session" in schemas["browser_click"]["properties"]

    navigated = await session.call_tool("browser_navigate", {"url": fixture_url})
    seen["navigate_error"] = navigated.is_error
    seen["navigate"] = json.loads(text_of(navigated))

    snapshot = await session.call_tool("browser_snapshot", {})
    snapshot_text = text_of(snapshot)
    seen["snapshot_text"] = snapshot_text
    save = re.search(r"(e\d+) button \"Save\"", snapshot_text).group(1)
    user = re.search(r"(e\d+) textbox \"User name\"", snapshot_text).group(1)

    clicked = await session.call_tool("browser_click", {"ref": save})
    seen["click"] = json.loads(text_of(clicked))
    filled = await session.call_tool("browser_fill", {"ref": user, "text": "mcp user"})
    seen["fill"] = json.loads(text_of(filled))
    passed = await session.call_tool("browser_assert", {"text": "Saved trusted", "selector": "#status"})
    seen["assert_ok"] = not passed.is_error
    failed = await session.call_tool("browser_assert", {"text": "never there", "timeout_ms": 200})
    seen["assert_failed_is_error"] = failed.is_error
    bad = await session.call_tool("browser_click", {"selector": "#does-not-exist"})
    seen["bad_click_error"] = bad.is_error
    seen["bad_click_text"] = text_of(bad)

    shot = await session.call_tool("browser_observe", {"mode": "screenshot"})
    images = [block for block in shot.content if getattr(block, "type", "") == "image"]
    seen["image_count"] = len(images)
    seen["image_mime"] = images[0].mime_type if images else None
    seen["image_base64_length"] = len(images[0].data) if images else 0

    second = await session.call_tool("browser_session_new", {"name": "second"})
    second_id = json.loads(text_of(second))["session_id"]
    listed_sessions = json.loads(text_of(await session.call_tool("browser_session_list", {})))
    seen["session_count"] = len(listed_sessions["sessions"])
    observed = await session.call_tool("browser_observe", {"session": second_id})
    seen["second_url"] = json.loads(text_of(observed))["url"]
    closed = await session.call_tool("browser_session_close", {"session": second_id})
    seen["second_closed"] = not closed.is_error
    return seen


async def main():
    mode, fixture_url = sys.argv[1], sys.argv[2]
    if mode == "stdio":
        command = sys.argv[sys.argv.index("--") + 1:]
        parameters = StdioServerParameters(command=command[0], args=command[1:])
        async with stdio_client(parameters) as (read, write):
            async with ClientSession(read, write) as session:
                await session.initialize()
                seen = await flow(session, fixture_url)
    else:
        from mcp.client.streamable_http import create_mcp_http_client, streamable_http_client
        url, token = sys.argv[3], sys.argv[4]
        http = create_mcp_http_client(headers={"x-malo-lease-token": token})
        async with streamable_http_client(url, http_client=http) as streams:
            read, write = streams[0], streams[1]
            async with ClientSession(read, write) as session:
                await session.initialize()
                seen = await flow(session, fixture_url)
    print(json.dumps(seen))


asyncio.run(main())
