#!/usr/bin/env python3
"""Replays fusion ideas offline on the quality set with evidence the real recall does not
compute today: every memory's exact per-word BM25 sum (fts.rs's rule without its posting
budget) and every chunk's cosine to the query, from the store and the vector cache that
scripts/quality.sh filled (OUT/cache). Used for docs/performance.md's ninth-session
"Memory recall quality": union scoring, chunk aggregation, wider candidate lists and
Rocchio pseudo-relevance feedback, tuned on the even-numbered queries only.

    scripts/quality_offline.py features SET CACHE FEATS.pkl      (~2 min)
    scripts/quality_offline.py rules FEATS.pkl DUMP RULES.py     (~20 s a rule)

DUMP is `memory_recall --why` (scripts/quality_fusion.py says how to make it; only its
graph ranks are used). RULES.py is a Python dict literal: label -> keyword arguments of
`fusion()` below, e.g. {"union, first chunk": dict(graph_w=1.0, union_cos=True,
union_bm=True, agg="first")}. Prints recall@1/5/10 on the dev half and the held-out half. Needs numpy; similarities
are kept as float16 (ties may break differently from the real f32 recall).
"""
import glob, hashlib, json, pickle, re, sqlite3, sys
import numpy as np


def read_cache(cache, dim):
    """The vector cache the examples fill (examples/common/vector_cache.rs): SHA-256 of
    the text -> its vector."""
    raw = open(glob.glob(f"{cache}/vectors-*.bin")[0], "rb").read()
    rec = 32 + dim * 4
    return {raw[i:i + 32]: np.frombuffer(raw[i + 32:i + rec], dtype="<f4")
            for i in range(0, len(raw) - rec + 1, rec)}


def vector_of(known, text):
    """`text`'s cached vector, or None."""
    return known.get(hashlib.sha256(text.encode()).digest())


def features(set_dir, cache, out):
    """Writes per-query evidence: exact per-word BM25 of every matching memory, every chunk's cosine."""
    db = glob.glob(f"{cache}/store-*/memory.db")[0]
    conn = sqlite3.connect(db)
    name_of = dict(conn.execute("select id, name from memories"))
    rows = conn.execute("select memory_id, seq, vector from embeddings order by memory_id, seq").fetchall()
    dim = len(rows[0][2]) // 4
    C = np.frombuffer(b"".join(r[2] for r in rows), dtype="<f4").reshape(len(rows), dim)
    owner = np.array([r[0] for r in rows])
    seq = np.array([r[1] for r in rows])
    mids = np.unique(owner)
    print(len(rows), "chunks", len(mids), "memories", file=sys.stderr)

    qvec = read_cache(cache, dim)

    STOP = set("a an and are as at be by do does for from how in is it of on or that the this to was we what when where which who why with".split())
    def terms(q):
        seen = []
        for w in re.split(r"[^\w]|_", q):
            w = w.lower()
            if w and w not in STOP and w not in seen:
                seen.append(w)
        return seen[:32]

    queries = [json.loads(l) for l in open(f"{set_dir}/queries.jsonl")]
    feats = []
    for n, q in enumerate(queries):
        v = vector_of(qvec, q["query"])
        bm = {}
        for t in terms(q["query"]):
            phrase = '"' + t.replace('"', '""') + '"'
            try:
                for rid, s in conn.execute("select rowid, bm25(memory_fts, 10.0, 4.0, 1.0) from memory_fts where memory_fts match ?", (phrase,)):
                    bm[rid] = bm.get(rid, 0.0) + s
            except sqlite3.OperationalError:
                pass
        sims = C @ v if v is not None else np.zeros(len(C), dtype=np.float32)
        feats.append((n, q["expected"], bm, sims.astype(np.float16)))
        if n % 1000 == 0:
            print(n, file=sys.stderr)
    pickle.dump({"owner": owner, "seq": seq, "mids": mids, "name_of": name_of, "feats": feats, "C": C,
                 "qvecs": [vector_of(qvec, q["query"]) for q in queries]},
                open(out, "wb"))


def load(feats_path, dump):
    """Loads the features and the dump's graph ranks into this module's globals."""
    global d, owner, seq, mids, name_of, feats, C, M, col, first_mask, graph, names, midx
    d = pickle.load(open(feats_path, "rb"))
    owner, seq, mids, name_of, feats, C = d["owner"], d["seq"], d["mids"], d["name_of"], d["feats"], d["C"]
    M = len(mids)
    col = np.searchsorted(mids, owner)  # chunk -> memory column
    first_mask = seq == 0
    graph = {}
    for line in open(dump):
        v = json.loads(line)
        graph[v["n"]] = {h["id"]: h["graph"] for h in v["why"] if h["graph"]}
    names = np.array([name_of[m] for m in mids])
    midx = {m: i for i, m in enumerate(mids)}


