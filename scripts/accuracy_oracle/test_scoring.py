"""Unit tests of the split and scoring rules: python3 -m unittest accuracy_oracle.test_scoring
(from scripts/)."""
import os
import unittest

from accuracy_oracle import handlabel, kotlin_bytecode, oracle, scoring, swift_units


class Split(unittest.TestCase):
    def test_stable_and_balanced(self):
        ts = [{"path": f"src/f{i}.ts", "name_line": i, "name": f"f{i}"} for i in range(2000)]
        halves = [scoring.half("ts", "pkg@1", t) for t in ts]
        self.assertEqual(halves, [scoring.half("ts", "pkg@1", t) for t in ts])
        self.assertTrue(900 < halves.count("tune") < 1100)
        # Known value: sha256("ts:pkg@1:src/f0.ts:0:f0") starts with an even byte or not, forever.
        self.assertIn(scoring.half("ts", "pkg@1", ts[0]), ("tune", "heldout"))


class Score(unittest.TestCase):
    def test_caller_tolerance(self):
        o = ("a.py", 10, 12, "f")  # decorators on 10..11, `def` on 12
        self.assertTrue(scoring.caller_matches(("a.py", 9), o))
        self.assertTrue(scoring.caller_matches(("a.py", 13), o))
        self.assertFalse(scoring.caller_matches(("a.py", 14), o))
        self.assertFalse(scoring.caller_matches(("b.py", 12), o))
        self.assertFalse(scoring.caller_matches(("a.py", 0), o))
        self.assertTrue(scoring.caller_matches(("a.py", 0), ("a.py", 0, 0, "<top level>")))
        self.assertTrue(scoring.caller_matches(("a.py", 7, "constant"), ("a.py", 0, 0, "<top level>")))
        self.assertFalse(scoring.caller_matches(("a.py", 7, "function"), ("a.py", 0, 0, "<top level>")))

    def test_a_caller_started_at_its_first_overload_signature(self):
        o = ("a.ts", 30, 30, "attr")  # the implementation's line
        self.assertTrue(scoring.caller_matches(("a.ts", 12, "function", 60, "attr"), o))
        self.assertFalse(scoring.caller_matches(("a.ts", 12, "function", 60, "other"), o))
        self.assertFalse(scoring.caller_matches(("a.ts", 12, "function", 25, "attr"), o))
        self.assertFalse(scoring.caller_matches(("a.ts", 12, "function"), o))

    def test_recall_precision(self):
        s = scoring.score_target([("a.py", 1, 1), ("a.py", 20, 20)], [("a.py", 3), ("a.py", 22)],
                                 [("a.py", 1), ("b.py", 5)], [("a.py", 3), ("b.py", 6)])
        self.assertEqual(s["fn_recall"], 0.5)
        self.assertEqual(s["fn_precision"], 0.5)
        self.assertEqual(s["site_recall"], 0.5)
        self.assertEqual(s["site_precision"], 0.5)
        self.assertEqual(s["missed_callers"], [("a.py", 20, 20)])

    def test_empty_answer_has_no_precision(self):
        s = scoring.score_target([("a.py", 1, 1)], [("a.py", 3)], [], [])
        self.assertEqual((s["fn_recall"], s["fn_precision"]), (0.0, None))
        agg = scoring.aggregate([{"score": s, "error": None},
                                 {"score": scoring.error_score([("a.py", 1, 1)], [("a.py", 3)]), "error": "ambiguous"},
                                 {"score": scoring.score_target([("a.py", 1, 1)], [("a.py", 3)], [("a.py", 1)], [("a.py", 3)]),
                                  "error": None}])
        self.assertEqual(agg["targets"], 3)
        self.assertEqual(agg["errors"], 1)
        self.assertEqual(agg["empty_answers"], 1)
        self.assertAlmostEqual(agg["fn_recall"], 1 / 3)
        self.assertEqual(agg["fn_precision"], 1.0)


