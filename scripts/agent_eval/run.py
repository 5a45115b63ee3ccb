"""The agent evaluation (issue #30): scripted tasks over MCP on a fresh copy of tokio,
scored against ground truth built without loci (truth.py). Run by scripts/agent-eval.sh:

    python3 -m agent_eval.run --bin BIN [--bin BIN2] [--label L ...] --out DIR   (from scripts/)

For each binary: copy the highest tokio-1.* of the cargo registry (its version must be
the ground truth's), `BIN index --json TREE`, start `BIN mcp --workspace TREE` with the
official MCP Python SDK and run every task in one session, in order (the edits of the
freshness and memory tasks come last). Writes DIR/results.json and DIR/results.md.
"""
import argparse
import asyncio
import glob
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time

from . import client, scoring, tasks
from .truth import crate_dirs

HERE = os.path.dirname(os.path.abspath(__file__))


class Ctx:
    def __init__(self, sess, truth, tree):
        self.sess, self.truth, self.tree = sess, truth, tree


def load_truth(version):
    path = os.path.join(HERE, f"truth-tokio-{version}.json")
    if not os.path.exists(path):
        have = sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "truth-tokio-*.json")))
        sys.exit(f"agent-eval: the tokio to copy is {version}, but the ground truth is for "
                 f"{', '.join(have) or 'nothing'}; build it with `python3 -m agent_eval.truth build` "
                 f"(from scripts/; needs a nightly toolchain) or pass --crate with the truth's version")
    with open(path) as f:
        truth = json.load(f)
    if truth["tokio_version"] != version:
        sys.exit(f"agent-eval: {path} says tokio {truth['tokio_version']}, not {version}")
    return truth, path


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


async def run_tasks(sess, truth, tree, log):
    ctx = Ctx(sess, truth, tree)
    out = []
    for t in tasks.TASKS:
        start = len(sess.ledger)
        t0 = time.monotonic()
        try:
            r = await t.run(ctx)
        except Exception as e:  # a policy's own failure is reported, not hidden
            r = {"score": 0.0, "details": {"exception": repr(e)}, "notes": [f"policy failed: {e!r}"]}
        calls = sess.ledger[start:]
        row = {"id": t.id, "question": t.question, "measures": t.measures,
               "score": r["score"], "precision": r.get("precision"),
               "calls": len(calls), "chars": sum(a.chars for a in calls),
               "errors": sum(1 for a in calls if a.is_error),
               "seconds": round(time.monotonic() - t0, 2),
               "notes": r.get("notes", []), "details": r.get("details", {}),
               "answers": [a.record() for a in calls]}
        log(f"  {t.id}: score {fmt(row['score'])}, {row['calls']} calls, {row['chars']} chars"
            + (f" ({'; '.join(row['notes'])})" if row["notes"] else ""))
        out.append(row)
    return out


def evaluate(binary, label, crate, truth, work, log):
    side = os.path.join(work, label)
    if os.path.exists(side):
        shutil.rmtree(side)
    tree, home = os.path.join(side, "tokio"), os.path.join(side, "home")
    shutil.copytree(crate, tree, symlinks=True)
    os.makedirs(home)
    env = client.server_env(home)
    version = subprocess.run([binary, "--version"], capture_output=True, text=True, env=env).stdout.strip()
    t0 = time.monotonic()
    idx = subprocess.run([binary, "index", "--json", tree], capture_output=True, text=True, env=env)
    index_s = time.monotonic() - t0
    if idx.returncode != 0:
        raise RuntimeError(f"{binary} index failed: {idx.stderr[-1000:]}")
    summary = json.loads(idx.stdout)
    log(f"{label}: {version}, indexed {summary.get('files_indexed')} files in {index_s:.1f} s")
    rows, tools_chars = asyncio.run(client.with_session(binary, tree, home,
                                                        lambda sess: run_tasks(sess, truth, tree, log)))
    return {"label": label, "binary": os.path.abspath(binary), "sha256": sha256(binary), "version": version,
            "index": {k: summary.get(k) for k in ("files_indexed", "symbols", "edges", "elapsed_ms")},
            "tools_list_chars": tools_chars, "tasks": rows, "totals": totals(rows)}


