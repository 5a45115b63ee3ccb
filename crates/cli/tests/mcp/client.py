"""Drives `loci mcp` (stdio) or `loci serve`'s `/mcp` (streamable HTTP) with the official
MCP Python SDK, and checks what an agent relies on. Run by crates/cli/tests/mcp_clients.rs.

    client.py contract stdio LOCI WORKSPACE
    client.py contract http URL KEY LOCATOR   (the session named by its Loci-Workspace header)
    client.py huge LOCI WORKSPACE        (callers of __init__: the budget on a huge answer)
    client.py roots LOCI ROOT            (no --workspace: the client's root decides)
    client.py roots_change LOCI ROOT_A ROOT_B  (a roots change rebinds the session)
    client.py launch JSON_COMMAND        (a host's configured command: {"command", "args"})
    client.py sessions URL KEY ROOT_A ROOT_B  (two HTTP sessions, each bound to its root)

Prints one JSON summary line; any failed check raises (non-zero exit, with the reason).
"""

import asyncio
import json
import pathlib
import sys
import time

import jsonschema
import mcp.types as types
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

EXPECTED_TOOLS = {"status", "find", "symbol", "relations", "search", "changes", "query", "remember", "recall", "memory"}
# The memory tools write; `memory` may forget (soft) and overwrite (edit, versioned).
ANNOTATIONS = {"remember": (False, False), "memory": (False, True)}
# No more than the hand-written schemas took (as crates/mcp/tests/tools_list.rs).
TOOLS_LIST_MAX_BYTES = 15_123 + 1_560 + 213  # the `changes` tool's bytes, the `meaning` mode's
DEFAULT_MAX_CHARS = 20_000


def size_of(result):
    """What a result counts against its budget: structured content plus text."""
    text = "".join(c.text for c in result.content if getattr(c, "text", None) is not None)
    return len(json.dumps(result.structured_content, separators=(",", ":"), ensure_ascii=False).encode()) + len(text.encode())


def check(cond, what):
    if not cond:
        raise AssertionError(what)


async def call_ok(session, schemas, name, args):
    result = await session.call_tool(name, args)
    check(not result.is_error, f"{name} {args} failed: {result.content}")
    jsonschema.validate(result.structured_content, schemas[name])
    check(result.content and result.content[0].text, f"{name}: no text rendering")
    index = result.structured_content["index"]
    check(index["state"] in ("complete", "indexing", "missing"), f"{name}: freshness {index}")
    return result


async def call_error(session, name, args, kind):
    result = await session.call_tool(name, args)
    check(result.is_error, f"{name} {args} should fail with {kind}: {result.structured_content}")
    check(result.structured_content is None, "an error carries no structured content (clients check it against the output schema)")
    err = result.meta["loci/error"]
    check("state" in result.meta["loci/index"], result.meta)
    check(err["kind"] == kind, f"{name} {args}: kind {err['kind']}, want {kind}: {err}")
    check(kind in result.content[0].text, f"{name}: the text does not name the kind")
    return err


