"""The definitions ("units") of Swift files, for the hand-labelled callers oracle (handlabel.py).

No Swift compiler or SwiftSyntax installs here (Debian 12 has no swiftlang; nothing on
PyPI or npm), so the files are read with tree-sitter-swift (PyPI `tree-sitter==0.26.1`,
`tree-sitter-swift==0.7.4`, installed by `ensure_pylib` into
`$LOCI_ACCURACY_CACHE/pylib-swift` as `oracle.ensure_pylib` installs tree-sitter-rust).
It is the same grammar family loci parses Swift with (the `tree-sitter-swift` 0.7 crate),
so a construct the grammar cannot parse is neither a unit here nor a definition in loci;
nodes under an ERROR node are read as they parsed. There is no other Swift parser to check
it against.

A unit is a declaration with a body:
* `function` (a top-level `func`), `method` (a `func` in a type or extension body),
  `static method` (`static func`, `class func`), `operator` (a `func` named by an
  operator: `static func + (..)`), `init` (`init`, `init?`, `init!`), `deinit`,
  `subscript`, `property` (a `var` with a getter, setter or `willSet`/`didSet` block;
  its accessors are one unit, named by the property);
* `local`: true on a unit inside another unit's body (a nested `func`, a method of a
  local type), which is a caller but never a target.
Closures are not units: their calls belong to the enclosing unit. Protocol requirements
(`protocol_function_declaration`) have no body and are no units; they are listed per
protocol (`requirements`) so handlabel can mark a protocol extension's method that
implements one. Types (class, struct, enum, actor, extension, protocol) are no units
either: a call in a stored property's initializer is top-level code, as in PHP.

Fields: name (backticks removed; `init`, `deinit`, `subscript`, the operator for an
operator), chain (the enclosing types outermost first; an extension contributes the type
it extends, dotted parts split: `extension Foo.Bar { func f() }` is chain `Foo`, `Bar`;
generic arguments and `where` clauses dropped), kind, start (the declaration's first
line, attributes and modifiers included, not a doc comment), name_line, end_line, params
(the parameter count, a string `"N+"` when a default value or a variadic parameter makes
it a lower bound), signature (`move(from:to:)`, `_` for an unlabelled parameter),
static, override.
"""
import functools
import os
import sys

from . import oracle

VERSIONS = ("tree-sitter==0.26.1", "tree-sitter-swift==0.7.4")
TYPE_KINDS = ("class_declaration", "protocol_declaration")
UNIT_NODES = ("function_declaration", "init_declaration", "deinit_declaration", "subscript_declaration",
              "property_declaration")


def default_cache():
    return os.environ.get("LOCI_ACCURACY_CACHE", os.path.expanduser("~/.cache/loci-accuracy"))


def ensure_pylib(cache=None):
    """tree-sitter and its Swift grammar (PyPI), installed once into CACHE/pylib-swift."""
    return oracle.ensure_pip_target(cache or default_cache(), "pylib-swift", "tree_sitter_swift", VERSIONS)


@functools.lru_cache(maxsize=1)
def parser(cache=None):
    pylib = ensure_pylib(cache)
    if pylib not in sys.path:
        sys.path.insert(0, pylib)
    import tree_sitter
    import tree_sitter_swift
    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_swift.language()))


def _text(src, n):
    return src[n.start_byte:n.end_byte].decode("utf-8", errors="replace")


def _field_children(node, field):
    return [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == field]


def _ident(name):
    return name[1:-1] if len(name) > 1 and name.startswith("`") and name.endswith("`") else name


def _type_chain(src, node):
    """The names a type declaration adds to the chain: `S` for `struct S<T>`, `Foo`, `Bar`
    for `extension Foo.Bar where ..`."""
    names = [c for c in _field_children(node, "name")]
    if not names:
        return []
    n = names[0]
    if n.type == "type_identifier":
        return [_ident(_text(src, n))]
    parts = [_ident(_text(src, c)) for c in n.children if c.type == "type_identifier"]
    return parts or [_ident(_text(src, n).split("<")[0].strip())]


def _is_static(src, node):
    for c in node.children:
        if c.type == "class" and not c.is_named:  # `class func`
            return True
        if c.type == "modifiers":
            for m in c.children:
                if m.type == "property_modifier" and _text(src, m).strip() in ("static", "class"):
                    return True
    return False


def _has_modifier(src, node, word):
    return any(c.type == "modifiers" and any(_text(src, m).strip() == word for m in c.children)
               for c in node.children)


def _params(src, node):
    """(params, signature labels) of a function, init or subscript: the count ("N+" for a
    lower bound) and the argument labels."""
    count, open_ended, labels = 0, False, []
    for i, c in enumerate(node.children):
        if node.field_name_for_child(i) == "default_value":
            open_ended = True
        if c.type != "parameter":
            continue
        count += 1
        if any(g.type == "..." for g in c.children):
            open_ended = True
        ext = [g for j, g in enumerate(c.children) if c.field_name_for_child(j) == "external_name"]
        own = [g for j, g in enumerate(c.children) if c.field_name_for_child(j) == "name"
               and g.type == "simple_identifier"]
        label = ext[0] if ext else (own[0] if own else None)
        labels.append(_ident(_text(src, label)) if label is not None else "_")
    return (f"{count}+" if open_ended else count), labels


