//! C++ receivers whose type the code states: parameters (`const Key &k`, `Key *k`),
//! locals (`ns::Key k;`, `auto k = new Key;`, `auto k = std::make_unique<Key>()`),
//! smart pointers (`std::unique_ptr<Key>`), fields of a class body, and `this` in a
//! method defined out of line; receivers of a type the workspace does not define
//! (`std::string s; s.length()`), which reach none of its same-named methods; and
//! overloads told apart by how many arguments a call passes.

use crate::common;

const FILES: &[(&str, &str)] = &[
    (
        "key.h",
        "#include <memory>
#include <string>
namespace ns {
class Key {
 public:
  int length() const { return n_; }
  void set(const char *p);
  void set(const char *p, int n);
 private:
  int n_;
};
class Entry {
 public:
  int length() const { return 2; }
};
template <typename T>
class Box {
 public:
  int size() { return item.length(); }
  T item;
};
class Holder {
 public:
  int inline_field() { return key_.length(); }
  int through_this();
  Entry entry_;
  Key key_;
};
class Other {
 public:
  int inline_field() { return 0; }
};
}
",
    ),
    (
        "use.cc",
        "#include \"key.h\"
namespace ns {
void Key::set(const char *p) { set(p, 1); }
void Key::set(const char *p, int n) { n_ = n; }
int by_ref(const Key &key) { return key.length(); }
int by_ptr(Key *key) { return key->length(); }
int local() { ns::Key k; return k.length(); }
int made() { auto k = new Key(); return k->length(); }
int owned() { auto k = std::make_unique<Key>(); return k->length(); }
int smart(std::unique_ptr<Entry> e) { return e->length(); }
int library(const std::string &s) { return s.length(); }
int Holder::through_this() { return this->inline_field(); }
void two(Key &k) { k.set(\"a\", 1); }
}
",
    ),
];

#[test]
fn stated_receivers_pick_their_types_methods_only() {
    let (_dir, g) = common::indexed_graph(FILES);
    assert_eq!(
        common::caller_names(&g, "Key.length"),
        [
            "ns::Box::size",
            "ns::Holder::inline_field",
            "ns::by_ptr",
            "ns::by_ref",
            "ns::local",
            "ns::made",
            "ns::owned"
        ]
    );
    // `item.length()` on a template parameter's `T` is answered by name: both.
    assert_eq!(
        common::caller_names(&g, "Entry.length"),
        ["ns::Box::size", "ns::smart"]
    );
    // `this` in a method defined out of line is its class.
    assert_eq!(
        common::caller_names(&g, "Holder.inline_field"),
        ["ns::Holder::through_this"]
    );
    assert!(common::caller_names(&g, "Other.inline_field").is_empty());
}

#[test]
fn overloads_are_told_apart_by_their_arguments() {
    let (_dir, g) = common::indexed_graph(FILES);
    assert_eq!(
        common::caller_names(&g, "use.cc:Key.set/2"),
        ["ns::Key::set", "ns::two"]
    );
    assert!(common::caller_names(&g, "use.cc:Key.set/1").is_empty());
}

/// Results of calls: `auto x = f();` is what `f` returns, `f().m()` calls a member of
/// what `f` returns, `x.g().m()` of what `g` returns; and chains of fields
/// (`o.inner.a.length()`, `o->next->b.length()`), each field typed in its class body.
/// A method defined out of line reaches its class's fields by their bare names.
/// Field names say nothing of their types, so only the types decide.
const RESULTS: &[(&str, &str)] = &[
    (
        "make.cc",
        "namespace ns {
class Key {
 public:
  int length() const { return 1; }
};
Key make_key() { return Key(); }
}
",
    ),
    (
        "use.cc",
        "namespace ns {
class Key;
class Entry {
 public:
  int length() const { return 2; }
};
class Holder {
 public:
  const Entry &entry() const { return b; }
  Key *key_ptr();
  int member() const;
  Entry b;
  Key a;
};
class Outer {
 public:
  Holder inner;
  Holder *next;
};
Key *Holder::key_ptr() { return &a; }
int Holder::member() const { return b.length(); }
int auto_from_function() { auto k = make_key(); return k.length(); }
int auto_from_method(Holder &h) { auto e = h.entry(); return e.length(); }
int auto_from_pointer(Holder *h) { auto p = h->key_ptr(); return p->length(); }
int chained_call() { return make_key().length(); }
int chained_method(Holder h) { return h.key_ptr()->length(); }
int field_chain(Outer o) { return o.inner.a.length(); }
int arrow_chain(Outer *o) { return o->next->b.length(); }
int implicit_field_chain(Outer o) { return o.inner.b.length(); }
}
",
    ),
];