async def contract(session):
    init_started = time.perf_counter()
    init = await session.initialize()
    init_ms = (time.perf_counter() - init_started) * 1000
    check(init.server_info.name == "loci", init)
    listed = await session.list_tools()
    raw = json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in listed.tools])
    check(len(raw.encode()) <= TOOLS_LIST_MAX_BYTES, f"tools/list is {len(raw)} bytes")
    names = {t.name for t in listed.tools}
    check(names == EXPECTED_TOOLS, f"tools: {names}")
    schemas = {}
    for t in listed.tools:
        read_only, destructive = ANNOTATIONS.get(t.name, (True, False))
        check(t.annotations.read_only_hint is read_only and t.annotations.destructive_hint is destructive, f"{t.name} annotations")
        check(t.output_schema and t.description, f"{t.name}: no output schema or description")
        jsonschema.Draft202012Validator.check_schema(t.output_schema)
        jsonschema.Draft202012Validator.check_schema(t.input_schema)
        schemas[t.name] = t.output_schema

    status = await call_ok(session, schemas, "status", {})
    check(status.structured_content["counts"]["symbols"] > 0, status.structured_content)
    found = await call_ok(session, schemas, "find", {"pattern": "parse_config"})
    symbols = found.structured_content["symbols"]
    check(symbols and symbols[0]["name"] == "parse_config", found.structured_content)
    check("src/lib.rs:1" in found.content[0].text, found.content[0].text)
    sym = await call_ok(session, schemas, "symbol", {"symbol": "Settings", "body_lines": "2"})
    defs = sym.structured_content["definitions"]
    check(defs and "struct Settings" in defs[0]["body"], defs)
    callers = await call_ok(session, schemas, "relations", {"target": "parse_config", "direction": "callers", "depth": "2"})
    reached = {r["symbol"] for r in callers.structured_content["relations"]}
    check("Settings::load" in reached, callers.structured_content)
    callees = await call_ok(session, schemas, "relations", {"target": "parse_config", "direction": "callees"})
    check({r["symbol"] for r in callees.structured_content["relations"]} == {"helper"}, callees.structured_content)
    refs = await call_ok(session, schemas, "relations", {"target": "parse_config", "direction": "refs"})
    check(refs.structured_content["page"]["total"] >= 1, refs.structured_content)
    impact = await call_ok(session, schemas, "relations", {"target": "helper", "direction": "impact"})
    check(impact.structured_content["page"]["total"] >= 1, impact.structured_content)
    # Grouped by file and filtered: still an answer its output schema describes.
    grouped = await call_ok(session, schemas, "relations", {"target": "helper", "direction": "impact", "group_by": "file", "path": "src", "edges": ["CALLS"], "include_unresolved": True})
    groups = grouped.structured_content["groups"]
    check(groups and grouped.structured_content["relations"] == [], grouped.structured_content)
    check(all(g["path"].startswith("src/") and set(g["edges"]) == {"CALLS"} for g in groups), groups)
    hits = await call_ok(session, schemas, "search", {"pattern": "PARSE_CONFIG", "ignore_case": "true"})
    check(hits.structured_content["page"]["total"] >= 2, hits.structured_content)
    rows = await call_ok(session, schemas, "query", {"sql": "SELECT name FROM symbols WHERE kind = ? ORDER BY name", "params": ["function"]})
    check(["parse_config"] in rows.structured_content["rows"], rows.structured_content)

    await memory_tools(session, schemas)

    # Cursors: pages of one walk the whole list once, in order.
    whole = await call_ok(session, schemas, "find", {"pattern": "*"})
    all_names = [s["qualified_name"] for s in whole.structured_content["symbols"]]
    check(len(all_names) >= 5, all_names)
    walked, cursor, pages = [], None, 0
    while True:
        args = {"pattern": "*", "limit": "2"}
        if cursor:
            args["cursor"] = cursor
        page = await call_ok(session, schemas, "find", args)
        walked += [s["qualified_name"] for s in page.structured_content["symbols"]]
        pages += 1
        cursor = page.structured_content["page"].get("next_cursor")
        if not cursor:
            check(page.structured_content["page"]["more"] == 0, page.structured_content)
            break
        check(page.structured_content["page"]["more"] > 0, page.structured_content)
    check(walked == all_names, f"paged {walked} != whole {all_names}")
    sql_page = await call_ok(session, schemas, "query", {"sql": "SELECT name FROM symbols ORDER BY name", "limit": 2})
    check(sql_page.structured_content["page"].get("next_cursor") == "2", sql_page.structured_content)
    sql_next = await call_ok(session, schemas, "query", {"sql": "SELECT name FROM symbols ORDER BY name", "limit": 2, "cursor": "2"})
    check(sql_next.structured_content["rows"][0] != sql_page.structured_content["rows"][0], sql_next.structured_content)

    # Budgets: a small max_chars holds, and says where to continue.
    small = await call_ok(session, schemas, "search", {"pattern": "u32", "max_chars": 1000, "limit": 1000})
    check(size_of(small) <= 1000, f"{size_of(small)} chars > 1000")

    # Errors are tool errors with the kind and the hint.
    err = await call_error(session, "relations", {"target": "no_such_symbol", "direction": "callers"}, "not_found")
    check(err.get("hint"), err)
    await call_error(session, "find", {"pattern": "x", "kind": "spaceship"}, "invalid_input")
    await call_error(session, "find", {"pattern": "x", "limit": "ten"}, "invalid_input")
    await call_error(session, "relations", {"target": "helper", "direction": "sideways"}, "invalid_input")
    await call_error(session, "relations", {"target": "helper", "direction": "callers", "depth": 99}, "invalid_input")
    await call_error(session, "query", {"sql": "DELETE FROM symbols"}, "not_read_only")
    await call_error(session, "find", {"pattern": "*", "cursor": "abc"}, "invalid_input")
    await call_error(session, "find", {}, "invalid_input")
    return {"init_ms": init_ms, "tools_list_bytes": len(raw.encode()), "pages": pages}


