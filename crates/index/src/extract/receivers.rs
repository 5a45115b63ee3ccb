//! Receiver types, lite: what a file says about the type of a name, so that `x.m()`
//! records `m` with `x`'s type ([`Reference::receiver`](super::Reference::receiver)) and
//! resolution links only that type's `m`.
//!
//! Only what is written in the file counts: parameters and variables with a declared
//! type (`x: &Engine`, `x *Engine`, `x: Queue`), a Go method's receiver, struct fields
//! with a declared type, and constructors (`let x = Engine::new()`, `Engine { .. }`,
//! `x := &Engine{}`, `x = Queue()`, `self.q = Queue()`). A name is bound in the
//! innermost enclosing definition; a field in the enclosing type. One level of field
//! is followed (`self.router.add()`, `e.router.add()`), and chains of fields each
//! typed in this file (`o.inner.key.length()`, `o->next->key`); a call's result is
//! marked for resolution to type by what the callee returns (`Builder#build()`).

use tree_sitter::Node;

use super::Collector;
use super::fields::Fields;
use super::written::{call_result, split_at_last, split_qualified, strip_generics, type_name};

/// Most calls in one chain followed when typing an expression.
const MAX_CHAIN: usize = 8;

/// Methods whose result is (for a receiver's type) their receiver: `x.clone()`,
/// `x.unwrap()`.
const SAME_TYPE_METHODS: &[&str] = &["clone", "unwrap", "expect", "to_owned", "as_ref"];

/// `text` without its last balanced `( .. )` group, when it ends with one: the callee
/// of a call as written (`rt.handle().clone()` → `rt.handle().clone`).
fn callee(text: &str) -> Option<&str> {
    let text = text.trim();
    let body = text.strip_suffix(')')?;
    let mut depth = 1usize;
    for (i, ch) in body.char_indices().rev() {
        match ch {
            ')' => depth += 1,
            '(' => {
                depth -= 1;
                if depth == 0 {
                    return Some(body[..i].trim_end());
                }
            }
            _ => {}
        }
    }
    None
}

/// `a.b().c` / `p->c` split at its last member access (`.` or C++'s and PHP's `->`):
/// (`a.b()`, `c`).
fn split_member(text: &str) -> Option<(&str, &str)> {
    split_at_last(text, &[".", "->"])
}

