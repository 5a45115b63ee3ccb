"""codegraph (npm `@colbymchenry/codegraph`) scored beside loci on the same targets,
function level only (its `callers --json` names calling definitions, not call sites).

Its npm package ships the platform bundle as an optional dependency from the same
registry; the launcher's GitHub fallback and its telemetry are switched off. Per target:
`codegraph callers NAME -p TREE -f PATH -l 10000 -j`; among the definitions it returns
the one in PATH whose start line is within the oracle's header +- 1 is taken (none:
`not_found`; loci gets no such choice: its selector must name one definition).
"""
import json
import os
import shutil
import subprocess

VERSION = "1.6.1"


def ensure(cache):
    d = os.path.join(cache, "codegraph")
    shim = os.path.join(d, "node_modules/@colbymchenry/codegraph/npm-shim.js")
    if not os.path.exists(shim):
        os.makedirs(d, exist_ok=True)
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund", "--prefix", d,
                        f"@colbymchenry/codegraph@{VERSION}"], check=True)
    return shim


def env(work):
    home = os.path.join(work, "codegraph-home")
    os.makedirs(home, exist_ok=True)
    return dict(os.environ, HOME=home, CODEGRAPH_NO_DOWNLOAD="1", CODEGRAPH_TELEMETRY="0")


def index(shim, e, tree, copy):
    shutil.copytree(tree, copy)
    subprocess.run(["node", shim, "init", copy], env=e, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, timeout=900)


def ask(shim, e, copy, t):
    """(callers [(path, line, kind)], error kind or None)."""
    r = subprocess.run(["node", shim, "callers", t["name"], "-p", copy, "-f", t["path"], "-l", "10000", "-j"],
                       env=e, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, timeout=120)
    try:
        answer = json.loads(r.stdout)
    except json.JSONDecodeError:
        return [], "not_found"
    for d in answer.get("definitions") or []:
        dd = d.get("definition") or {}
        if dd.get("filePath") == t["path"] and t["start"] - 1 <= dd.get("startLine", -1) <= t["name_line"] + 1:
            return sorted({(c["filePath"], c.get("startLine", 0), c.get("kind", "")) for c in d.get("callers") or []
                           if c.get("filePath")}), None
    return [], "not_found"
