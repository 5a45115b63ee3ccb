"""Doc-stripping, unit spans and sentence splitting, on adversarial inputs.

Run from scripts/: python3 -m unittest search_eval.test_extract
(tree-sitter is taken from $LOCI_SEARCH_EVAL_CACHE/pylib, installed there once.)
"""
import ast
import os
import unittest

from . import build, extract
from .sentences import first_sentence, query_of, clean

CACHE = os.environ.get("LOCI_SEARCH_EVAL_CACHE", os.path.expanduser("~/.cache/loci-search-eval"))


def setUpModule():
    build.ensure_pylib(CACHE)


def lines_kept(test, before, after):
    test.assertEqual(before.count(b"\n"), after.count(b"\n"))


def target_queries(lang, data):
    stripped, units = extract.extract(lang, data)
    lines = stripped.decode().splitlines()
    return {u["qual"]: q for u, q, _ in extract.targets(lang, units, lines)}, stripped, units


class PythonTest(unittest.TestCase):
    def test_docstrings_blanked_lines_kept(self):
        src = (b'"""Module doc."""\n'
               b'X = """not a docstring"""\n'
               b'def f(a):\n'
               b'    """Return the "quoted" and \'single\' thing \\"""\n\n'
               b'    More text.\n'
               b'    """\n'
               b'    b = a + 1\n'
               b'    return b\n')
        out, units = extract.extract("py", src)
        lines_kept(self, src, out)
        self.assertNotIn(b"Module doc", out)
        self.assertNotIn(b"quoted", out)
        self.assertIn(b'X = """not a docstring"""', out)
        ast.parse(out)
        (u,) = units
        self.assertEqual((u["start"], u["end"]), (3, 9))
        self.assertTrue(u["doc"].startswith('Return the "quoted"'))

    def test_raw_and_single_quoted_docstrings(self):
        src = (b"class C:\n"
               b"    r'''Match \\d+ digits in the input string.'''\n"
               b"    def g(self):\n"
               b"        'Compute the g value of this thing.'\n"
               b"        x = 1\n"
               b"        y = 2\n"
               b"        return x + y\n")
        qs, out, _ = target_queries("py", src)
        self.assertNotIn(b"digits", out)
        self.assertNotIn(b"Compute", out)
        self.assertEqual(qs["C.g"], "Compute the g value of this thing.")
        ast.parse(out)

    def test_body_only_docstring_gets_pass(self):
        src = b'def f():\n    """Only a docstring here, nothing else."""\n\ndef g(): """One liner doc."""\n'
        out, _ = extract.extract("py", src)
        tree = ast.parse(out)
        self.assertEqual([type(n.body[0]).__name__ for n in tree.body], ["Pass", "Pass"])
        lines_kept(self, src, out)

    def test_docstring_followed_on_same_line(self):
        src = b'def f():\n    """Doc of f here."""; x = 1\n    return x\n'
        out, _ = extract.extract("py", src)
        ast.parse(out)
        self.assertNotIn(b"Doc of f", out)

    def test_decorators_in_span(self):
        src = b"@dec\n@dec2(1)\ndef f():\n    pass\n"
        _, (u,) = extract.extract("py", src)
        self.assertEqual((u["start"], u["end"]), (1, 4))

    def test_crlf(self):
        src = b'def f():\r\n    """Doc line one.\r\n\r\n    Two.\r\n    """\r\n    return 1\r\n'
        out, units = extract.extract("py", src)
        self.assertEqual(units[0]["end"], 6)
        self.assertNotIn(b"Doc line", out)
        self.assertEqual(out.count(b"\r\n"), src.count(b"\r\n"))
        self.assertEqual(out.splitlines()[1:4], [b"", b"", b""])
        ast.parse(out)

    def test_non_utf8_skipped(self):
        with self.assertRaises(extract.Skip):
            extract.extract("py", b'# coding: latin-1\ns = "\xe9t\xe9"\n')

    def test_syntax_error_skipped(self):
        with self.assertRaises(extract.Skip):
            extract.extract("py", b"def f(:\n")