async def memory_tools(session, schemas):
    """remember, recall and each action of memory, every answer against its output schema."""
    made = await call_ok(session, schemas, "remember", {
        "name": "config-rule", "type": "convention", "body": "`parse_config` stays pure: no IO in it.",
        "entities": [{"name": "config", "type": "concept"}],
    })
    memory = made.structured_content["memory"]
    check(memory["name"] == "config-rule" and memory["stale"] is False, memory)
    check(any(l["key"]["qualified_name"] == "parse_config" for l in memory["checked_links"]), memory)
    check(not any(str(v).startswith("/") for v in json.dumps(memory).split('"')), "an absolute path in remember")
    await call_error(session, "remember", {"name": "config-rule", "body": "again"}, "name_taken")
    await call_error(session, "remember", {"name": "big", "body": "x" * (512 * 1024 + 1)}, "too_long")
    await call_error(session, "remember", {"name": "bad", "body": "b", "entities": [{"name": "no type"}]}, "invalid_input")
    hits = await call_ok(session, schemas, "recall", {"query": "no IO"})
    check(hits.structured_content["hits"][0]["name"] == "config-rule", hits.structured_content)
    # The hit carries the line that answers: no read needed to see why it matters.
    check(hits.structured_content["hits"][0]["snippet"] == "`parse_config` stays pure: no IO in it.", hits.structured_content)
    check("\n  | `parse_config` stays pure" in hits.content[0].text, hits.content[0].text)
    by_symbol = await call_ok(session, schemas, "recall", {"symbol": "parse_config", "limit": "5"})
    check(by_symbol.structured_content["hits"][0]["name"] == "config-rule", by_symbol.structured_content)
    steps = [
        ({"action": "read", "name": "config-rule"}, lambda c: c["memory"]["body"].startswith("`parse_config`")),
        ({"action": "edit", "name": "config-rule", "body": "`parse_config` reads once."}, lambda c: "once" in c["memory"]["body"]),
        ({"action": "history", "name": "config-rule"}, lambda c: len(c["versions"]) == 2),
        ({"action": "restore", "name": "config-rule", "version": 1}, lambda c: "pure" in c["memory"]["body"]),
        ({"action": "link", "name": "config-rule", "code": "Settings"}, lambda c: len(c["memory"]["checked_links"]) >= 2),
        ({"action": "unlink", "name": "config-rule", "entity": "config"}, lambda c: "config" not in c["memory"]["entities"]),
        ({"action": "rename", "name": "config-rule", "new_name": "config-policy"}, lambda c: c["memory"]["name"] == "config-policy"),
        ({"action": "related", "name": "config-policy"}, lambda c: isinstance(c["related"], list)),
        ({"action": "list"}, lambda c: [m["name"] for m in c["memories"]] == ["config-policy"]),
        ({"action": "entities"}, lambda c: isinstance(c["entities"], list)),
        ({"action": "stats"}, lambda c: "path" not in c["stats"]),
        ({"action": "forget", "name": "config-policy"}, lambda c: c["memory"]["deleted_at"] is not None),
        ({"action": "restore", "name": "config-policy"}, lambda c: c["memory"].get("deleted_at") is None),
    ]
    for args, ok in steps:
        result = await call_ok(session, schemas, "memory", args)
        check(ok(result.structured_content), f"memory {args}: {result.structured_content}")
    await call_error(session, "memory", {"action": "purge", "name": "config-policy"}, "invalid_input")
    await call_error(session, "memory", {"action": "read", "name": "no-such"}, "not_found")
    # Budgets: a long body is cut in the answer (never in the store), and says so.
    await call_ok(session, schemas, "remember", {"name": "long", "body": "word " * 40_000})
    for budget in (5_000, DEFAULT_MAX_CHARS):
        cut = await call_ok(session, schemas, "memory", {"action": "read", "name": "long", "max_chars": budget})
        check(size_of(cut) <= budget, f"{size_of(cut)} chars > {budget}")
        check(cut.structured_content["memory"]["body_truncated"] is True, cut.structured_content["memory"].keys())
    versions = await call_ok(session, schemas, "memory", {"action": "history", "name": "long", "max_chars": 5_000})
    check(size_of(versions) <= 5_000, f"history: {size_of(versions)} chars > 5000")


