#!/usr/bin/env python3
"""Tunes recall's fusion offline, on the half of the quality set it may see.

Input: the set (scripts/quality_set.py's OUT: queries.jsonl) and a dump of every
candidate of every signal for every query, made by the memory's real recall:

    python3 -c 'import json,sys; [print(json.dumps({"n": n, "query": json.loads(l)["query"]})) for n, l in enumerate(open(sys.argv[1]))]' \\
        SET/queries.jsonl > queries.in
    LOCI_EVAL_CORPUS=SET/corpus.jsonl LOCI_EVAL_K=1000 \\
        target/release/examples/memory_recall --signals hybrid --why \\
        --models MODELS --cache OUT/cache < queries.in > dump.jsonl

Each hit of the dump carries its rank and score in each signal (full text: BM25,
lower is better; vectors: cosine distance; graph: path weight), so a fusion rule can be
replayed without the store. This grids two families on the even-numbered queries (the
dev half; a query's "half" when queries.jsonl gives one, as scripts/quality_questions.py
does) and prints, for the best few, recall@1/5/10 on the dev half, the odd half (held
out) and the whole set (with --tune-only, the dev half alone), then the same for the
fusion before and the one crates/memory/src/fusion.rs runs now:
  rrf   sum of w / (k + rank), weights for vectors and graph (full text 1)
  score full text's BM25 / the best hit's BM25, plus b x the vector similarity scaled
        between the list's worst and best, plus c / (10 + graph rank)
          (what crates/memory/src/fusion.rs does, with b = 0.5, c = 1)

Usage: scripts/quality_fusion.py SET DUMP [--tune-only]
"""
import json
import sys


def load(set_dir, dump):
    """The expected memory of each query, whether it is held out (its "half", else an
    odd line number), and the dump's rows by query number."""
    queries = [json.loads(l) for l in open(f"{set_dir}/queries.jsonl")]
    expected = [q["expected"] for q in queries]
    held = [q["half"] == "held-out" if "half" in q else n % 2 == 1
            for n, q in enumerate(queries)]
    rows = []
    for line in open(dump):
        v = json.loads(line)
        rows.append((v["n"], v["why"]))
    rows.sort(key=lambda r: r[0])
    return (expected, held), rows


def evaluate(rule, labels, rows, half=None):
    expected, held = labels
    found, n = [0, 0, 0], 0
    for qn, why in rows:
        if half is not None and held[qn] != bool(half):
            continue
        n += 1
        ranked = rule(why)[:10]
        if expected[qn] in ranked:
            r = ranked.index(expected[qn])
            for i, k in enumerate((1, 5, 10)):
                found[i] += r < k
    return [round(100 * f / max(n, 1), 1) for f in found]


def rrf(k, wv, wg):
    def rule(why):
        def s(h):
            x = 1 / (k + h["fts"]) if h["fts"] else 0
            x += wv / (k + h["vector"]) if h["vector"] else 0
            x += wg / (k + h["graph"]) if h["graph"] else 0
            return x
        return [h["id"] for h in sorted(why, key=lambda h: (-s(h), h["id"]))]
    return rule


def score(b, c):
    def rule(why):
        bm25 = [h["scores"][0] for h in why if h["scores"][0] is not None]
        sims = [1 - h["scores"][1] for h in why if h["scores"][1] is not None]
        best = min(bm25) if bm25 else -1.0
        top, low = (max(sims), min(sims)) if sims else (1.0, 0.0)

        def s(h):
            x = h["scores"][0] / best if h["scores"][0] is not None and best < 0 else 0
            if h["scores"][1] is not None:
                x += b * ((1 - h["scores"][1] - low) / (top - low) if top > low else 1)
            x += c / (10 + h["graph"]) if h["graph"] else 0
            return x
        return [h["id"] for h in sorted(why, key=lambda h: (-s(h), h["id"]))]
    return rule


def main():
    args = [a for a in sys.argv[1:] if a != "--tune-only"]
    tune_only = len(args) < len(sys.argv) - 1
    if len(args) != 2:
        sys.exit(__doc__)
    expected, rows = load(args[0], args[1])
    grid = [(f"rrf k={k} vectors={wv} graph={wg}", rrf(k, wv, wg))
            for k in (1, 2, 5, 10, 20, 60) for wv in (0.5, 0.75, 1, 1.5) for wg in (0, 0.25, 0.5, 1)]
    grid += [(f"score vectors={b} graph={c}", score(b, c))
             for b in (0.25, 0.4, 0.5, 0.6, 0.75, 1, 1.5, 2, 3) for c in (0, 0.5, 1, 1.5)]
    dev = sorted(((evaluate(r, expected, rows, 0), name, r) for name, r in grid),
                 key=lambda t: -t[0][1])
    shown = dev[:8] + [(evaluate(r, expected, rows, 0), name, r) for name, r in (
        ("rrf k=10 vectors=1 graph=0.5 (the fusion before)", rrf(10, 1, 0.5)),
        ("score vectors=0.5 graph=1 (fusion.rs now)", score(0.5, 1)),
    )]
    if tune_only:
        print("| rule | dev @1/@5/@10 |")
        print("|---|---|")
        for d, name, _ in shown:
            print(f"| {name} | {'/'.join(map(str, d))} |")
        return
    print("| rule | dev @1/@5/@10 | held-out @1/@5/@10 | whole @1/@5/@10 |")
    print("|---|---|---|---|")
    for d, name, rule in shown:
        held = evaluate(rule, expected, rows, 1)
        whole = evaluate(rule, expected, rows)
        print(f"| {name} | {'/'.join(map(str, d))} | {'/'.join(map(str, held))} | {'/'.join(map(str, whole))} |")


if __name__ == "__main__":
    main()
