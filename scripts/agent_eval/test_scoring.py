"""Unit tests of what the agent evaluation reads out of answers and how it scores them:
python3 -m unittest agent_eval.test_scoring (from scripts/)."""
import unittest

from agent_eval import scoring, tasks


class Reading(unittest.TestCase):
    def test_chars_count_text_and_compact_json(self):
        self.assertEqual(scoring.answer_chars("ab", None), 2)
        self.assertEqual(scoring.answer_chars("ab", {"a": [1, 2]}), 2 + len('{"a":[1,2]}'))
        self.assertEqual(scoring.answer_chars("", {"é": 1}), len('{"é":1}'))

    def test_error_kind(self):
        self.assertEqual(scoring.error_kind("ambiguous: `x` is ambiguous\nhint: ..."), "ambiguous")
        self.assertIsNone(scoring.error_kind("callers of `x`"))

    def test_candidates_from_text_and_structured(self):
        text = ("ambiguous: `add_permits` is ambiguous: 2 candidates\n"
                "hint: name one candidate by its path:line as listed\ncandidates:\n"
                "  src/sync/mpsc/chan.rs:45 method Semaphore::add_permits  fn add_permits(&self, n: usize);\n"
                "  src/sync/semaphore.rs:568 method Semaphore::add_permits  pub fn add_permits(&self, n: usize)\n")
        c = scoring.candidates(text, None)
        self.assertEqual([(x["path"], x["line"]) for x in c], [("src/sync/mpsc/chan.rs", 45), ("src/sync/semaphore.rs", 568)])
        self.assertEqual(c[1]["qualified_name"], "Semaphore::add_permits")
        sc = {"candidates": [{"target": "src/a.rs:3", "path": "src/a.rs", "line": 3, "qualified_name": "A::f"}]}
        self.assertEqual(scoring.candidates("", sc)[0]["target"], "src/a.rs:3")
        # An ambiguity that lists nothing (the older texts) gives no candidates.
        self.assertEqual(scoring.candidates("ambiguous: `f` is ambiguous: 6 candidates\nhint: qualify it", None), [])

    def test_relation_items(self):
        sc = {"relations": [{"path": "a.rs", "line": 10, "depth": 1, "site": "a.rs:12"},
                            {"path": "b.rs", "line": 0, "depth": 2, "site": None}],
              "unresolved": {"count": 1, "sites": [{"path": "t.rs", "line": 5}]},
              "groups": [{"path": "c.rs", "count": 2}]}
        nodes, sites, unresolved, groups = scoring.relation_items(sc)
        self.assertEqual(nodes, [("a.rs", 10, 1), ("b.rs", 0, 2)])
        self.assertEqual(sites, [("a.rs", 12)])
        self.assertEqual(unresolved, [("t.rs", 5)])
        self.assertEqual(groups, ["c.rs"])

    def test_named_definitions(self):
        sc = {"definitions": [{"path": "s.rs", "name": "S", "line": 3,
                               "members": [{"name": "f", "line": 5}, {"name": "g", "line": 9}]},
                              {"path": "other.rs", "name": "T", "line": 1}]}
        self.assertEqual(sorted(scoring.named_definitions(sc, "s.rs")), [("S", 3), ("f", 5), ("g", 9)])
        q = {"columns": ["name", "kind", "start_line"], "rows": [["f", "method", 5], ["S", "struct", 3]]}
        self.assertEqual(sorted(scoring.named_definitions(q, "s.rs")), [("S", 3), ("f", 5)])

    def test_freshness(self):
        self.assertTrue(scoring.says_not_fresh("", {"index": {"changed_files": 1, "state": "complete"}}))
        self.assertTrue(scoring.says_not_fresh("x\n[index indexing; a sync is running]", {"index": {}}))
        self.assertTrue(scoring.says_not_fresh("x\n[1 files changed since the last sync]", None))
        self.assertFalse(scoring.says_not_fresh("x", {"index": {"changed_files": 0, "stale_files": 0,
                                                                "state": "complete", "sync_running": True}}))
        self.assertFalse(scoring.says_not_fresh("[a sync is running]", None))