async def huge(session):
    await session.initialize()
    listed = await session.list_tools()
    schemas = {t.name: t.output_schema for t in listed.tools}
    # `__init__` names hundreds of definitions: answered (not an error) with candidates
    # in the structured content, most used first, valid against the output schema, in budget.
    init = await call_ok(session, schemas, "relations", {"target": "__init__", "direction": "callers"})
    candidates = init.structured_content["candidates"]
    check(len(candidates) > 1 and init.structured_content["relations"] == [], init.structured_content)
    check(init.structured_content["candidate_count"] > len(candidates) and not init.structured_content["page"].get("next_cursor"), init.structured_content)
    uses = [c["uses"] for c in candidates]
    check(uses == sorted(uses, reverse=True), f"not most used first: {uses[:20]}")
    check(init.content[0].text.startswith("`__init__` is ambiguous:"), init.content[0].text[:200])
    pick = await call_ok(session, schemas, "relations", {"target": candidates[0]["target"], "direction": "callers"})
    check(pick.structured_content["targets"], pick.structured_content)
    check(size_of(init) <= DEFAULT_MAX_CHARS, f"the ambiguity is {size_of(init)} chars")
    found = await call_ok(session, schemas, "find", {"pattern": "__init__", "limit": 10000})
    check(size_of(found) <= DEFAULT_MAX_CHARS, f"{size_of(found)} chars > {DEFAULT_MAX_CHARS}")
    check(found.structured_content["page"]["cut_by_budget"], found.structured_content["page"])
    # Callers three hops out of `warnings.warn`, called all over the library: hundreds
    # of items, far past the budget.
    target = "warn"
    result = await call_ok(session, schemas, "relations", {"target": target, "direction": "callers", "depth": 3, "limit": 10000})
    page = result.structured_content["page"]
    check(size_of(result) <= DEFAULT_MAX_CHARS, f"{size_of(result)} chars > {DEFAULT_MAX_CHARS}")
    check(page["cut_by_budget"] and page["more"] > 0 and page.get("next_cursor"), page)
    depths = [r["depth"] for r in result.structured_content["relations"]]
    check(depths == sorted(depths), "not nearest first")
    following = await call_ok(session, schemas, "relations", {"target": target, "direction": "callers", "depth": 3, "cursor": page["next_cursor"], "max_chars": "5000"})
    check(size_of(following) <= 5000, f"{size_of(following)} chars > 5000")
    first = result.structured_content["relations"]
    second = following.structured_content["relations"]
    check(second and second[0] != first[-1], "the cursor did not continue after the last item shown")
    check(following.structured_content["page"]["shown"] + page["shown"] + following.structured_content["page"]["more"] == page["total"], (page, following.structured_content["page"]))
    grep = await call_ok(session, schemas, "search", {"pattern": "self", "limit": 10000})
    check(size_of(grep) <= DEFAULT_MAX_CHARS and grep.structured_content["page"]["more"] > 0, grep.structured_content["page"])
    return {"total": page["total"], "shown": page["shown"], "chars": size_of(result)}


