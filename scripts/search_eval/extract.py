"""Doc-comment stripping and function units, per language.

`extract(lang, data)` takes one file's bytes and returns `(stripped, units)` or raises
`Skip` (not UTF-8, does not parse). `stripped` is the file with every doc comment
blanked *in place*: each byte of a doc comment becomes a space except line breaks, and
lines left holding only white space are emptied, so every line number is the same as in
the original (the answer spans need no remapping). What counts as a doc comment:

* Python: the docstring of a module, class or function (first statement, a string
  expression). A body that was only its docstring gets `pass` in its place so the file
  still parses; the stripped file is checked with `ast.parse`.
* Rust: `///`, `//!`, `/** */`, `/*! */` anywhere (also inside macro bodies), and
  `#[doc = ...]` / `#![doc = ...]` attributes.
* JavaScript/TypeScript: every `/** ... */` block comment (not `/**/`).
* Go: every comment group (consecutive comment lines) that ends on the line right
  above a declaration (package clause, func, method, type, const, var, spec, struct
  field, interface method) and that does not trail code on its first line.

`units` lists every function-like definition that has a body, with its 1-based line
span (decorators included for Python) and, when it has one, its raw doc comment.
"""
import ast
import bisect
import re

from .sentences import query_of


class Skip(Exception):
    pass


_PYLIB = None


def set_pylib(path):
    global _PYLIB
    _PYLIB = path


_PARSERS = {}


def parser(lang):
    if lang not in _PARSERS:
        import sys
        if _PYLIB and _PYLIB not in sys.path:
            sys.path.insert(0, _PYLIB)
        import tree_sitter
        if lang == "rust":
            import tree_sitter_rust as m
            lang_obj = m.language()
        elif lang == "go":
            import tree_sitter_go as m
            lang_obj = m.language()
        elif lang == "js":
            import tree_sitter_javascript as m
            lang_obj = m.language()
        elif lang == "ts":
            import tree_sitter_typescript as m
            lang_obj = m.language_typescript()
        elif lang == "tsx":
            import tree_sitter_typescript as m
            lang_obj = m.language_tsx()
        else:
            raise ValueError(lang)
        _PARSERS[lang] = tree_sitter.Parser(tree_sitter.Language(lang_obj))
    return _PARSERS[lang]


def blank(data, ranges, replacements=None):
    """`data` with each byte range blanked (line breaks kept); `replacements` maps a
    range's start to a short text written at its start instead of spaces (the range may
    grow by a few bytes on its first line; never by a line). Lines that held a blanked
    byte and are left holding only white space are emptied."""
    replacements = replacements or {}
    offs = _line_offsets(data)
    touched = set()
    buf = bytearray(data)
    for a, b in sorted(set(ranges), reverse=True):
        seg = bytes(c if c in (10, 13) else 32 for c in data[a:b])
        rep = replacements.get(a)
        if rep:
            nl = seg.find(b"\n")
            first = len(seg) if nl < 0 else nl
            if seg[:first].endswith(b"\r"):
                first -= 1
            seg = rep + seg[min(len(rep), first):]
        buf[a:b] = seg
        la, lb = bisect.bisect_right(offs, a) - 1, bisect.bisect_right(offs, max(a, b - 1)) - 1
        touched.update(range(la, lb + 1))
    lines = bytes(buf).splitlines(keepends=True)
    for i in touched:
        if i < len(lines):
            body = lines[i].rstrip(b"\r\n")
            if body and not body.strip():
                lines[i] = lines[i][len(body):]
    return b"".join(lines)


def _decode(data):
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise Skip("not UTF-8")


def _line_offsets(data):
    offs = [0]
    for i, c in enumerate(data):
        if c == 10:
            offs.append(i + 1)
    return offs


# ---------------------------------------------------------------- Python