def totals(rows):
    return {"score_mean": scoring.mean([r["score"] for r in rows]),
            "calls": sum(r["calls"] for r in rows), "chars": sum(r["chars"] for r in rows),
            "errors": sum(r["errors"] for r in rows)}


def fmt(x, digits=2):
    return "—" if x is None else f"{x:.{digits}f}"


def markdown(result, truth_meta):
    lines = [f"### {result['label']}", "",
             f"`{result['version']}`, sha256 `{result['sha256'][:12]}`; tokio {truth_meta['tokio_version']}: "
             f"{result['index']['files_indexed']} files indexed; tools/list {result['tools_list_chars']} characters "
             f"(not counted below).", "",
             "| task | correctness | precision | calls | characters | notes |", "|---|---:|---:|---:|---:|---|"]
    for r in result["tasks"]:
        lines.append(f"| {r['id']} | {fmt(r['score'])} | {fmt(r['precision'])} | {r['calls']} | {r['chars']:,} | "
                     f"{'; '.join(r['notes']).replace('|', '/')} |")
    t = result["totals"]
    lines.append(f"| **total** | **{fmt(t['score_mean'])}** (mean) | | **{t['calls']}** | **{t['chars']:,}** | "
                 f"{t['errors']} error answers |")
    return "\n".join(lines)


def comparison(a, b):
    lines = [f"### {a['label']} → {b['label']}", "",
             f"| task | correctness {a['label']} | correctness {b['label']} | precision | calls | characters |",
             "|---|---:|---:|---:|---:|---:|"]
    for x, y in zip(a["tasks"], b["tasks"]):
        prec = "" if x["precision"] is None and y["precision"] is None else \
            f"{fmt(x['precision'])} → {fmt(y['precision'])}"
        lines.append(f"| {x['id']} | {fmt(x['score'])} | {fmt(y['score'])} | {prec} | {x['calls']} → {y['calls']} | "
                     f"{x['chars']:,} → {y['chars']:,} |")
    ta, tb = a["totals"], b["totals"]
    lines.append(f"| **total** | **{fmt(ta['score_mean'])}** | **{fmt(tb['score_mean'])}** | | "
                 f"**{ta['calls']} → {tb['calls']}** | **{ta['chars']:,} → {tb['chars']:,}** |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(prog="agent_eval.run")
    ap.add_argument("--bin", action="append", required=True, help="a loci binary (once or twice)")
    ap.add_argument("--label", action="append", default=[], help="a name for each --bin, in order")
    ap.add_argument("--out", default="target/agent-eval")
    ap.add_argument("--crate", help="the tokio crate directory (default: the registry's highest tokio-1.*)")
    a = ap.parse_args()
    crate = os.path.abspath(a.crate or crate_dirs()[-1])
    version = crate.rsplit("-", 1)[1]
    truth, truth_path = load_truth(version)
    os.makedirs(a.out, exist_ok=True)
    work = os.path.join(a.out, "work")
    labels = a.label + [os.path.basename(b) for b in a.bin[len(a.label):]]
    if len(set(labels)) != len(labels):
        sys.exit("agent-eval: give each binary its own --label")
    log = lambda m: print(m, flush=True)  # noqa: E731
    log(f"tokio {version} ({crate}); ground truth {os.path.relpath(truth_path)}")
    results = [evaluate(b, l, crate, truth, work, log) for b, l in zip(a.bin, labels)]
    meta = {"tokio_version": version, "crate": os.path.basename(crate), "truth": os.path.basename(truth_path),
            "built_with": truth["built_with"]}
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    md = ["# Agent evaluation", "",
          f"tokio {version} from the cargo registry; ground truth `{meta['truth']}` (scripts/agent_eval/truth.py).", ""]
    if len(results) == 2:
        md += [comparison(results[0], results[1]), ""]
    for r in results:
        md += [markdown(r, meta), ""]
    md += ["Tasks:", ""] + [f"- `{t.id}`: {t.question} — {t.measures}" for t in tasks.TASKS] + [""]
    with open(os.path.join(a.out, "results.md"), "w") as f:
        f.write("\n".join(md))
    log(f"wrote {os.path.join(a.out, 'results.md')} and results.json")
    for r in results:
        t = r["totals"]
        log(f"{r['label']}: correctness {fmt(t['score_mean'])}, {t['calls']} calls, {t['chars']:,} characters")


if __name__ == "__main__":
    main()
