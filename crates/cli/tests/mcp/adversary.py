"""A hostile key holder against `loci serve`'s `/mcp`, with the official MCP Python SDK.
Run by crates/cli/tests/mcp_served_*.rs; every mode prints one JSON line.

    adversary.py table URL KEY CASES.json   each case: a session named by client roots (sent
                                            raw, unnormalised), a `Loci-Workspace` header or a
                                            tool argument; steps may change the roots
    adversary.py churn URL KEY N MODE       N sessions opened and dropped: MODE `delete` (the
                                            SDK's own DELETE on close) or `vanish` (no DELETE)
    adversary.py hold URL KEY HEADER        one session, its id printed, then wait for stdin to
                                            close (the test kills or releases this process)
    adversary.py query URL KEY HEADER WSID MODE
                                            a never-ending `query`, seen running in the server's
                                            worker (GET .../query), then MODE `cancel` (the SDK's
                                            notifications/cancelled) or `vanish` (the process
                                            exits mid-call, no cancel sent)
"""

import asyncio
import json
import os
import sys
import time
import urllib.request
import warnings

import mcp.types as types
from mcp import ClientSession
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

# Roots are sent exactly as the case gives them (`model_construct` skips the SDK's own URL
# normalisation, which would drop `..` and refuse other schemes before the server sees them).
warnings.filterwarnings("ignore")

ENDLESS = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c"


def dump(result):
    return result.model_dump(by_alias=True, mode="json", exclude_none=True)


def headers_for(key, header=None):
    h = {"Authorization": f"Bearer {key}"}
    if header:
        h["Loci-Workspace"] = header
    return h


async def with_session(url, key, run, header=None, roots=None, terminate=True):
    kwargs = {}
    if roots is not None:
        async def answer(context):
            return types.ListRootsResult.model_construct(
                roots=[types.Root.model_construct(uri=u) for u in roots["uris"]]
            )

        kwargs["list_roots_callback"] = answer
    http = create_mcp_http_client(headers=headers_for(key, header))
    async with http:
        async with streamable_http_client(url, http_client=http, terminate_on_close=terminate) as (r, w):
            async with ClientSession(r, w, **kwargs) as session:
                await session.initialize()
                return await run(session)


def kind_of(result):
    meta = result.get("_meta") or {}
    return (meta.get("loci/error") or {}).get("kind")


async def settled_call(session, name, args, want):
    """Calls until the answer is `want` (a workspace name, or an error kind): roots are
    fetched after `initialized` and again after a change, on the server's own time."""
    deadline = time.monotonic() + 20
    while True:
        out = dump(await session.call_tool(name, args))
        got = kind_of(out) if out.get("isError") else (out.get("structuredContent") or {}).get("workspace")
        if want is None or got == want or time.monotonic() > deadline:
            return out
        await asyncio.sleep(0.05)


async def table(url, key, cases_file):
    with open(cases_file) as f:
        cases = json.load(f)
    results = []
    for n, case in enumerate(cases):
        roots = {"uris": case["uris"]} if "uris" in case else None

        async def run(session, case=case, roots=roots, n=n):
            steps = []
            for i, step in enumerate(case.get("steps", [{}])):
                if "uris" in step:
                    roots["uris"] = step["uris"]
                    await session.send_roots_list_changed()
                args = {"workspace": step["arg"]} if "arg" in step else {}
                status = await settled_call(session, "status", args, step.get("want"))
                remember = dump(await session.call_tool("remember", {"name": f"probe-{n}-{i}", "body": "probe", **args}))
                query = dump(await session.call_tool("query", {"sql": "SELECT count(*) FROM symbols", **args}))
                steps.append({"status": status, "remember": remember, "query": query})
            return steps

        try:
            steps = await with_session(url, key, run, header=case.get("header"), roots=roots)
            results.append({"name": case["name"], "steps": steps})
        except Exception as e:  # a refused session must still answer; a crash is a finding
            results.append({"name": case["name"], "exception": repr(e)})
    return results


async def churn(url, key, n, mode):
    async def run(session):
        out = dump(await session.call_tool("status", {}))
        return not out.get("isError")

    ok = 0
    for _ in range(n):
        ok += await with_session(url, key, run, header=os.environ.get("LOCI_TEST_HEADER"), terminate=(mode == "delete"))
    return {"sessions": n, "answered": ok}


def in_flight(url, key, wsid):
    base = url.rsplit("/mcp", 1)[0]
    req = urllib.request.Request(f"{base}/api/v1/workspaces/{wsid}/query", headers={"Authorization": f"Bearer {key}"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        return json.load(resp)


async def wait_running(url, key, wsid):
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if in_flight(url, key, wsid)["running"]:
            return True
        await asyncio.sleep(0.02)
    return False


async def query(url, key, header, wsid, mode):
    async def run(session):
        call = asyncio.ensure_future(session.call_tool("query", {"sql": ENDLESS, "timeout_ms": 60000}))
        seen = await wait_running(url, key, wsid)
        if mode == "vanish":
            print(json.dumps({"seen_running": seen}), flush=True)
            os._exit(0)
        started = time.monotonic()
        call.cancel()
        try:
            await call
        except BaseException:
            pass
        deadline = time.monotonic() + 20
        while in_flight(url, key, wsid)["running"] and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return {"seen_running": seen, "stopped_ms": round((time.monotonic() - started) * 1000)}

    return await with_session(url, key, run, header=header)


async def hold(url, key, header):
    async def run(session):
        print(json.dumps({"held": True}), flush=True)
        await asyncio.get_running_loop().run_in_executor(None, sys.stdin.read)
        return {"released": True}

    return await with_session(url, key, run, header=header)


async def main(argv):
    mode = argv[0]
    if mode == "table":
        out = await table(argv[1], argv[2], argv[3])
    elif mode == "churn":
        out = await churn(argv[1], argv[2], int(argv[3]), argv[4])
    elif mode == "query":
        out = await query(argv[1], argv[2], argv[3], argv[4], argv[5])
    elif mode == "hold":
        out = await hold(argv[1], argv[2], argv[3])
    else:
        raise SystemExit(f"unknown mode {argv}")
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