impl Collector<'_> {
    /// Binds `name` to the result of calling `function` (see [`call_result`]).
    pub(crate) fn bind_call(&mut self, name: &str, function: &str) {
        if let Some(marker) = call_result(function) {
            let scope = self.current_symbol();
            self.types_mut().bind_var(scope, name, marker);
        }
    }

    /// The type (or call-result marker) of an expression as written: a bound name, a
    /// type's associated function (`Builder::new()`), or a method call on one of
    /// those (`Builder::new().build()` → `Builder#build()`), `clone()`/`unwrap()` kept.
    fn expression_type(&self, text: &str, depth: usize) -> Option<String> {
        let depth = depth.checked_sub(1)?;
        let text = text.trim().trim_end_matches('?');
        if text == "this" {
            return self.this_type().map(str::to_string);
        }
        if is_identifier(text) {
            return self.receiver_of(text);
        }
        let Some(function) = callee(text) else {
            // A chain of fields (`h.key.self()`'s `h.key`); no call in it, so
            // `receiver_of` does not come back here.
            return (!text.contains('('))
                .then(|| self.receiver_of(text))
                .flatten();
        };
        if let Some((inner, method)) = split_member(function) {
            let method = method.trim();
            if !is_identifier(method) {
                return None;
            }
            let inner = inner.trim();
            let base = self.expression_type(inner, depth).or_else(|| {
                // Kotlin's `FunSpec.builder(..)`: a member of the type `FunSpec` itself.
                (self.types().calls_on_types && is_identifier(inner) && type_like(inner))
                    .then(|| inner.to_string())
            })?;
            return Some(if SAME_TYPE_METHODS.contains(&method) {
                base
            } else {
                format!("{base}#{method}()")
            });
        }
        // `Type::f(..)` (type-like path): the type; `f(..)`: the function's result.
        let (path, _) = split_qualified(strip_generics(function));
        match path.map(|p| split_qualified(p).1) {
            Some(ty) if type_like(ty) => Some(ty.to_string()),
            Some(_) => None,
            None => call_result(function),
        }
    }

    /// Binds `name` to the result of the method call written `value` (`rt.handle()`,
    /// `rt.handle().clone()`): `T#handle()` when the receiver's type `T` is known (or
    /// is itself a call's result), for resolution to replace by what `T::handle`
    /// returns.
    pub(crate) fn bind_method_call(&mut self, name: &str, value: &str) -> bool {
        // A chain written over lines may carry line comments.
        let uncommented;
        let value = if value.contains("//") {
            uncommented = value
                .lines()
                .map(|l| l.split_once("//").map_or(l, |(code, _)| code))
                .collect::<Vec<_>>()
                .join("\n");
            uncommented.as_str()
        } else {
            value
        };
        let mut text = value.trim().trim_end_matches('?');
        let mut function = None;
        while let Some(f) = callee(text) {
            match split_member(f) {
                Some((inner, method)) if SAME_TYPE_METHODS.contains(&method.trim()) => {
                    text = inner.trim();
                }
                _ => {
                    function = Some(f);
                    break;
                }
            }
        }
        let Some(function) = function else {
            // `handle.clone()`: the receiver's own type.
            let Some(ty) = is_identifier(text)
                .then(|| self.receiver_of(text))
                .flatten()
            else {
                return false;
            };
            let scope = self.current_symbol();
            self.types_mut().bind_var(scope, name, ty);
            return true;
        };
        let Some((base, method)) = split_member(function) else {
            return false;
        };
        let method = method.trim();
        if !is_identifier(method) {
            return false;
        }
        let Some(base_type) = self.expression_type(base, MAX_CHAIN) else {
            return false;
        };
        let scope = self.current_symbol();
        self.types_mut()
            .bind_var(scope, name, format!("{base_type}#{method}()"));
        true
    }

    /// Binds `name` to a receiver marker resolution reads (a callback's parameter:
    /// `operate(@0.1)`, see `javascript.rs`), in the innermost definition.
    pub(crate) fn bind_marker(&mut self, name: &str, marker: String) {
        let scope = self.current_symbol();
        self.types_mut().bind_var(scope, name, marker);
    }

    /// Binds `name` to the type written as `written`, in the innermost definition.
    pub(crate) fn bind(&mut self, name: &str, written: &str) {
        let Some(ty) = self.resolve_self(type_name(written)) else {
            return;
        };
        let scope = self.current_symbol();
        self.types_mut().bind_var(scope, name, ty);
    }

    /// Binds `name` to the type path `ty` as it is (Kotlin's `FunSpec.Builder`, see
    /// [`super::written::type_path`]), not reduced to its last name.
    pub(crate) fn bind_path(&mut self, name: &str, ty: &str) {
        let scope = self.current_symbol();
        self.types_mut().bind_var(scope, name, ty.to_string());
    }

    /// The type `this` is bound to in the enclosing definitions (a Kotlin extension's
    /// extended type, TypeScript's declared `this: T`), if any.
    pub(crate) fn bound_this(&self) -> Option<String> {
        self.var_type("this").map(str::to_string)
    }

    /// Binds field `field` of the enclosing type to the type path `ty` as it is.
    pub(crate) fn bind_field_path(&mut self, field: &str, ty: &str) {
        let Some(owner) = self.enclosing_type().map(str::to_string) else {
            return;
        };
        self.types_mut().bind_field(owner, field, ty.to_string());
    }

    /// Binds field `field` of the enclosing type to the type written as `written`.
    pub(crate) fn bind_field(&mut self, field: &str, written: &str) {
        let Some(owner) = self.enclosing_type().map(str::to_string) else {
            return;
        };
        let Some(ty) = self.resolve_self(type_name(written)) else {
            return;
        };
        self.types_mut().bind_field(owner, field, ty);
    }

    /// `Self` is the enclosing type.
    fn resolve_self(&self, ty: Option<&str>) -> Option<String> {
        match ty? {
            "Self" => self.enclosing_type().map(str::to_string),
            ty => Some(ty.to_string()),
        }
    }

    /// The type of a qualifier as written, when the file says it: a bound name, or one
    /// field of `self`/`this` or of a bound name.
    pub(crate) fn receiver_of(&self, qualifier: &str) -> Option<String> {
        let q = without_identity_calls(qualifier.trim());
        if let Some(written) = cast_type(q) {
            return self.resolve_self(type_name(written));
        }
        // A call's result (`getChronology().range(f)`, `this.chrono().range(f)`): the
        // call, for resolution to replace by what the function it resolves to returns
        // (Python's `super()` is the class's base, which resolution finds itself).
        if callee(q).is_some_and(|f| f != "super") {
            return self.expression_type(q, MAX_CHAIN);
        }
        if is_identifier(q) {
            // A bound name, else a field of the enclosing type (Java's `engine.start()`).
            return self
                .var_type(q)
                .or_else(|| self.implicit_field(q))
                .map(str::to_string)
                .or_else(|| self.elsewhere_field(q));
        }
        // `base.field`, `base->a.b` (a chain of fields, each typed by the one before).
        let mut segments = q.split("->").flat_map(|s| s.split('.')).map(str::trim);
        let base = segments.next()?.trim_start_matches('$');
        let fields: Vec<&str> = segments.collect();
        if fields.is_empty() || !is_identifier(base) || !fields.iter().all(|f| is_identifier(f)) {
            return None;
        }
        // Once a field is not typed here (C++: declared in a header), the rest of the
        // chain is a marker resolution follows (`Holder#inner#key`).
        let mut marked = false;
        let mut owner = match base {
            "this" => self.this_type()?.to_string(),
            "self" => self.enclosing_type()?.to_string(),
            _ => match self.var_type(base).or_else(|| self.implicit_field(base)) {
                Some(owner) => owner.to_string(),
                // A field of the class of a C++ method defined out of line, declared in
                // the header (`m_xf.q.Set(a)` in `void b2Body::f()`): `b2Body#m_xf`.
                None if let Some(marker) = self.elsewhere_field(base) => {
                    marked = true;
                    marker
                }
                // A type's static field (`IsoChronology.INSTANCE`): typed here when this
                // file declares it, else marked for resolution to look up
                // (`IsoChronology#INSTANCE`, see `resolve/static_fields.rs`).
                None if type_like(base) && fields.len() == 1 => {
                    let field = fields[0];
                    return Some(
                        self.types()
                            .field(base, field)
                            .map_or_else(|| format!("{base}#{field}"), str::to_string),
                    );
                }
                None => return None,
            },
        };
        for field in fields {
            if marked {
                owner = format!("{owner}#{field}");
                continue;
            }
            match self.types().field(&owner, field) {
                Some(ty) => owner = ty.to_string(),
                None if self.types().fields_elsewhere && is_plain_type(&owner) => {
                    owner = format!("{owner}#{field}");
                    marked = true;
                }
                None => return None,
            }
        }
        Some(owner)
    }

    /// A bare name in a C++ method defined out of line (`void Holder::f() { key_.g(); }`)
    /// that this file binds to nothing: the class's field of that name, when there is
    /// one, declared in another file (the header), marked `Holder#key_`. Resolution
    /// answers by name, as for any untyped receiver, when the class has no such field.
    fn elsewhere_field(&self, name: &str) -> Option<String> {
        if !self.types().fields_elsewhere {
            return None;
        }
        let owner = self.var_type("this").filter(|o| is_plain_type(o))?;
        Some(format!("{owner}#{name}"))
    }

    /// A bare name that is a field of the enclosing type (Java's `engine.start()`, a C++
    /// member used in a method defined out of line, where `this` is bound).
    fn implicit_field(&self, name: &str) -> Option<&str> {
        let owner = self.this_type()?;
        self.types().field(owner, name)
    }

    /// `this`: a function's declared `this: T` (TypeScript) before the enclosing class.
    fn this_type(&self) -> Option<&str> {
        self.var_type("this").or_else(|| self.enclosing_type())
    }

    fn var_type(&self, name: &str) -> Option<&str> {
        let types = self.types();
        self.enclosing_symbols()
            .chain([None])
            .find_map(|scope| types.var(scope, name))
    }
}