class Scores(unittest.TestCase):
    def test_recall_precision(self):
        truth = [("a.rs", 1), ("a.rs", 2), ("b.rs", 3), ("b.rs", 4)]
        self.assertEqual(scoring.recall(truth, [("a.rs", 1), ("b.rs", 3), ("z.rs", 9)]), 0.5)
        self.assertAlmostEqual(scoring.precision(truth, [("a.rs", 1), ("b.rs", 3), ("z.rs", 9)]), 2 / 3)
        # Items outside what the compiler saw are neither right nor wrong.
        self.assertEqual(scoring.precision(truth, [("a.rs", 1), ("z.rs", 9)], lambda x: x[0] != "z.rs"), 1.0)
        self.assertIsNone(scoring.recall([], [("a.rs", 1)]))
        self.assertIsNone(scoring.precision(truth, []))

    def test_function_recall(self):
        fns = [("i.rs", 517, 517, 521, "Interval::reset"), ("i.rs", 549, 549, 552, "Interval::reset_immediately")]
        self.assertEqual(scoring.function_recall(fns, [("i.rs", 518)]), 0.5)   # a site inside the first
        self.assertEqual(scoring.function_recall(fns, [("i.rs", 516), ("i.rs", 552)]), 1.0)  # header - 1, last line
        self.assertEqual(scoring.function_recall(fns, [("j.rs", 518), ("i.rs", 553)]), 0.0)

    def test_definition_and_outline(self):
        t = {"path": "src/task/blocking.rs", "start": 219, "name_line": 220}
        self.assertTrue(scoring.definition_match(t, "src/task/blocking.rs", 220))
        self.assertTrue(scoring.definition_match(t, "src/task/blocking.rs", 218))
        self.assertFalse(scoring.definition_match(t, "src/task/blocking.rs", 222))
        self.assertFalse(scoring.definition_match(t, "src/runtime/blocking/pool.rs", 220))
        items = [["Semaphore", "struct", 10], ["add_permits", "function", 568], ["close", "function", 900]]
        self.assertAlmostEqual(scoring.outline_recall(items, [("Semaphore", 11), ("add_permits", 570)]), 1 / 3)

    def test_snippet(self):
        body = "Notify::notify_one must wake the oldest waiter first (FIFO)"
        self.assertTrue(scoring.body_snippet(body, "… must wake the oldest waiter first …"))
        self.assertFalse(scoring.body_snippet(body, "notify-one-wakes-oldest STALE"))

    def test_mean_skips_undefined(self):
        self.assertEqual(scoring.mean([1.0, None, 0.0]), 0.5)
        self.assertIsNone(scoring.mean([None]))


class Policy(unittest.TestCase):
    def test_pick_prefers_the_meant_file_and_name(self):
        cands = [{"path": "src/sync/batch_semaphore.rs", "line": 325, "qualified_name": "Semaphore::acquire"},
                 {"path": "src/sync/semaphore.rs", "line": 600, "qualified_name": "Semaphore::acquire_many"},
                 {"path": "src/sync/semaphore.rs", "line": 614, "qualified_name": "Semaphore::acquire"}]
        self.assertEqual(tasks._pick(cands, "src/sync/semaphore.rs", "acquire")["line"], 614)
        self.assertIsNone(tasks._pick(cands, "src/elsewhere.rs", "acquire"))

    def test_module_fits(self):
        self.assertTrue(tasks._module_fits("src/task/blocking.rs", ["task"]))
        self.assertFalse(tasks._module_fits("src/runtime/blocking/pool.rs", ["task"]))

    def test_left_out_counts(self):
        self.assertTrue(tasks._nonzero({"count": 3}))
        self.assertFalse(tasks._nonzero({"count": 0, "files": []}))
        self.assertTrue(tasks._nonzero(2))
        self.assertFalse(tasks._nonzero(None))


if __name__ == "__main__":
    unittest.main()