def extract_py(data):
    _decode(data)
    try:
        tree = ast.parse(data)
    except (SyntaxError, ValueError) as e:
        raise Skip(f"does not parse: {e.__class__.__name__}")
    offs = _line_offsets(data)

    def off(line, col):
        return offs[line - 1] + col

    ranges, reps, units = [], {}, []

    def docstring_of(node):
        body = getattr(node, "body", None)
        if not body or not isinstance(body[0], ast.Expr):
            return None
        v = body[0].value
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            return body[0]
        return None

    def strip(node):
        d = docstring_of(node)
        if d is None:
            return None
        a, b = off(d.lineno, d.col_offset), off(d.end_lineno, d.end_col_offset)
        ranges.append((a, b))
        follows = len(node.body) > 1 and node.body[1].lineno == d.end_lineno
        if (len(node.body) == 1 and not isinstance(node, ast.Module)) or follows:
            reps[a] = b"pass"  # keeps the body non-empty, or `pass; x = 1` valid
        return d.value.value

    def visit(node, chain):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                doc = strip(child)
                start = min([child.lineno] + [x.lineno for x in child.decorator_list])
                units.append({"name": child.name, "qual": ".".join(chain + [child.name]), "start": start,
                              "end": child.end_lineno, "doc": doc})
                visit(child, chain + [child.name])
            elif isinstance(child, ast.ClassDef):
                strip(child)
                visit(child, chain + [child.name])
            else:
                visit(child, chain)

    strip(tree)
    visit(tree, [])
    stripped = blank(data, ranges, reps)
    try:
        ast.parse(stripped)
    except (SyntaxError, ValueError):
        raise Skip("stripped copy does not parse")
    return stripped, units


# ---------------------------------------------------------------- tree-sitter helpers

def _walk(root):
    stack = [root]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _text(data, n):
    return data[n.start_byte:n.end_byte].decode("utf-8", "replace")


def _parse(lang, data):
    _decode(data)
    tree = parser(lang).parse(data)
    return tree.root_node


# ---------------------------------------------------------------- Rust

_RUST_DOC_ATTR = re.compile(rb"^#!?\[\s*doc\s*=")


def _rust_is_doc(n, data):
    if n.type in ("line_comment", "block_comment"):
        return any(c.type in ("outer_doc_comment_marker", "inner_doc_comment_marker") for c in n.children)
    if n.type in ("attribute_item", "inner_attribute_item"):
        return bool(_RUST_DOC_ATTR.match(data[n.start_byte:n.end_byte]))
    return False


def _rust_attr_doc(text):
    m = re.match(r'^#!?\[\s*doc\s*=\s*r?#*"(.*)"#*\s*\]$', text, re.S)
    return "/// " + m.group(1).replace("\\n", "\n") if m else ""


def extract_rust(data):
    root = _parse("rust", data)
    ranges, units = [], []
    for n in _walk(root):
        if _rust_is_doc(n, data):
            ranges.append((n.start_byte, n.end_byte))
    for n in _walk(root):
        if n.type != "function_item" or n.child_by_field_name("body") is None:
            continue
        name = _text(data, n.child_by_field_name("name"))
        chain = []
        p = n.parent
        in_test_mod = False
        while p is not None:
            if p.type == "impl_item":
                t = p.child_by_field_name("type")
                chain.append(_text(data, t).split("<")[0] if t else "impl")
            elif p.type in ("trait_item", "mod_item", "function_item"):
                nm = p.child_by_field_name("name")
                if nm is not None:
                    chain.append(_text(data, nm))
                    if p.type == "mod_item" and "test" in chain[-1].lower():
                        in_test_mod = True
            p = p.parent
        # Doc: the doc comments and doc attributes among the siblings right above it
        # (other attributes and plain comments in between are passed over).
        docs = []
        s = n.prev_sibling
        while s is not None and s.type in ("line_comment", "block_comment", "attribute_item"):
            if _rust_is_doc(s, data):
                t = _text(data, s)
                if s.type == "attribute_item":
                    t = _rust_attr_doc(t)
                elif t.startswith("//!") or t.startswith("/*!"):
                    break
                docs.append(t.rstrip("\n"))
            s = s.prev_sibling
        doc = "\n".join(reversed(docs)) if docs else None
        units.append({"name": name, "qual": "::".join(list(reversed(chain)) + [name]),
                      "start": n.start_point[0] + 1, "end": n.end_point[0] + 1, "doc": doc,
                      "test": in_test_mod})
    return blank(data, ranges), units