/// The type a parenthesized cast names (`((JapaneseDate) object)` → `JapaneseDate`,
/// `((Map<K, V>) m)` → `Map<K, V>`): C-family languages write a cast as `(Type) value`,
/// and `((Type) value).m()` calls `Type`'s `m`.
fn cast_type(q: &str) -> Option<&str> {
    let inner = q.strip_prefix('(')?.strip_suffix(')')?.trim();
    let rest = inner.strip_prefix('(')?;
    let close = rest.find(')')?;
    let (written, value) = (rest[..close].trim(), rest[close + 1..].trim());
    let plain = |t: &str| {
        t.chars().all(|c| {
            c.is_alphanumeric() || matches!(c, '_' | '.' | '<' | '>' | ',' | ' ' | '?' | '$')
        })
    };
    (!written.is_empty()
        && written.starts_with(|c: char| c.is_alphabetic())
        && plain(written)
        && is_identifier(value))
    .then_some(written)
}

/// Methods that give a view of the same value (`self.delay.as_mut()` is the pinned
/// `Sleep` `self.delay` holds, `sem.clone()` another handle to the same semaphore).
const IDENTITY_METHODS: &[&str] = &[
    "as_mut",
    "as_ref",
    "clone",
    "borrow",
    "borrow_mut",
    "get_mut",
    "get_ref",
    "deref",
    "deref_mut",
];