def _func_name(src, node):
    """(name, is operator) of a function_declaration."""
    for i, c in enumerate(node.children):
        if node.field_name_for_child(i) == "name" and c.type == "simple_identifier":
            return _ident(_text(src, c)), False
    seen_func = False
    for c in node.children:
        if c.type == "func" and not c.is_named:
            seen_func = True
        elif seen_func and c.type not in ("(", "type_parameters"):
            return _text(src, c), True
        elif seen_func:
            break
    return None, False


def _property(src, node):
    """(name node, has accessors) of a property_declaration."""
    has = any(node.field_name_for_child(i) == "computed_value" or c.type == "willset_didset_block"
              for i, c in enumerate(node.children))
    pats = _field_children(node, "name")
    if not pats:
        return None, has
    ids = [c for i, c in enumerate(pats[0].children) if pats[0].field_name_for_child(i) == "bound_identifier"]
    return (ids[0] if ids else None), has


def file_units(src):
    """(units, requirements {protocol name: [requirement names]}, has a parse error) of a
    Swift file's bytes."""
    tree = parser().parse(src)
    units, reqs = [], {}

    def add(node, name, name_node, kind, chain, local, params=None, labels=None):
        u = {"name": name, "chain": list(chain), "kind": kind, "start": node.start_point[0] + 1,
             "name_line": (name_node or node).start_point[0] + 1, "end_line": node.end_point[0] + 1}
        if params is not None:
            u["params"] = params
            u["signature"] = f"{name}({''.join(l + ':' for l in labels)})"
        if local:
            u["local"] = True
        if _is_static(src, node):
            u["static"] = True
        if _has_modifier(src, node, "override"):
            u["override"] = True
        units.append(u)

    def walk(node, chain, local, in_body):
        """`local`: inside some unit's body; `in_body`: the innermost declaration around is a unit."""
        t = node.type
        if t in TYPE_KINDS:
            inner = chain + _type_chain(src, node)
            if t == "protocol_declaration":
                names = reqs.setdefault(".".join(inner), [])
                for d in _descendants(node, "protocol_function_declaration"):
                    n, _ = _func_name(src, d)
                    if n:
                        names.append(n)
            for c in node.children:
                walk(c, inner, local, False)
            return
        if t in UNIT_NODES:
            kind, name, name_node = None, None, None
            params = labels = None
            if t == "function_declaration" and any(node.field_name_for_child(i) == "body"
                                                   for i in range(node.child_count)):
                name, op = _func_name(src, node)
                name_node = next((c for i, c in enumerate(node.children)
                                  if node.field_name_for_child(i) == "name" and c.type == "simple_identifier"), None)
                params, labels = _params(src, node)
                if op:
                    kind = "operator"
                elif in_body:
                    kind = "local function"
                elif not chain:
                    kind = "function"
                else:
                    kind = "static method" if _is_static(src, node) else "method"
            elif t == "init_declaration" and _field_children(node, "body"):
                kind, name = "init", "init"
                params, labels = _params(src, node)
            elif t == "deinit_declaration":
                kind, name = "deinit", "deinit"
            elif t == "subscript_declaration":
                kind, name = "subscript", "subscript"
                params, labels = _params(src, node)
            elif t == "property_declaration":
                name_node, has = _property(src, node)
                if has and name_node is not None:
                    kind, name = "property", _ident(_text(src, name_node))
            if kind and name and name_node is None:  # the keyword or operator token names it
                name_node = next((c for c in node.children if c.type in (name, "init", "deinit", "subscript")), None)
            if kind and name:
                add(node, name, name_node, kind, chain, local, params, labels)
                for c in node.children:
                    walk(c, chain, True, True)
                return
        for c in node.children:
            walk(c, chain, local, in_body)

    walk(tree.root_node, [], False, False)
    return units, reqs, tree.root_node.has_error


def _descendants(node, kind):
    out, stack = [], [node]
    while stack:
        n = stack.pop()
        if n.type == kind:
            out.append(n)
        stack.extend(n.children)
    return out


def units(tree, files):
    """{path: {"units": [...], "requirements": {..}, "error": bool}} of files under `tree`."""
    out = {}
    for path in files:
        with open(os.path.join(tree, path), "rb") as f:
            us, reqs, err = file_units(f.read())
        out[path] = {"units": us, "requirements": reqs, "parse_error": err}
    return out


if __name__ == "__main__":  # python3 -m accuracy_oracle.swift_units TREE FILE..: the units as JSON
    import json
    json.dump(units(sys.argv[1], sys.argv[2:]), sys.stdout, indent=1)
    print()