async def roots(session, root, shown=None):
    """Polls `status` until the session is bound to `root` (shown as `shown`)."""
    shown = shown or root
    await session.initialize()
    deadline = time.monotonic() + 30
    while True:
        result = await session.call_tool("status", {})
        ws = result.structured_content["workspace"]
        if ws == shown:
            return {"workspace": ws}
        check(time.monotonic() < deadline, f"bound to {ws}, not the client's root {shown}")
        await asyncio.sleep(0.05)


def roots_callback(root):
    async def answer(context):
        return types.ListRootsResult(roots=[types.Root(uri=pathlib.Path(root).as_uri(), name="ws")])

    return answer


def stdio(loci, *args, cwd=None):
    return stdio_client(StdioServerParameters(command=loci, args=["mcp", *args], cwd=cwd))


async def over_http(url, key, run, header=None, **session_args):
    headers = {"Authorization": f"Bearer {key}"}
    if header:
        headers["Loci-Workspace"] = header
    http = create_mcp_http_client(headers=headers)
    async with http:
        async with streamable_http_client(url, http_client=http) as (read, write):
            async with ClientSession(read, write, **session_args) as session:
                return await run(session)


async def sessions(url, key, root_a, root_b):
    """Two HTTP sessions on one server, each bound to its own client root."""
    # Over HTTP a workspace is shown by its folder name.
    name = lambda p: pathlib.Path(p).name
    a = await over_http(url, key, lambda s: roots(s, root_a, name(root_a)), list_roots_callback=roots_callback(root_a))
    b = await over_http(url, key, lambda s: roots(s, root_b, name(root_b)), list_roots_callback=roots_callback(root_b))
    return {"a": a, "b": b}


async def main(argv):
    mode = argv[0]
    if mode == "contract" and argv[1] == "stdio":
        async with stdio(argv[2], "--workspace", argv[3]) as (r, w):
            async with ClientSession(r, w) as s:
                out = await contract(s)
    elif mode == "contract" and argv[1] == "http":
        out = await over_http(argv[2], argv[3], contract, header=argv[4])
    elif mode == "huge":
        async with stdio(argv[1], "--workspace", argv[2]) as (r, w):
            async with ClientSession(r, w) as s:
                out = await huge(s)
    elif mode == "roots":
        async with stdio(argv[1], cwd="/") as (r, w):
            async with ClientSession(r, w, list_roots_callback=roots_callback(argv[2])) as s:
                out = await roots(s, argv[2])
    elif mode == "roots_change":
        current = {"root": argv[2]}

        async def answer(context):
            return types.ListRootsResult(roots=[types.Root(uri=pathlib.Path(current["root"]).as_uri())])

        async with stdio(argv[1], cwd="/") as (r, w):
            async with ClientSession(r, w, list_roots_callback=answer) as s:
                first = await roots(s, argv[2])
                current["root"] = argv[3]
                await s.send_roots_list_changed()
                deadline = time.monotonic() + 30
                while True:
                    result = await s.call_tool("status", {})
                    if result.structured_content["workspace"] == argv[3]:
                        break
                    check(time.monotonic() < deadline, f"still bound to {result.structured_content['workspace']}")
                    await asyncio.sleep(0.05)
                out = {"first": first["workspace"], "then": argv[3]}
    elif mode == "launch":
        spec = json.loads(argv[1])
        params = StdioServerParameters(command=spec["command"], args=spec.get("args", []), cwd=spec.get("cwd"))
        async with stdio_client(params) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                status = await s.call_tool("status", {})
                check(not status.is_error, status.content)
                out = {"workspace": status.structured_content["workspace"]}
    elif mode == "sessions":
        out = await sessions(argv[1], argv[2], argv[3], argv[4])
    else:
        raise SystemExit(f"unknown mode {argv}")
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1:]))