/// `q` without the identity calls it ends with (`self.delay.as_mut()` → `self.delay`).
fn without_identity_calls(mut q: &str) -> &str {
    while let Some((rest, method)) = q.strip_suffix("()").and_then(|c| c.rsplit_once('.'))
        && IDENTITY_METHODS.contains(&method)
    {
        q = rest.trim_end();
    }
    q
}

/// A type's name, not a marker for resolution (`T#m()`, `T#field`, `f()`).
fn is_plain_type(ty: &str) -> bool {
    !ty.contains(['#', '(', '@'])
}

fn is_identifier(text: &str) -> bool {
    !text.is_empty()
        && text
            .chars()
            .all(|ch| ch.is_alphanumeric() || ch == '_' || ch == '$')
}

/// Whether a name is written like a type (`Engine`, not `engine`): what a constructor
/// call looks like where types and functions share the call syntax.
fn type_like(name: &str) -> bool {
    name.starts_with(|ch: char| ch.is_uppercase())
}

/// Rust: `x: T` parameters, `let x: T` / `let x = T::new()` / `T { .. }`, struct fields.
pub(crate) fn rust(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "parameter" => {
            if let (Some(pattern), Some(ty)) = (node.field("pattern"), c.field_text(node, "type"))
                && pattern.kind() == "identifier"
            {
                let name = c.text(pattern);
                c.bind(name, ty);
            }
        }
        "let_declaration" => {
            let Some(pattern) = node.field("pattern").filter(|p| p.kind() == "identifier") else {
                return;
            };
            let name = c.text(pattern);
            let value = node.field("value");
            let ty = c
                .field_text(node, "type")
                .map(str::to_string)
                .or_else(|| rust_constructed(c, value?));
            match (ty, value) {
                (Some(ty), _) => c.bind(name, &ty),
                (None, Some(v)) if v.kind() == "call_expression" => {
                    let text = c.text(v);
                    if !c.bind_method_call(name, text)
                        && let Some(f) = c.field_text(v, "function")
                    {
                        c.bind_call(name, f);
                    }
                }
                _ => {}
            }
        }
        "field_declaration" => {
            if let (Some(name), Some(ty)) = (c.field_text(node, "name"), c.field_text(node, "type"))
            {
                c.bind_field(name, ty);
            }
        }
        _ => {}
    }
}