class Calls(unittest.TestCase):
    def test_call_syntax(self):
        self.assertTrue(oracle.CALL_AFTER["ts"].match("<T>(x)"))
        self.assertTrue(oracle.CALL_AFTER["ts"].match("?.(x)"))
        self.assertFalse(oracle.CALL_AFTER["ts"].match(", g)"))
        self.assertTrue(oracle.DECORATOR_BEFORE.match("    @app."))
        self.assertFalse(oracle.DECORATOR_BEFORE.match("x = "))
        self.assertTrue(oracle.DEF_BEFORE.match("    def "))
        self.assertTrue(oracle.DEF_BEFORE.match("async def "))
        self.assertFalse(oracle.DEF_BEFORE.match("x = "))
        self.assertFalse(oracle.DECORATOR_AFTER.match(".setter"))
        self.assertTrue(oracle.DECORATOR_AFTER.match("(arg)"))

    def test_enclosing_innermost(self):
        outer = {"start_off": [0, 0], "end_off": [10, 0], "name": "outer"}
        inner = {"start_off": [2, 4], "end_off": [5, 0], "name": "inner"}
        self.assertIs(oracle.enclosing([outer, inner], 3, 0), inner)
        self.assertIs(oracle.enclosing([outer, inner], 6, 0), outer)
        self.assertIsNone(oracle.enclosing([outer, inner], 11, 0))


class KotlinBytecode(unittest.TestCase):
    def test_compiler_names_map_to_the_source_name(self):
        self.assertEqual(kotlin_bytecode._plain("emit$default"), "emit")
        self.assertEqual(kotlin_bytecode._plain("access$emit"), "emit")
        self.assertEqual(kotlin_bytecode._plain("plus-3QpEYks"), "plus")
        self.assertEqual(kotlin_bytecode._plain("emit"), "emit")

    def test_class_headers_with_generics(self):
        line = kotlin_bytecode._strip_generics(
            "public final class a.b.Vec<E extends java.lang.Object> extends a.b.Base<E> implements a.I<E>, a.J {")
        m = kotlin_bytecode.HEADER.match(line)
        self.assertEqual(m.group(1), "a.b.Vec")
        self.assertEqual(m.group(2).strip(), "a.b.Base")
        self.assertEqual([x.strip() for x in m.group(3).split(",")], ["a.I", "a.J"])
        self.assertEqual(kotlin_bytecode.HEADER.match("public interface a.K extends a.I {").group(1), "a.K")

    def test_invoke_lines(self):
        m = kotlin_bytecode.INVOKE.match("      39: invokevirtual #36                 // Method size:()I")
        self.assertEqual((m.group(1), m.group(2), m.group(3)), ("39", "virtual", "size:()I"))
        m = kotlin_bytecode.INVOKE.match(
            "       3: invokeinterface #16,  2           // InterfaceMethod a/I.f:(Ljava/lang/Object;)V")
        self.assertEqual(m.group(3), "a/I.f:(Ljava/lang/Object;)V")
        self.assertIsNone(kotlin_bytecode.INVOKE.match("       5: invokedynamic #20,  0  // InvokeDynamic #0:invoke:()"))

    def test_member_calls_go_through_a_value(self):
        self.assertTrue(kotlin_bytecode._is_member("builder.emit(x)", "emit"))
        self.assertTrue(kotlin_bytecode._is_member("foo()?.emit(x)", "emit"))
        self.assertFalse(kotlin_bytecode._is_member("emit(x)", "emit"))
        self.assertFalse(kotlin_bytecode._is_member("CodeBlock.emit(x)", "emit"))

    def test_innermost_span(self):
        units = {"a.kt": [(0, {"start": 1, "end_line": 20}), (1, {"start": 5, "end_line": 8})]}
        self.assertEqual(kotlin_bytecode._innermost(units, "a.kt", 6), 1)
        self.assertEqual(kotlin_bytecode._innermost(units, "a.kt", 12), 0)
        self.assertIsNone(kotlin_bytecode._innermost(units, "a.kt", 30))
        self.assertIsNone(kotlin_bytecode._innermost(units, "b.kt", 6))


