"""Scores `loci callers --json` against callers derived from precise indexers.

Usage (see scripts/accuracy-oracle.sh): python3 -m accuracy_oracle.run --loci BIN
  [--seed N] [--langs ts,py,rust,c,cpp,go,java,kotlin,cs,php,ruby,swift] [--repos N] [--per-repo N] [--out DIR] [--keep]
  [--codegraph]
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

from . import (c_clang, codegraph, cpp_clang, cs_mono, go_types, handlabel, java_javac, kotlin_bytecode, oracle, pools,
               rust_thir, scoring)

HERE = os.path.dirname(os.path.abspath(__file__))
LANG_NAMES = {"ts": "TypeScript/JavaScript", "py": "Python", "rust": "Rust", "c": "C", "cpp": "C++", "go": "Go", "java": "Java",
              "kotlin": "Kotlin", "cs": "C#", "php": "PHP", "ruby": "Ruby", "swift": "Swift"}
HAND_LABELLED = ("php", "ruby", "swift")  # their entries and targets are drawn once, in labels/LANG/candidates.json


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def draw(lang, seed):
    if lang in HAND_LABELLED:  # already drawn with this seed, in order
        return handlabel.drawn_entries(lang, seed)
    listed = {"ts": pools.NPM, "py": pools.PYPI, "rust": pools.RUST, "c": pools.C, "cpp": pools.CPP}
    computed = {"go": go_types.pool, "java": java_javac.pool, "kotlin": kotlin_bytecode.pool, "cs": cs_mono.pool}
    pool = list(listed[lang] if lang in listed else computed[lang]())
    random.Random(f"{seed}:{lang}").shuffle(pool)
    return pool


def cpp_root(cache, spec):
    """The source folder of a C++ pool entry: `sdist:NAME==VERSION` or `deb:FOLDER`."""
    kind, what = spec.split(":", 1)
    if kind == "deb":
        if not os.path.isdir(what):
            raise RuntimeError(f"{what} is missing: install the Debian package that ships it")
        return what
    unpacked = c_clang.fetch_sdist(cache, what)
    return os.path.join(unpacked, os.listdir(unpacked)[0])


def cpp_includes_of(cache):
    """Headers C++ extension modules include from elsewhere: pybind11's and cppy's (from
    their sdists) and googletest's (a project's own tests include it)."""
    out = [os.path.join(cpp_root(cache, f"sdist:{pools.PYBIND11}"), "include"),
           os.path.join(cpp_root(cache, f"sdist:{pools.CPPY}"), "cppy", "include")]
    return out + [d for d in ("/usr/src/googletest/googletest/include", "/usr/src/googletest/googlemock/include")
                  if os.path.isdir(d)]


def loci_json(loci, env, args):
    r = subprocess.run([loci] + args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        return json.loads(r.stdout) if r.stdout.strip() else {"error": {"kind": f"exit {r.returncode}",
                                                                         "message": r.stderr[-500:]}}
    except json.JSONDecodeError:
        return {"error": {"kind": f"exit {r.returncode}", "message": r.stdout[-500:]}}


def selectors(t):
    """Selectors naming the target's definition, most specific first: the file and the
    qualified name (every enclosing definition), the file and class-less name, the file
    and line (each tried when the one before is not found or ambiguous)."""
    full = ".".join(t["chain"] + [t["name"]])
    if t.get("overloaded"):  # one overload: by its arity, else by its line
        return ([f"{t['path']}:{full}/{t['arity']}"] if t.get("arity") else []) + [
            f"{t['path']}:{t['start']}", f"{t['path']}:{t['name_line']}"]
    out = [f"{t['path']}:{full}"]
    if t["chain"]:
        out.append(f"{t['path']}:{t['name']}")
    # Two definitions of one name that the oracle does not count as overloads (Kotlin
    # extensions of different receivers, `#if` alternatives): by the line, as loci's
    # `ambiguous` hint says.
    return out + [f"{t['path']}:{t['start']}"]


def holds(sym, t):
    """Whether loci's symbol is the target started earlier: same name, its span holding
    the target's start and name line (a TypeScript function with overload signatures
    starts at its first one)."""
    return (sym.get("name") == t["name"] and sym.get("line", 1 << 30) <= t["start"]
            and sym.get("end_line", 0) >= t["name_line"])


def ask_loci(loci, env, tree, t):
    """(callers [(path, line, kind)], sites [(path, line)], error kind or None, selector).
    Callers are the depth-1 nodes of `loci callers`; sites are the CALLS rows of
    `loci refs` with the same selector (`callers` gives one site per caller)."""
    answer, sel = None, None
    for sel in selectors(t):
        answer = loci_json(loci, env, ["callers", sel, "--depth", "1", "--json", "--limit", "10000", "-w", tree])
        err = answer.get("error")
        # An ambiguous selector (overloads of one arity) is named by its line next, as
        # loci's hint says.
        if not err or err.get("kind") not in ("not_found", "ambiguous"):
            break
    err = answer.get("error")
    if err:
        return [], [], err.get("kind", "error"), sel
    syms = answer.get("target_symbols") or []
    if len(syms) != 1 or syms[0].get("path") != t["path"] or not (
            t["start"] - 1 <= syms[0].get("line", -1) <= t["name_line"] + 1 or holds(syms[0], t)):
        return [], [], "other_definition", sel
    callers = set()
    for r in answer.get("reached", []):
        if r.get("depth") == 1:
            sym = r.get("symbol")
            callers.add((r["path"], r["line"], sym.get("kind", ""), sym.get("end_line", 0), sym.get("name", ""))
                        if sym else (r["path"], 0, ""))
    refs = loci_json(loci, env, ["refs", sel, "--json", "--limit", "10000", "-w", tree])
    sites = {(r["path"], r["line"]) for r in refs.get("refs", []) if r.get("edge") == "CALLS"}
    return sorted(callers), sorted(sites), None, sel


def source_line(tree, path, line):
    try:
        with open(os.path.join(tree, path), encoding="utf-8", errors="replace") as f:
            return f.read().split("\n")[line - 1].strip()[:160]
    except (OSError, IndexError):
        return ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", required=True)
    ap.add_argument("--seed", type=int, default=29)
    # Swift joins the default once its hand labels are reconciled (labels/swift/labels.json).
    swift = ",swift" if os.path.exists(os.path.join(HERE, "labels", "swift", "labels.json")) else ""
    ap.add_argument("--langs", default="ts,py,rust,c,cpp,go,java,kotlin,cs,php,ruby" + swift)
    ap.add_argument("--repos", type=int, default=3, help="repositories per language")
    ap.add_argument("--per-repo", type=int, default=100, help="targets sampled per repository")
    ap.add_argument("--min-targets", type=int, default=200,
                    help="draw more repositories until a language has this many targets")
    ap.add_argument("--out", default="accuracy-oracle-out")
    ap.add_argument("--cache", default=os.environ.get("LOCI_ACCURACY_CACHE",
                                                       os.path.expanduser("~/.cache/loci-accuracy")))
    ap.add_argument("--keep", action="store_true", help="keep the trees and indexes in OUT/work")
    ap.add_argument("--codegraph", action="store_true", help="also score codegraph (npm) on the same targets")
    a = ap.parse_args()
    started = time.time()
    loci = os.path.abspath(a.loci)
    os.makedirs(a.out, exist_ok=True)
    work = os.path.join(os.path.abspath(a.out), "work") if a.keep else tempfile.mkdtemp(prefix="loci-oracle-")
    if a.keep and os.path.isdir(work):
        shutil.rmtree(work)
    os.makedirs(work, exist_ok=True)
    tools = oracle.ensure_tools(a.cache)
    cg = codegraph.ensure(a.cache) if a.codegraph else None
    cg_env = codegraph.env(work) if cg else None
    pylib = oracle.ensure_pylib(a.cache) if "rust" in a.langs.split(",") else None
    go_bin = go_types.ensure(a.cache) if "go" in a.langs.split(",") else None
    cpp_includes = cpp_includes_of(a.cache) if "cpp" in a.langs.split(",") else ()
    env = dict(os.environ, LOCI_HOME=os.path.join(work, "loci-home"))
    loci_version = subprocess.run([loci, "--version"], stdout=subprocess.PIPE, text=True).stdout.strip()
    results = {"seed": a.seed, "loci": loci_version, "tools": oracle.tool_versions(tools),
               "repos_per_lang": a.repos, "per_repo": a.per_repo, "repos": [], "targets": []}
    for lang in a.langs.split(","):
        picked, sampled = 0, 0
        for spec in draw(lang, a.seed):
            if lang not in HAND_LABELLED and picked >= a.repos and sampled >= a.min_targets:
                break
            slug = spec.replace("/", "+").replace("@", "_").replace("==", "_").replace(":", "_")
            tree = os.path.join(work, lang, slug, "tree")
            os.makedirs(tree)
            repo = {"lang": lang, "repo": spec}
            t0 = time.time()
            try:
                if lang == "ts":
                    mode, why = oracle.prepare_npm_tree(oracle.fetch_npm(a.cache, spec), spec, tree)
                elif lang == "py":
                    mode, why = oracle.prepare_pypi_tree(oracle.fetch_pypi(a.cache, spec), tree)
                elif lang == "c":
                    if spec.startswith("crate:"):
                        _, crate, folder = spec.split(":", 2)
                        root = os.path.join(rust_thir.fetch(crate, work), folder)
                    else:
                        unpacked = c_clang.fetch_sdist(a.cache, spec.split(":", 1)[1])
                        root = os.path.join(unpacked, os.listdir(unpacked)[0])
                    mode, why = c_clang.prepare(root, tree)
                elif lang == "cpp":
                    cpp_source = cpp_root(a.cache, spec)
                    mode, why = cpp_clang.prepare(cpp_source, tree)
                elif lang == "go":
                    mode, why = go_types.prepare(spec, tree)
                elif lang == "java":
                    mode, why = java_javac.prepare(spec, tree)
                elif lang == "kotlin":
                    mode, why = kotlin_bytecode.prepare(spec, tree, a.cache)
                elif lang == "cs":
                    mode, why = cs_mono.prepare(spec, tree)
                elif lang in HAND_LABELLED:
                    mode, why = handlabel.prepare(spec, tree)
                else:
                    mode, why = rust_thir.prepare(rust_thir.fetch(spec, work), os.path.join(work, lang, slug, "build"), tree)
            except Exception as e:  # a package that cannot be fetched is passed over, and said
                mode, why = None, f"fetch failed: {e}"
            if mode is None:
                log(f"{lang}: skip {spec}: {why}")
                results["repos"].append(dict(repo, skipped=why))
                shutil.rmtree(os.path.dirname(tree))
                continue
            log(f"{lang}: {spec}: {why} {mode} files; indexing ...")
            try:
                if lang == "c":
                    all_targets, compiled = c_clang.build_targets(tree)
                    ndocs = why
                elif lang == "cpp":
                    all_targets, compiled = cpp_clang.build_targets(tree, cpp_source, cpp_includes, log)
                    ndocs = why
                elif lang == "go":
                    all_targets, compiled = go_types.build_targets(go_bin, spec)
                    ndocs = why
                elif lang == "java":
                    all_targets, compiled = java_javac.build_targets(spec, tree)
                    ndocs = why
                elif lang == "kotlin":
                    all_targets, compiled = kotlin_bytecode.build_targets(spec, tree, a.cache)
                    ndocs = why
                elif lang == "cs":
                    all_targets, compiled = cs_mono.build_targets(spec, tree)
                    ndocs = why
                elif lang in HAND_LABELLED:
                    all_targets, compiled = handlabel.build_targets(spec, tree)
                    ndocs = why
                elif lang == "rust":
                    dump = os.path.join(work, lang, slug, "thir.txt")
                    features = rust_thir.thir(os.path.join(work, lang, slug, "build"),
                                              os.path.join(work, "cargo-target"), dump)
                    mode = f"rust, {features}"
                    all_targets, compiled = rust_thir.build_targets(dump, tree, rust_thir.parser(pylib))
                    ndocs = why
                else:
                    index = os.path.join(work, lang, slug, "index.scip")
                    oracle.scip_index(tools, mode, tree, index, spec.split("==")[0])
                    docs = oracle.scip_docs(tools, index, tree, mode, HERE)
                    if os.path.exists(os.path.join(tree, "tsconfig.json")):
                        os.remove(os.path.join(tree, "tsconfig.json"))
                    all_targets = oracle.build(docs, tree, lang)
                    ndocs = len(docs)
            except Exception as e:
                log(f"{lang}: skip {spec}: indexer failed: {e}")
                results["repos"].append(dict(repo, skipped=f"indexer failed: {str(e)[:300]}"))
                continue
            rng = random.Random(f"{a.seed}:{lang}:{spec}")
            sample = rng.sample(all_targets, min(a.per_repo, len(all_targets)))
            sample.sort(key=lambda t: (t["path"], t["name_line"], t["name"]))
            t1 = time.time()
            subprocess.run([loci, "index", "--index-path", os.path.join(work, lang, slug, "loci.db"), tree],
                           env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
            t2 = time.time()
            cg_tree = os.path.join(work, lang, slug, "codegraph-tree")
            if cg:
                try:
                    codegraph.index(cg, cg_env, tree, cg_tree)
                except Exception as e:  # its answers are then all errors
                    log(f"{lang}: {spec}: codegraph index failed: {e}")
            for t in sample:
                callers, sites, err, sel = ask_loci(loci, env, tree, t)
                if lang in ("rust", "c", "cpp", "go"):  # only what the compiler saw is scored
                    callers = [c for c in callers if c[1] == 0 or rust_thir.in_compiled(compiled, c[0], c[1])]
                    sites = [x for x in sites if rust_thir.in_compiled(compiled, x[0], x[1])]
                if t.get("disputed"):  # lines the two labellers did not agree on are not scored
                    disputed = {tuple(d) for d in t["disputed"]}
                    sites = [x for x in sites if tuple(x) not in disputed]
                score = (scoring.error_score(t["callers"], t["sites"], t["member_sites"]) if err
                         else scoring.score_target(t["callers"], t["sites"], callers, sites, t["member_sites"]))
                half = scoring.half(lang, spec, t)
                texts = {}
                if half == "tune":  # the source lines of the tune half's misses, for reading
                    for p, l in score["missed_sites"] + score["extra_sites"]:
                        texts[f"{p}:{l}"] = source_line(tree, p, l)
                row = dict(t, lang=lang, repo=spec, half=half, selector=sel, error=err,
                           loci_callers=callers, loci_sites=sites, score=score, texts=texts)
                if cg:
                    cg_callers, cg_err = codegraph.ask(cg, cg_env, cg_tree, t)
                    if lang in ("rust", "c", "cpp", "go"):
                        cg_callers = [c for c in cg_callers if rust_thir.in_compiled(compiled, c[0], c[1])]
                    row["codegraph"] = {"error": cg_err, "callers": cg_callers, "score": (
                        scoring.error_score(t["callers"], t["sites"]) if cg_err
                        else scoring.score_target(t["callers"], t["sites"], cg_callers, []))}
                results["targets"].append(row)
            t3 = time.time()
            picked += 1
            sampled += len(sample)
            results["repos"].append(dict(repo, mode=mode, files=why, documents=ndocs,
                                         eligible=len(all_targets), sampled=len(sample),
                                         seconds={"oracle": round(t1 - t0, 1), "loci_index": round(t2 - t1, 1),
                                                  "loci_callers": round(t3 - t2, 1)}))
            log(f"{lang}: {spec}: {len(all_targets)} targets with a caller, {len(sample)} sampled, "
                f"oracle {t1 - t0:.0f}s, loci {t3 - t1:.0f}s")
    results["seconds"] = round(time.time() - started, 1)
    write(results, a.out)
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)


def fmt(x):
    return "—" if x is None else f"{x:.3f}"


def table(results):
    rows = results["targets"]
    out = ["| language | repository | half | targets | errors | empty | fn recall | fn precision | site recall | site precision | `x.f()` site recall (targets) |",
           "|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]

    def line(lang, repo, half, group):
        s = scoring.aggregate(group)
        errs = str(s["errors"]) + (" (" + ", ".join(f"{k} {v}" for k, v in s["error_kinds"].items()) + ")"
                                   if s["errors"] else "")
        out.append(f"| {lang} | {repo} | {half} | {s['targets']} | {errs} | {s['empty_answers']} | "
                   f"{fmt(s['fn_recall'])} | {fmt(s['fn_precision'])} | {fmt(s['site_recall'])} | {fmt(s['site_precision'])} | "
                   f"{fmt(s['member_site_recall'])} ({s['member_targets']}) |")
    langs = sorted({r["lang"] for r in rows}, key=lambda l: list(LANG_NAMES).index(l))
    for lang in langs:
        for half in ("tune", "heldout"):
            line(f"**{LANG_NAMES[lang]}**", "all", half, [r for r in rows if r["lang"] == lang and r["half"] == half])
    for lang in langs:
        for repo in sorted({r["repo"] for r in rows if r["lang"] == lang}):
            for half in ("tune", "heldout"):
                line(LANG_NAMES[lang], repo, half,
                     [r for r in rows if r["lang"] == lang and r["repo"] == repo and r["half"] == half])
    if any("codegraph" in r for r in rows):
        out += ["", "Function level, the same targets: loci beside codegraph "
                f"(`@colbymchenry/codegraph@{codegraph.VERSION}`).", "",
                "| language | half | targets | loci errors | loci fn recall | loci fn precision | codegraph errors | codegraph empty | codegraph fn recall | codegraph fn precision |",
                "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for lang in langs:
            for half in ("tune", "heldout"):
                group = [r for r in rows if r["lang"] == lang and r["half"] == half and "codegraph" in r]
                s = scoring.aggregate(group)
                c = scoring.aggregate([{"score": r["codegraph"]["score"], "error": r["codegraph"]["error"]} for r in group])
                out.append(f"| {LANG_NAMES[lang]} | {half} | {s['targets']} | {s['errors']} | {fmt(s['fn_recall'])} | "
                           f"{fmt(s['fn_precision'])} | {c['errors']} | {c['empty_answers']} | {fmt(c['fn_recall'])} | "
                           f"{fmt(c['fn_precision'])} |")
    return "\n".join(out)


def write(results, out):
    for lang in sorted({r["lang"] for r in results["targets"]}):
        for half in ("tune", "heldout"):
            results.setdefault("summary", {})[f"{lang}/{half}"] = scoring.aggregate(
                [r for r in results["targets"] if r["lang"] == lang and r["half"] == half])
    # Held-out targets keep only their scores: no one reads their misses.
    public = dict(results, targets=[t if t["half"] == "tune" else
                                    {k: t[k] for k in ("lang", "repo", "half", "error")} | ({
                                        "codegraph": {"error": t["codegraph"]["error"], "score": {
                                            k: t["codegraph"]["score"][k] for k in ("fn_recall", "fn_precision")}}}
                                        if "codegraph" in t else {}) | {
                                        "score": {k: v for k, v in t["score"].items()
                                                  if k in ("fn_recall", "fn_precision", "site_recall", "site_precision",
                                                           "member_site_recall")}}
                                    for t in results["targets"]])
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(public, f, indent=1, default=list)
    md = [f"seed {results['seed']}; {results['loci']}; tools: " +
          ", ".join(f"{k} {v}" for k, v in results["tools"].items()), "", table(results), "",
          "| language | repository | files | eligible targets | sampled | skipped because |", "|---|---|---|---:|---:|---|"]
    for r in results["repos"]:
        md.append(f"| {r['lang']} | {r['repo']} | {r.get('files', '')} {r.get('mode', '')} | {r.get('eligible', '')} | "
                  f"{r.get('sampled', '')} | {r.get('skipped', '')} |")
    md += ["", f"harness run time: {results['seconds']:.0f} s"]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md) + "\n")
    with open(os.path.join(out, "tune-misses.txt"), "w") as f:
        for t in results["targets"]:
            if t["half"] != "tune":
                continue
            s = t["score"]
            if t["error"] or s["missed_callers"] or s["extra_callers"] or s["missed_sites"] or s["extra_sites"]:
                f.write(f"== {t['lang']} {t['repo']} {t['path']}:{t['name_line']} {'.'.join(t['chain'] + [t['name']])}"
                        f"  selector {t['selector']}  error {t['error']}\n")
                for c in s["missed_callers"]:
                    f.write(f"  missed caller {c[0]}:{c[2]} {c[3] if len(c) > 3 else ''}\n")
                for c in s["extra_callers"]:
                    f.write(f"  extra caller  {c[0]}:{c[1]}\n")
                for c in s["missed_sites"]:
                    f.write(f"  missed site   {c[0]}:{c[1]}\t{t['texts'].get(f'{c[0]}:{c[1]}', '')}\n")
                for c in s["extra_sites"]:
                    f.write(f"  extra site    {c[0]}:{c[1]}\t{t['texts'].get(f'{c[0]}:{c[1]}', '')}\n")
    print("\n".join(md))


if __name__ == "__main__":
    main()