/// The type a Rust expression constructs: `T::new(..)` (any associated function of a
/// type-like path), `T { .. }`, `&T { .. }`, and those through `?`, `.unwrap()`,
/// `.expect(..)`.
fn rust_constructed(c: &Collector<'_>, value: Node<'_>) -> Option<String> {
    // A loop, not recursion: `((((..))))` nests as deep as the input does.
    let mut value = value;
    loop {
        value = match value.kind() {
            "struct_expression" => return c.field_text(value, "name").map(str::to_string),
            "reference_expression" | "try_expression" | "parenthesized_expression" => {
                value.named_child(value.named_child_count().checked_sub(1)?)?
            }
            "call_expression" => {
                let function = value.field("function")?;
                match function.kind() {
                    "scoped_identifier" => {
                        let path = c.field_text(function, "path")?;
                        let (_, ty) = split_qualified(strip_generics(path));
                        // `Arc::new(Semaphore::new(1))`, `Box::pin(sleep)`: the value
                        // wrapped, as a written `Arc<Semaphore>` is a `Semaphore`.
                        let wraps = super::written::is_deref_wrapper(ty)
                            && matches!(c.field_text(function, "name")?, "new" | "pin" | "from");
                        if !wraps {
                            return type_like(ty).then(|| ty.to_string());
                        }
                        value.field("arguments")?.named_child(0)?
                    }
                    "field_expression"
                        if matches!(c.field_text(function, "field")?, "unwrap" | "expect") =>
                    {
                        function.field("value")?
                    }
                    // `sem.clone()`: the type `sem` has.
                    "field_expression"
                        if IDENTITY_METHODS.contains(&c.field_text(function, "field")?) =>
                    {
                        function.field("value")?
                    }
                    _ => return None,
                }
            }
            // A copy of a typed name or field (a call's result is followed by
            // `bind_method_call` instead).
            "identifier" | "field_expression" => {
                return c.receiver_of(c.text(value)).filter(|t| !t.contains('('));
            }
            _ => return None,
        };
    }
}

/// Go: parameters and receivers (`e *Engine`), `var x T`, `x := &T{}` / `T{}`, `x := y` /
/// `x := y.f` of a typed name or field, struct fields.
pub(crate) fn go(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "parameter_declaration" | "var_spec" => {
            let Some(ty) = c.field_text(node, "type") else {
                return;
            };
            let mut cursor = node.walk();
            let names: Vec<&str> = node
                .children_by_field_name("name", &mut cursor)
                .map(|n| c.text(n))
                .collect();
            for name in names {
                c.bind(name, ty);
            }
        }
        "field_declaration" => {
            let Some(ty) = c.field_text(node, "type") else {
                return;
            };
            let mut cursor = node.walk();
            let names: Vec<&str> = node
                .children_by_field_name("name", &mut cursor)
                .map(|n| c.text(n))
                .collect();
            for name in names {
                c.bind_field(name, ty);
            }
        }
        "short_var_declaration" | "assignment_statement" => {
            let (Some(left), Some(right)) = (node.field("left"), node.field("right")) else {
                return;
            };
            let names = super::nodes::named_children(left);
            let values = super::nodes::named_children(right);
            for (name, value) in names.iter().zip(&values) {
                if name.kind() != "identifier" {
                    continue;
                }
                let name = c.text(*name);
                if let Some(ty) = go_constructed(c, *value) {
                    c.bind(name, &ty);
                } else if matches!(value.kind(), "identifier" | "selector_expression")
                    && let Some(ty) = c.receiver_of(c.text(*value))
                {
                    // `w := cw.res`, `req := w.req`: the type of what is copied.
                    c.bind(name, &ty);
                } else if value.kind() == "call_expression"
                    && !c.bind_method_call(name, c.text(*value))
                    && let Some(f) = c.field_text(*value, "function")
                {
                    c.bind_call(name, f);
                }
            }
        }
        _ => {}
    }
}

/// `T{..}`, `&T{..}`, `pkg.T{..}`, `new(T)`.
fn go_constructed(c: &Collector<'_>, value: Node<'_>) -> Option<String> {
    // A loop, not recursion: `&&&..T{}` nests as deep as the input does.
    let mut value = value;
    loop {
        value = match value.kind() {
            "composite_literal" => return c.field_text(value, "type").map(str::to_string),
            "unary_expression" => value.field("operand")?,
            "call_expression" if c.field_text(value, "function") == Some("new") => {
                let args = value.field("arguments")?;
                return args.named_child(0).map(|t| c.text(t).to_string());
            }
            _ => return None,
        };
    }
}