def per_memory(sims, agg):
    best = np.full(M, -2.0, dtype=np.float32)
    np.maximum.at(best, col, sims)
    if agg == "best":
        return best
    if agg == "first":
        f = np.full(M, -2.0, dtype=np.float32)
        f[col[first_mask]] = sims[first_mask]
        return f
    if agg.startswith("bestfirst"):
        w = float(agg[len("bestfirst"):] or 0.5)
        f = np.full(M, -2.0, dtype=np.float32)
        f[col[first_mask]] = sims[first_mask]
        return (1 - w) * best + w * f
    if agg == "top2":
        s2 = sims.copy()
        # second best: mask out the best per memory
        order = np.lexsort((-s2, col))
        c_sorted = col[order]
        isfirst = np.r_[True, c_sorted[1:] != c_sorted[:-1]]
        second = np.full(M, np.nan, dtype=np.float32)
        sec_idx = order[~isfirst]
        sec_col = col[sec_idx]
        # the first non-first per column
        _, pos = np.unique(sec_col, return_index=True)
        second[sec_col[pos]] = sims[sec_idx[pos]]
        return np.where(np.isnan(second), best, (best + second) / 2)
    raise ValueError(agg)


def topk(arr, k):
    k = min(k, len(arr))
    idx = np.argpartition(-arr, k - 1)[:k]
    return idx[np.argsort(-arr[idx], kind="stable")]


def run(rule, half=0, limit=None):
    found = np.zeros(3)
    n = 0
    for i, (qn, exp, bm, sims) in enumerate(feats):
        if half is not None and qn % 2 != half:
            continue
        if limit and n >= limit:
            break
        n += 1
        ranked = rule(qn, bm, sims.astype(np.float32))
        ranked = list(ranked[:10])
        if exp in ranked:
            r = ranked.index(exp)
            found += [r < 1, r < 5, r < 10]
    return np.round(100 * found / max(n, 1), 1)


def fusion(n_fts=50, n_vec=50, agg="best", b=0.5, union_cos=False, union_bm=False,
           graph_w=0.0, prf=0, prf_beta=0.0, prf_agg="best", norm="minmax", fts_only=False, vec_only=False,
           mem_of=None):
    """A fusion rule; `mem_of(qn)`, when given, is each memory's similarity to query
    `qn` in place of `agg` over its chunks (how quality_learned.py fuses windows)."""
    def rule(qn, bm, sims):
        mem = mem_of(qn) if mem_of else per_memory(sims, agg)
        if prf and prf_beta:
            # first pass fused, then Rocchio on the query
            first = rule0(qn, bm, mem)
            ids = first[:prf]
            q = d["qvecs"][qn]
            cent = np.zeros_like(q)
            for m in ids:
                cent += C[(owner == mids[m]) & first_mask][0]
            q2 = q + prf_beta * cent / max(len(ids), 1)
            q2 = q2 / np.linalg.norm(q2)
            mem = per_memory(C @ q2, agg)
        return [names[m] for m in rule0(qn, bm, mem)]

    def rule0(qn, bm, mem):
        fts = sorted(bm.items(), key=lambda t: (t[1], t[0]))[:n_fts]
        fts_ids = [midx[r] for r, _ in fts if r in midx]
        vec_ids = list(topk(mem, n_vec)) if not fts_only else []
        if vec_only:
            fts_ids = []
        cand = set(fts_ids) | set(vec_ids)
        score = {}
        best_bm = fts[0][1] if fts else -1.0
        vs = mem[vec_ids] if vec_ids else np.array([0.0])
        top, low = float(vs.max()), float(vs.min())
        fset, vset = set(fts_ids), set(vec_ids)
        bmm = {midx[r]: s for r, s in bm.items() if r in midx}
        for m in cand:
            x = 0.0
            if (m in fset or (union_bm and m in bmm)) and best_bm < 0 and not vec_only:
                x += bmm[m] / best_bm
            if (m in vset or union_cos) and not fts_only:
                s = float(mem[m])
                if norm == "minmax":
                    x += b * ((s - low) / (top - low) if top > low else 1)
                elif norm == "raw":
                    x += b * s
            if graph_w and qn in graph and names[m] in graph[qn]:
                x += graph_w / (10 + graph[qn][names[m]])
            score[m] = x
        return sorted(score, key=lambda m: (-score[m], m))
    return rule


def main():
    if len(sys.argv) == 5 and sys.argv[1] == "features":
        features(*sys.argv[2:])
    elif len(sys.argv) == 5 and sys.argv[1] == "rules":
        load(sys.argv[2], sys.argv[3])
        for name, kw in eval(open(sys.argv[4]).read()).items():
            r = fusion(**kw)
            print(name, "dev", run(r, 0), "held", run(r, 1), flush=True)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main()