# ---------------------------------------------------------------- JavaScript / TypeScript

def _js_is_doc(n, data):
    if n.type != "comment":
        return False
    t = data[n.start_byte:n.end_byte]
    return t.startswith(b"/**") and t != b"/**/"


_JS_FN_VALUES = ("function_expression", "function", "arrow_function", "generator_function")
_JS_WRAPPERS = ("export_statement", "lexical_declaration", "variable_declaration", "expression_statement",
                "ambient_declaration")


def _js_units(data, root):
    units = []
    for n in _walk(root):
        t = n.type
        name = span = None
        if t in ("function_declaration", "generator_function_declaration"):
            name, span = n.child_by_field_name("name"), n
        elif t == "method_definition":
            name, span = n.child_by_field_name("name"), n
        elif t == "variable_declarator":
            v = n.child_by_field_name("value")
            if v is not None and v.type in _JS_FN_VALUES:
                name, span = n.child_by_field_name("name"), n
        elif t == "pair":
            v = n.child_by_field_name("value")
            if v is not None and v.type in _JS_FN_VALUES:
                name, span = n.child_by_field_name("key"), n
        elif t == "assignment_expression":
            v = n.child_by_field_name("right")
            if v is not None and v.type in _JS_FN_VALUES:
                name, span = n.child_by_field_name("left"), n
        elif t in ("public_field_definition", "field_definition"):
            v = n.child_by_field_name("value")
            if v is not None and v.type in _JS_FN_VALUES:
                name = n.child_by_field_name("name") or n.child_by_field_name("property")
                span = n
        if span is None or name is None:
            continue
        if span.type in ("function_declaration", "generator_function_declaration", "method_definition"):
            if span.child_by_field_name("body") is None:
                continue
        full = _text(data, name)
        short = re.split(r"[.\[]", full.replace("?.", "."))[-1].strip("'\"]#") or full
        # The node the doc comment sits above: climb through declarations and exports.
        anchor = span
        while anchor.parent is not None and anchor.parent.type in _JS_WRAPPERS + ("variable_declarator",
                                                                                   "assignment_expression"):
            if anchor.parent.type in ("lexical_declaration", "variable_declaration") and \
                    anchor.parent.named_child_count > 1:
                break
            anchor = anchor.parent
        s = anchor.prev_sibling
        while s is not None and s.type == "decorator":
            s = s.prev_sibling
        doc = None
        if s is not None and _js_is_doc(s, data) and s.end_point[0] >= anchor.start_point[0] - 1:
            doc = _text(data, s)
        chain = []
        p = span.parent
        while p is not None:
            if p.type in ("class_declaration", "class", "abstract_class_declaration", "function_declaration"):
                nm = p.child_by_field_name("name")
                if nm is not None:
                    chain.append(_text(data, nm))
            p = p.parent
        start = anchor.start_point[0] + 1 if anchor.type != "export_statement" else span.start_point[0] + 1
        units.append({"name": short, "qual": ".".join(list(reversed(chain)) + [full]),
                      "start": min(start, span.start_point[0] + 1), "end": span.end_point[0] + 1, "doc": doc})
    return units


def extract_js(data, dialect="js"):
    root = _parse(dialect, data)
    ranges = [(n.start_byte, n.end_byte) for n in _walk(root) if _js_is_doc(n, data)]
    return blank(data, ranges), _js_units(data, root)