/// Python: annotated parameters and assignments, `x = Class()`, `self.x = Class()`.
pub(crate) fn python(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "typed_parameter" => {
            let ty = c.field_text(node, "type");
            let name = super::nodes::named_children(node)
                .into_iter()
                .find(|n| n.kind() == "identifier")
                .map(|n| c.text(n));
            if let (Some(name), Some(ty)) = (name, ty) {
                c.bind(name, ty);
            }
        }
        "typed_default_parameter" => {
            if let (Some(name), Some(ty)) = (c.field_text(node, "name"), c.field_text(node, "type"))
            {
                c.bind(name, ty);
            }
        }
        "assignment" => {
            let Some(left) = node.field("left") else {
                return;
            };
            let right = node.field("right");
            let ty = c
                .field_text(node, "type")
                .map(str::to_string)
                .or_else(|| python_constructed(c, right?));
            let Some(ty) = ty else {
                if left.kind() == "identifier"
                    && let Some(call) = right.filter(|r| r.kind() == "call")
                {
                    let name = c.text(left);
                    if !c.bind_method_call(name, c.text(call))
                        && let Some(f) = c.field_text(call, "function")
                    {
                        c.bind_call(name, f);
                    }
                }
                return;
            };
            match left.kind() {
                "identifier" => {
                    let name = c.text(left);
                    c.bind(name, &ty);
                }
                "attribute" => {
                    let object = left.field("object").map(|o| c.text(o));
                    if matches!(object, Some("self" | "cls"))
                        && let Some(field) = c.field_text(left, "attribute")
                    {
                        c.bind_field(field, &ty);
                    }
                }
                _ => {}
            }
        }
        _ => {}
    }
}

/// Python's builtin containers a literal or a call makes (`{}`, `[x for ..]`,
/// `dict(..)`): a receiver of one of these is no class of the workspace.
const PYTHON_BUILTINS: &[&str] = &["dict", "list", "set", "frozenset", "tuple", "str", "bytes"];

/// `Class(..)` / `mod.Class(..)`: a call of a type-like name; a literal or a call of a
/// builtin container (`{}`, `[..]`, `dict(..)`, `"text"`): that builtin.
fn python_constructed(c: &Collector<'_>, value: Node<'_>) -> Option<String> {
    let literal = match value.kind() {
        "dictionary" | "dictionary_comprehension" => Some("dict"),
        "list" | "list_comprehension" => Some("list"),
        "set" | "set_comprehension" => Some("set"),
        "tuple" => Some("tuple"),
        "string" | "concatenated_string" => Some("str"),
        _ => None,
    };
    if let Some(builtin) = literal {
        return Some(builtin.to_string());
    }
    if value.kind() != "call" {
        return None;
    }
    let function = c.field_text(value, "function")?;
    if PYTHON_BUILTINS.contains(&function) {
        return Some(function.to_string());
    }
    let (_, name) = split_qualified(function);
    type_like(name).then(|| name.to_string())
}

/// Java: typed locals, fields and parameters (`Foo x`, `var x = new Foo()`).
pub(crate) fn java(c: &mut Collector<'_>, node: Node<'_>) {
    match node.kind() {
        "local_variable_declaration" | "field_declaration" => {
            let Some(ty) = c.field_text(node, "type") else {
                return;
            };
            let field = node.kind() == "field_declaration";
            let mut cursor = node.walk();
            let declarators: Vec<Node<'_>> = node
                .children_by_field_name("declarator", &mut cursor)
                .collect();
            for d in declarators {
                let Some(name) = c.field_text(d, "name") else {
                    continue;
                };
                let ty = if ty == "var" {
                    let value = d.field("value");
                    match value.filter(|v| v.kind() == "object_creation_expression") {
                        Some(v) => c.field_text(v, "type").unwrap_or_default().to_string(),
                        None => continue,
                    }
                } else {
                    ty.to_string()
                };
                if field {
                    c.bind_field(name, &ty);
                } else {
                    c.bind(name, &ty);
                }
            }
        }
        "formal_parameter" => {
            if let (Some(name), Some(ty)) = (c.field_text(node, "name"), c.field_text(node, "type"))
            {
                c.bind(name, ty);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod cast_tests {
    use super::cast_type;

    #[test]
    fn a_parenthesized_cast_names_its_type() {
        assert_eq!(cast_type("((JapaneseDate) object)"), Some("JapaneseDate"));
        assert_eq!(
            cast_type("((ChronoLocalDateTimeImpl<?>) object)"),
            Some("ChronoLocalDateTimeImpl<?>")
        );
        assert_eq!(cast_type("((Map<K, V>) m)"), Some("Map<K, V>"));
        // Not casts: a call, a grouping, an expression in the parentheses.
        for q in [
            "(a)(b)",
            "(x)",
            "((a + b) c)",
            "((Foo) a.b())",
            "((1) x)",
            "(())",
        ] {
            assert_eq!(cast_type(q), None, "{q}");
        }
    }
}