class RustTest(unittest.TestCase):
    SRC = (b'//! Crate doc.\n'
           b'/// Adds one to the given number quickly.\n'
           b'#[inline]\n'
           b'/** Block doc /* nested */ still doc. */\n'
           b'pub fn add_one(x: u32) -> u32 {\n'
           b'    let s = "/// not a doc, a string";\n'
           b'    let r = r#"/** raw */"#;\n'
           b'    //// four slashes is a plain comment\n'
           b'    x + 1\n'
           b'}\n'
           b'#[doc = "Attribute doc text here."]\n'
           b'struct S;\n'
           b'impl S {\n'
           b'    /// Makes a new S from nothing at all.\n'
           b'    fn make() -> S {\n'
           b'        let s = S;\n'
           b'        s\n'
           b'    }\n'
           b'}\n'
           b'macro_rules! m { () => { /// Doc inside a macro body.\n fn inner() {} } }\n')

    def test_strip(self):
        out, units = extract.extract("rust", self.SRC)
        lines_kept(self, self.SRC, out)
        for gone in (b"Crate doc", b"Adds one", b"Block doc", b"nested", b"Attribute doc", b"Makes a new",
                     b"Doc inside a macro"):
            self.assertNotIn(gone, out, gone)
        for kept in (b'"/// not a doc, a string"', b'r#"/** raw */"#', b"//// four slashes", b"#[inline]"):
            self.assertIn(kept, out, kept)

    def test_units_and_docs(self):
        qs, _, units = target_queries("rust", self.SRC)
        self.assertEqual(qs["add_one"], "Adds one to the given number quickly.")
        self.assertEqual(qs["S::make"], "Makes a new S from nothing at all.")
        u = [u for u in units if u["name"] == "add_one"][0]
        self.assertEqual((u["start"], u["end"]), (5, 10))

    def test_test_module_excluded(self):
        src = b"mod tests {\n    /// Checks the thing works right.\n    fn check() {\n        a();\n        b();\n    }\n}\n"
        qs, _, _ = target_queries("rust", src)
        self.assertEqual(qs, {"tests::check": None})

    def test_non_utf8_skipped(self):
        with self.assertRaises(extract.Skip):
            extract.extract("rust", b"/// caf\xe9\nfn f() {}\n")


class JsTest(unittest.TestCase):
    SRC = (b'/** File doc. */\n'
           b'const s = "/** not a comment */";\n'
           b'const t = `/** template ${s} */`;\n'
           b'/**/\n'
           b'/**\n'
           b' * Parses the input text into tokens.\n'
           b' * @param {string} text the text\n'
           b' */\n'
           b'export function parse(text) {\n'
           b'  const a = 1;\n'
           b'  return a;\n'
           b'}\n'
           b'/** Doubles a number for the caller. */\n'
           b'export const double = (x) => {\n'
           b'  const y = x * 2;\n'
           b'  return y;\n'
           b'};\n'
           b'class K {\n'
           b'  /** Runs the job now, see {@link parse}. */\n'
           b'  run() {\n'
           b'    go();\n'
           b'    return 1;\n'
           b'  }\n'
           b'}\n'
           b'// plain comment kept\n')

    def test_strip(self):
        out, _ = extract.extract("js", self.SRC)
        lines_kept(self, self.SRC, out)
        for gone in (b"File doc", b"Parses the input", b"@param", b"Doubles", b"Runs the job"):
            self.assertNotIn(gone, out)
        for kept in (b'"/** not a comment */"', b"`/** template ${s} */`", b"/**/", b"// plain comment kept"):
            self.assertIn(kept, out)

    def test_units(self):
        qs, _, units = target_queries("js", self.SRC)
        self.assertEqual(qs["parse"], "Parses the input text into tokens.")
        self.assertEqual(qs["double"], "Doubles a number for the caller.")
        self.assertEqual(qs["K.run"], "Runs the job now, see parse.")
        u = [u for u in units if u["name"] == "double"][0]
        self.assertEqual((u["start"], u["end"]), (14, 17))

    def test_typescript(self):
        src = (b"export class A {\n  /** Gets the value of the thing. */\n  get(): number {\n    const v = 1;\n"
               b"    return v;\n  }\n  /** Abstract signature has no body. */\n  abstract f(): void;\n}\n")
        qs, out, _ = target_queries("ts", src)
        self.assertEqual(qs, {"A.get": "Gets the value of the thing."})
        self.assertNotIn(b"Abstract signature", out)

    def test_crlf(self):
        src = b"/**\r\n * Loads the file from disk now.\r\n */\r\nfunction load() {\r\n  a();\r\n  b();\r\n}\r\n"
        qs, out, _ = target_queries("js", src)
        self.assertEqual(qs["load"], "Loads the file from disk now.")
        self.assertEqual(out.count(b"\r\n"), src.count(b"\r\n"))
        self.assertTrue(out.startswith(b"\r\n\r\n\r\nfunction"))


