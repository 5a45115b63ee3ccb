#!/usr/bin/env python3
"""Two more offline ideas for hybrid recall on the quality set (docs/performance.md,
eleventh session's "Memory recall quality"), on the evidence scripts/quality_offline.py
`features` writes:

  windows   each section cut into windows of at most W words at sentence ends, each
            window embedded by the same model; a memory ranks by its best window
            (vectors alone, and fused by session 9's best rule: both signals scored
            over the union of their top 200s, vectors 0.5, graph 1).
  learned   a learned fusion over the union of full text's and vectors' top 200: per
            candidate, its BM25 (relative and rank), best/first chunk and best window
            cosine (raw, relative to the list's best, rank), graph rank, lengths;
            logistic regression and gradient-boosted trees trained on the even-numbered
            (dev) queries, scored on the odd (held-out) ones.

    scripts/quality_learned.py windows SET W WINDOWS.jsonl
    target/release/examples/embed_texts MODELS CACHE < WINDOWS.jsonl    (~2.5 min for W 48)
    scripts/quality_learned.py eval SET CACHE FEATS.pkl DUMP WINDOWS.jsonl

CACHE is scripts/quality.sh's OUT/cache (it holds the queries' vectors already).

Needs numpy and scikit-learn. Prints recall@1/5/10, dev and held-out.
"""
import json, re, sys
import numpy as np


def windows(set_dir, w, out):
    """Writes {"id", "text"} lines: each section's windows of at most `w` words."""
    w = int(w)
    with open(out, "w") as f:
        for line in open(f"{set_dir}/corpus.jsonl"):
            v = json.loads(line)
            wins, cur = [], []
            for s in (s for s in re.split(r"(?<=[.!?:])\s+|\n+", v["text"]) if s.strip()):
                words = s.split()
                while len(words) > w:
                    if cur:
                        wins.append(cur)
                        cur = []
                    wins.append(words[:w])
                    words = words[w:]
                if cur and len(cur) + len(words) > w:
                    wins.append(cur)
                    cur = []
                cur += words
            if cur:
                wins.append(cur)
            for win in wins:
                f.write(json.dumps({"id": v["id"], "text": " ".join(win)}) + "\n")


def evaluate(set_dir, cache, feats, dump, wins_jsonl):
    sys.path.insert(0, __file__.rsplit("/", 1)[0])
    import quality_offline as qo
    from sklearn.ensemble import HistGradientBoostingClassifier
    from sklearn.linear_model import LogisticRegression

    qo.load(feats, dump)
    queries = [json.loads(l) for l in open(f"{set_dir}/queries.jsonl")]
    known = qo.read_cache(cache, qo.C.shape[1])
    wins = [json.loads(l) for l in open(wins_jsonl)]
    vecs = [qo.vector_of(known, w["text"]) for w in wins]
    if any(v is None for v in vecs):
        sys.exit(f"{sum(v is None for v in vecs)} windows have no vector in {cache}: run embed_texts first")
    V = np.stack(vecs)
    col_of = {n: i for i, n in enumerate(qo.names)}
    wcol = np.array([col_of[w["id"]] for w in wins])
    text_len = {json.loads(l)["id"]: len(json.loads(l)["text"]) for l in open(f"{set_dir}/corpus.jsonl")}
    mem_len = np.array([text_len[n] for n in qo.names])

    win_best = {}
    for qn, *_ in qo.feats:
        b = np.full(qo.M, -2.0, dtype=np.float32)
        np.maximum.at(b, wcol, V @ qo.d["qvecs"][qn])
        win_best[qn] = b
    alone = lambda qn, bm, sims: [qo.names[m] for m in qo.topk(win_best[qn], 10)]
    fused = qo.fusion(n_fts=200, n_vec=200, b=0.5, union_cos=True, union_bm=True, graph_w=1.0,
                      mem_of=win_best.get)
    for label, rule in [("windows, vectors alone", alone),
                        ("windows, fused (vectors 0.5, graph 1, union of both top 200s)", fused)]:
        print(f"{label}: dev", qo.run(rule, 0), "held-out", qo.run(rule, 1), flush=True)

    X, Y, G = [], [], []
    for qn, exp, bm, sims in qo.feats:
        sims = sims.astype(np.float32)
        best, first, win = qo.per_memory(sims, "best"), qo.per_memory(sims, "first"), win_best[qn]
        fts = sorted(bm.items(), key=lambda t: (t[1], t[0]))[:200]
        frank = {qo.midx[r]: i for i, (r, _) in enumerate(fts) if r in qo.midx}
        vtop = list(qo.topk(best, 200))
        vrank = {m: i for i, m in enumerate(vtop)}
        bmm = {qo.midx[r]: s for r, s in bm.items() if r in qo.midx}
        best_bm = fts[0][1] if fts else -1.0
        top, low = float(best[vtop[0]]), float(best[vtop[-1]])
        graph = qo.graph.get(qn, {})
        for m in sorted(set(frank) | set(vrank)):
            X.append([bmm.get(m, 0.0) / best_bm if best_bm < 0 else 0.0, np.log1p(frank.get(m, 400)),
                      m in frank, best[m], first[m], win[m], best[m] - top,
                      (best[m] - low) / (top - low + 1e-9), np.log1p(vrank.get(m, 400)),
                      1.0 / (10 + graph[qo.names[m]]) if qo.names[m] in graph else 0.0,
                      np.log(mem_len[m]), len(fts), len(queries[qn]["query"].split())])
            Y.append(qo.names[m] == exp)
            G.append(qn)
    X, Y, G = np.array(X, dtype=np.float32), np.array(Y), np.array(G)
    dev = G % 2 == 0
    n = {h: sum(1 for qn, *_ in qo.feats if qn % 2 == h) for h in (0, 1)}
    for label, model in [("logistic regression", LogisticRegression(max_iter=2000)),
                         ("gradient-boosted trees", HistGradientBoostingClassifier(
                             max_iter=300, learning_rate=0.05, max_leaf_nodes=31, random_state=0))]:
        model.fit(X[dev], Y[dev])
        p = model.predict_proba(X)[:, 1]
        res = {0: np.zeros(3), 1: np.zeros(3)}
        order = np.lexsort((-p, G))
        Gs, Ys = G[order], Y[order]
        starts = np.r_[0, np.nonzero(Gs[1:] != Gs[:-1])[0] + 1, len(Gs)]
        for a, b in zip(starts[:-1], starts[1:]):
            ys = Ys[a:b]
            if ys.any():
                r = int(np.argmax(ys))
                res[Gs[a] % 2] += [r < 1, r < 5, r < 10]
        print(f"learned fusion, {label}: dev", np.round(100 * res[0] / n[0], 1),
              "held-out", np.round(100 * res[1] / n[1], 1), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 5 and sys.argv[1] == "windows":
        windows(*sys.argv[2:])
    elif len(sys.argv) == 7 and sys.argv[1] == "eval":
        evaluate(*sys.argv[2:])
    else:
        sys.exit(__doc__)