class HandLabels(unittest.TestCase):
    def test_parts_split_by_candidate_lines(self):
        ts = [{"lines": [0] * n} for n in (10, 1, 1, 8, 5, 5, 10)]
        self.assertEqual(handlabel.parts(ts, 4), [(0, 0), (1, 3), (4, 5), (6, 6)])
        self.assertEqual(handlabel.parts(ts[:2], 4), [(0, 0), (1, 1)])
        got = handlabel.parts([{"lines": [0]}] * 9, 4)
        self.assertEqual((got[0][0], got[-1][1]), (0, 8))
        self.assertTrue(all(b[0] == a[1] + 1 for a, b in zip(got, got[1:])))

    def test_check_answers(self):
        ts = [{"id": "t1", "lines": [["a.swift", 3, "f()"], ["a.swift", 9, "x.f()"]]}]
        self.assertEqual(handlabel.check_answers(ts, {"t1": {"a.swift:3": "yes", "a.swift:9": "no"}}), ([], 0))
        problems, missing = handlabel.check_answers(ts, {"t1": {"a.swift:3": "maybe", "a.swift:4": "no"}, "t2": {}})
        self.assertEqual(len(problems), 3)
        self.assertEqual(missing, 1)

    def test_swift_member_calls(self):
        m = handlabel._member
        self.assertTrue(m("swift", "emit", "builder.emit(x)"))
        self.assertTrue(m("swift", "emit", "try await foo()?.emit(x)"))
        self.assertTrue(m("swift", "emit", "self.emit { $0 }"))
        self.assertTrue(m("swift", "emit", "    .emit(x)"))
        self.assertFalse(m("swift", "emit", "emit(x)"))
        self.assertFalse(m("swift", "emit", "Builder.emit(x)"))
        self.assertFalse(m("swift", "emit", "super.emit(x)"))
        self.assertFalse(m("swift", "emit", "f(.emit)"))
        self.assertFalse(m("swift", "emit", "map(\\.emit)"))


class SwiftUnits(unittest.TestCase):
    def setUp(self):
        pylib = os.path.join(swift_units.default_cache(), "pylib-swift", "tree_sitter_swift")
        if not os.path.isdir(pylib):
            self.skipTest("tree-sitter-swift is not installed (swift_units.ensure_pylib)")

    def test_units(self):
        src = b"""@discardableResult
public func top(_ a: Int, b: Int = 2) -> Int { a }
struct S {
  var x: Int { get { 1 } set { } }
  let y = top(1)
  init?(a: Int) { func local() {} }
  static func make(from s: String...) -> S? { nil }
  static func + (l: S, r: S) -> S { l }
}
extension A.B where T == Int {
  override func bar() { let c = { top(2) } }
}
protocol P { func req() }
"""
        us, reqs, err = swift_units.file_units(src)
        self.assertFalse(err)
        got = [(u["kind"], u["name"], ".".join(u["chain"]), u["start"], u["name_line"], u.get("params"),
                u.get("signature")) for u in us]
        self.assertEqual(got, [
            ("function", "top", "", 1, 2, "2+", "top(_:b:)"),
            ("property", "x", "S", 4, 4, None, None),
            ("init", "init", "S", 6, 6, 1, "init(a:)"),
            ("local function", "local", "S", 6, 6, 0, "local()"),
            ("static method", "make", "S", 7, 7, "1+", "make(from:)"),
            ("operator", "+", "S", 8, 8, 2, "+(l:r:)"),
            ("method", "bar", "A.B", 11, 11, 0, "bar()"),
        ])
        self.assertTrue(us[3]["local"] and us[6]["override"] and us[4]["static"])
        self.assertEqual(reqs, {"P": ["req"]})
        self.assertEqual([handlabel.excluded("swift", u) for u in us],
                         [None, "property accessor", "initializer", "local", None, "operator", None])


if __name__ == "__main__":
    unittest.main()