class GoTest(unittest.TestCase):
    SRC = (b"// Copyright notice.\n"
           b"\n"
           b"// Package p does things.\n"
           b"package p\n"
           b"\n"
           b"// Sum adds the numbers in xs together.\n"
           b"// Second line.\n"
           b"func Sum(xs []int) int {\n"
           b"\t// inside the body\n"
           b"\tt := 0\n"
           b"\treturn t\n"
           b"}\n"
           b"\n"
           b"type T struct {\n"
           b"\t// A is a field with a doc.\n"
           b"\tA int // trailing comment\n"
           b"}\n"
           b"\n"
           b"/* Len reports the length of the receiver. */\n"
           b"func (t *T) Len() int {\n"
           b"\tx := 1\n"
           b"\treturn x\n"
           b"}\n")

    def test_strip(self):
        out, _ = extract.extract("go", self.SRC)
        lines_kept(self, self.SRC, out)
        for gone in (b"Package p", b"Sum adds", b"Second line", b"A is a field", b"Len reports"):
            self.assertNotIn(gone, out)
        for kept in (b"// Copyright notice.", b"// inside the body", b"// trailing comment"):
            self.assertIn(kept, out)

    def test_units(self):
        qs, _, units = target_queries("go", self.SRC)
        self.assertEqual(qs, {"Sum": "Sum adds the numbers in xs together.",
                              "T.Len": "Len reports the length of the receiver."})
        self.assertEqual([(u["start"], u["end"]) for u in units], [(8, 12), (20, 23)])


class SentenceTest(unittest.TestCase):
    def test_first_sentence(self):
        self.assertEqual(first_sentence("Returns the value, e.g. the first one. More."),
                         "Returns the value, e.g. the first one.")
        self.assertEqual(first_sentence("Joins os.path parts and 1.5 numbers. Then more."),
                         "Joins os.path parts and 1.5 numbers.")
        self.assertEqual(first_sentence("Is it done? Yes."), "Is it done?")
        self.assertEqual(first_sentence("No period at all here"), "No period at all here")
        self.assertEqual(first_sentence("Handles x, y, etc. in the list. Next."), "Handles x, y, etc. in the list.")

    def test_paragraph_and_sections(self):
        self.assertEqual(query_of("py", "Compute the sum\n    of all values\n\n    Details."),
                         ("Compute the sum of all values", None))
        self.assertIsNone(query_of("py", "Args:\n    x: the thing to use\n")[0])
        self.assertEqual(query_of("py", "Args: x the thing to use"), (None, "parameter list"))
        self.assertIsNone(query_of("c", "/**\n * @param {number} x the number to use\n */")[0])
        self.assertEqual(query_of("c", "/// Makes the widget for a frame\n/// # Examples\n/// ```\n"),
                         ("Makes the widget for a frame", None))

    def test_filters(self):
        self.assertEqual(query_of("c", "// TODO: make this faster than it is now."), (None, "todo/deprecated"))
        self.assertEqual(query_of("c", "/** Deprecated: use the other one instead. */"), (None, "todo/deprecated"))
        self.assertEqual(query_of("c", "/// Too short."), (None, "under 4 words"))
        self.assertEqual(query_of("py", ""), (None, "empty"))

    def test_markup_cleaned(self):
        self.assertEqual(clean("See [`Foo::bar`] and [the docs](http://x) or {@link Baz|baz} :func:`qux`."),
                         "See Foo::bar and the docs or baz qux.")
        self.assertEqual(clean("Uses <code>x</code> and ``y``"), "Uses x and y")

    def test_unique_queries(self):
        cands = [{"query": "Returns the name of it."}, {"query": "returns the  name of it"},
                 {"query": "Something else entirely here."}]
        self.assertEqual(build.unique_queries(cands), [cands[2]])

    def test_half_is_stable(self):
        self.assertEqual(build.half_of("py", "json", "a.py", "f"), build.half_of("py", "json", "a.py", "f"))
        halves = {build.half_of("go", "t", "x.go", f"F{i}") for i in range(50)}
        self.assertEqual(halves, {"tune", "heldout"})


if __name__ == "__main__":
    unittest.main()