#[test]
fn call_results_and_field_chains_type_their_receivers() {
    let (_dir, g) = common::indexed_graph(RESULTS);
    assert_eq!(
        common::caller_names(&g, "Key.length"),
        [
            "ns::auto_from_function",
            "ns::auto_from_pointer",
            "ns::chained_call",
            "ns::chained_method",
            "ns::field_chain"
        ]
    );
    assert_eq!(
        common::caller_names(&g, "Entry.length"),
        [
            "ns::Holder::member",
            "ns::arrow_chain",
            "ns::auto_from_method",
            "ns::implicit_field_chain"
        ]
    );
}

/// Data members declared in a header and used in a `.cc`: bare in a method defined
/// out of line (`b.length()`, `inner.a.length()`), through a typed name (`h.a.length()`), `this->`, a
/// chain of fields each declared in a header (`o.inner.a.length()`), and a call on a
/// field (`h.a.self().length()`, what `Key::self` returns). A bare name that is no
/// field of the class (`param.length()` on a template parameter) is answered by name.
const HEADER_FIELDS: &[(&str, &str)] = &[
    (
        "types.h",
        "namespace ns {
class Key {
 public:
  int length() const { return 1; }
  Key &self() { return *this; }
};
class Entry {
 public:
  int length() const { return 2; }
};
class Holder {
 public:
  int bare() const;
  int through_this() const;
  template <typename T> int generic(T param) const;
  Entry b;
  Key a;
  int n;
};
struct Outer {
  int bare_chain() const;
  int bare_arrow() const;
  Holder inner;
  Holder *next;
};
}
",
    ),
    (
        "holder.cc",
        "#include \"types.h\"
namespace ns {
int Holder::bare() const { return b.length(); }
int Outer::bare_chain() const { return inner.a.length(); }
int Outer::bare_arrow() const { return next->b.length(); }
int Holder::through_this() const { return this->a.length(); }
template <typename T> int Holder::generic(T param) const { return param.length(); }
int typed_name(const Holder &h) { return h.a.length(); }
int chain(Outer o) { return o.inner.a.length(); }
int arrow_chain(Outer *o) { return o->next->b.length(); }
int on_a_call(Holder &h) { return h.a.self().length(); }
}
",
    ),
];

#[test]
fn fields_declared_in_a_header_type_their_uses_elsewhere() {
    let (_dir, g) = common::indexed_graph(HEADER_FIELDS);
    assert_eq!(
        common::caller_names(&g, "Key.length"),
        [
            "ns::Holder::generic",
            "ns::Holder::through_this",
            "ns::Outer::bare_chain",
            "ns::chain",
            "ns::on_a_call",
            "ns::typed_name"
        ]
    );
    assert_eq!(
        common::caller_names(&g, "Entry.length"),
        [
            "ns::Holder::bare",
            "ns::Holder::generic",
            "ns::Outer::bare_arrow",
            "ns::arrow_chain"
        ]
    );
}

/// A `const` and a non-`const` overload of an accessor return the same type: a call on
/// its result (`s.buf().size()`) is that type's member, not any same-named one.
const ACCESSOR_PAIR: &[(&str, &str)] = &[(
    "state.h",
    "class Buf {
 public:
  int size() const { return 0; }
};
class Other {
 public:
  int size() const { return 1; }
};
class State {
 public:
  const Buf &buf() const { return b_; }
  Buf &buf() { return b_; }
 private:
  Buf b_;
};
int use(State &s) { return s.buf().size(); }
",
)];

#[test]
fn overloads_returning_one_type_type_their_result() {
    let (_dir, g) = common::indexed_graph(ACCESSOR_PAIR);
    assert_eq!(common::caller_names(&g, "Buf.size"), ["use"]);
    assert!(common::caller_names(&g, "Other.size").is_empty());
}
