"""One MCP session over stdio with the official Python SDK, counting what an agent pays:
tool calls and the characters of every answer (text plus structured content as compact
JSON). A policy sees an answer's text and structured content only: hosts hand those to
the model, not `_meta`."""
import asyncio
import json
import os
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

from . import scoring

CALL_TIMEOUT_S = 120


class Answer:
    def __init__(self, tool, args, is_error, text, structured, ms):
        self.tool, self.args, self.is_error, self.text, self.structured, self.ms = tool, dict(args), is_error, text, structured, ms
        self.chars = scoring.answer_chars(text, structured)

    @property
    def sc(self):
        return self.structured or {}

    @property
    def error_kind(self):
        return scoring.error_kind(self.text) if self.is_error else None

    def record(self, keep_chars=2000):
        """What the results file keeps of the answer (its text cut to `keep_chars`)."""
        return {"tool": self.tool, "args": self.args, "is_error": self.is_error, "chars": self.chars,
                "ms": round(self.ms, 1), "text": self.text[:keep_chars] + ("…" if len(self.text) > keep_chars else "")}


class Session:
    """Tools offered (name -> tools/list entry), and a ledger of calls per task."""

    def __init__(self, session, tools):
        self.session = session
        self.tools = {t.name: t for t in tools}
        self.ledger = []

    def offers(self, tool, arg=None):
        t = self.tools.get(tool)
        if t is None:
            return False
        return arg is None or arg in ((t.input_schema or {}).get("properties") or {})

    def describes(self, tool, phrase):
        t = self.tools.get(tool)
        return t is not None and phrase.lower() in (t.description or "").lower()

    def arg_enum(self, tool, arg):
        t = self.tools.get(tool)
        p = ((t.input_schema or {}).get("properties") or {}).get(arg) if t else None
        return (p or {}).get("enum") or []

    async def call(self, tool, args, counted=True):
        """One tools/call. A tool the server does not offer, a protocol error or a timeout
        is an error answer like any other (the task scores it)."""
        start = time.monotonic()
        if tool not in self.tools:
            a = Answer(tool, args, True, f"not_offered: the server offers no `{tool}` tool", None, 0)
        else:
            try:
                r = await asyncio.wait_for(self.session.call_tool(tool, args), CALL_TIMEOUT_S)
                text = "".join(c.text for c in r.content if getattr(c, "text", None) is not None)
                a = Answer(tool, args, bool(r.is_error), text, r.structured_content,
                           (time.monotonic() - start) * 1000)
            except asyncio.TimeoutError:
                a = Answer(tool, args, True, f"timeout: no answer in {CALL_TIMEOUT_S} s", None,
                           (time.monotonic() - start) * 1000)
            except Exception as e:  # a protocol error (-32602 ...) reaches the agent as a failure
                a = Answer(tool, args, True, f"protocol_error: {e}", None, (time.monotonic() - start) * 1000)
        if counted:
            self.ledger.append(a)
        return a


def server_env(home):
    env = dict(os.environ, LOCI_HOME=home, XDG_CONFIG_HOME=os.path.join(home, "xdg"))
    for var in ("LOCI_LOG", "LOCI_SESSION_ID", "LOCI_API_KEY"):
        env.pop(var, None)
    return env


async def with_session(binary, tree, home, body):
    """Starts `BINARY mcp --workspace TREE`, initializes, lists the tools and runs
    `await body(Session)`; returns its result and the tools/list size."""
    params = StdioServerParameters(command=binary, args=["mcp", "--workspace", tree], env=server_env(home))
    errlog = open(os.path.join(home, "mcp-stderr.log"), "w")
    try:
        async with stdio_client(params, errlog=errlog) as (r, w):
            async with ClientSession(r, w) as s:
                await s.initialize()
                listed = await s.list_tools()
                tools_chars = len(json.dumps([t.model_dump(mode="json", by_alias=True, exclude_none=True)
                                              for t in listed.tools], separators=(",", ":"), ensure_ascii=False))
                sess = Session(s, listed.tools)
                return await body(sess), tools_chars
    finally:
        errlog.close()
