"""Drives `trellis _mcp` with the official Python MCP SDK (mcp==2.3.0).

usage: client.py MODE TRELLIS ROOT SOCKET JOB
MODE is "auto" (probes server/discover: the 2026-07-28 revision) or "legacy"
(the initialize handshake). Prints the negotiated protocol, the tool names,
whether the schemas equal tools_list.json, then one line per script step.
"""

import asyncio
import json
import os
import sys

from mcp import Client, StdioServerParameters

HERE = os.path.dirname(os.path.abspath(__file__))


def shown(result, step):
    text = result.content[0].text
    assert len(result.content) == 1 and result.content[0].type == "text"
    document = json.loads(text)
    assert json.dumps(document, separators=(",", ":"), ensure_ascii=False) == text, "compact"
    if result.is_error:
        for diagnostic in document["errors"]:
            assert "repair_class" in diagnostic and "spec_ref" in diagnostic
        return document["errors"][0]["code"]
    return summary(document)


def summary(document):
    if "tag" in document:
        return document["tag"]
    if "checks" in document:
        return "holes:" + ",".join(h["name"] for h in document["checks"]["holes"])
    if "cases" in document:
        tags = {case["outcome"]["tag"] for case in document["cases"]}
        return "all-pass" if tags == {"Pass"} and document["cases"] else "cases:" + ",".join(sorted(tags))
    if "asked" in document:
        return "asked"
    return next(iter(document))


async def main():
    mode, trellis, root, socket, job = sys.argv[1:6]
    params = StdioServerParameters(command=trellis, args=["_mcp", "--job", job, "--socket", socket, "--root", root])
    with open(os.path.join(HERE, "script.json")) as f:
        script = json.load(f)
    with open(os.path.join(HERE, "tools_list.json")) as f:
        expected_tools = json.load(f)
    async with Client(params, mode=mode) as client:
        print("protocol", client.protocol_version)
        info = client.server_info
        print("server", info.name if info else None, info.version if info else None)
        listed = await client.list_tools()
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
        print("tools", ",".join(t["name"] for t in tools))
        plain = [{"name": t["name"], "description": t["description"], "inputSchema": t["inputSchema"]} for t in tools]
        print("schemas", "equal" if plain == expected_tools else "DIFFERENT")
        median = open(os.path.join(root, "csvstats", "median.soil")).read()
        for step in script:
            arguments = json.loads(json.dumps(step["arguments"]).replace('"@median.soil"', json.dumps(median)))
            result = await client.call_tool(step["tool"], arguments)
            print("step", step["tool"], "error" if result.is_error else "ok", shown(result, step))


asyncio.run(main())