# ---------------------------------------------------------------- Go

_GO_DECLS = {"function_declaration", "method_declaration", "type_declaration", "const_declaration",
             "var_declaration", "package_clause", "type_spec", "type_alias", "const_spec", "var_spec",
             "field_declaration", "method_elem", "method_spec", "import_declaration"}


def _go_doc_groups(root):
    """(first comment, last comment, next declaration) for every doc comment group."""
    out = []
    for n in _walk(root):
        kids = n.children
        i = 0
        while i < len(kids):
            c = kids[i]
            if c.type != "comment":
                i += 1
                continue
            prev = kids[i - 1] if i > 0 else None
            j = i
            while j + 1 < len(kids) and kids[j + 1].type == "comment" and \
                    kids[j + 1].start_point[0] == kids[j].end_point[0] + 1:
                j += 1
            trailing = prev is not None and prev.end_point[0] == c.start_point[0]
            nxt = kids[j + 1] if j + 1 < len(kids) else None
            if not trailing and nxt is not None and nxt.type in _GO_DECLS and \
                    nxt.start_point[0] == kids[j].end_point[0] + 1:
                out.append((kids[i:j + 1], nxt))
            i = j + 1
    return out


def extract_go(data):
    root = _parse("go", data)
    groups = _go_doc_groups(root)
    ranges = [(c.start_byte, c.end_byte) for g, _ in groups for c in g]
    doc_of = {(d.start_byte, d.type): "\n".join(_text(data, c) for c in g) for g, d in groups}
    units = []
    for n in _walk(root):
        if n.type not in ("function_declaration", "method_declaration") or n.child_by_field_name("body") is None:
            continue
        name = _text(data, n.child_by_field_name("name"))
        qual = name
        if n.type == "method_declaration":
            recv = n.child_by_field_name("receiver")
            m = re.search(r"([A-Za-z_]\w*)\s*(\[[^\]]*\])?\s*\)\s*$", _text(data, recv) if recv else "")
            if m:
                qual = m.group(1) + "." + name
        units.append({"name": name, "qual": qual, "start": n.start_point[0] + 1, "end": n.end_point[0] + 1,
                      "doc": doc_of.get((n.start_byte, n.type))})
    return blank(data, ranges), units


# ---------------------------------------------------------------- entry points

def extract(lang, data, path=""):
    if lang == "py":
        return extract_py(data)
    if lang == "rust":
        return extract_rust(data)
    if lang == "go":
        return extract_go(data)
    if lang in ("js", "ts", "tsx"):
        return extract_js(data, lang)
    raise ValueError(lang)


def dialect_of(path):
    if path.endswith(".py"):
        return "py"
    if path.endswith(".rs"):
        return "rust"
    if path.endswith(".go"):
        return "go"
    if path.endswith(".tsx"):
        return "tsx"
    if re.search(r"\.[mc]?ts$", path):
        return "ts"
    if re.search(r"\.(jsx?|mjs|cjs)$", path):
        return "js"
    return None


_EXCLUDED_NAMES = re.compile(r"^(__\w+__|constructor)$")


def targets(lang, units, stripped_lines):
    """Units that can carry a query: a doc comment, a body of at least 3 non-blank lines
    in the stripped copy, no `test` in the name or enclosing module, not a constructor
    or dunder method (CodeSearchNet's rules). Yields (unit, query) or (unit, None, why)."""
    for u in units:
        if not u.get("doc"):
            continue
        if "test" in u["qual"].lower() or u.get("test"):
            yield u, None, "test"
            continue
        if _EXCLUDED_NAMES.match(u["name"]):
            yield u, None, "constructor/dunder"
            continue
        body = [x for x in stripped_lines[u["start"] - 1:u["end"]] if x.strip()]
        if len(body) < 3:
            yield u, None, "under 3 lines"
            continue
        q, why = query_of("py" if lang == "py" else "c", u["doc"])
        yield (u, q, why)
