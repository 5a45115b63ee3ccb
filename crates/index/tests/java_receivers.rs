//! Java receivers whose type the code states without a local declaration: a cast
//! (`((Circle) s).area()`), a type's static field (`Registry.INSTANCE.lookup()`), a
//! call's result (`getChrono().range(f)`, `this.getChrono().range(f)`); and receivers
//! of a type the workspace does not define (`StringBuilder buf; buf.append(s)`), which
//! reach none of the workspace's same-named methods but its subtypes' overrides.

use crate::common;

const FILES: &[(&str, &str)] = &[
    (
        "p/Circle.java",
        "package p;\n\npublic class Circle {\n    public double area() { return 1; }\n}\n",
    ),
    (
        "p/Square.java",
        "package p;\n\npublic class Square {\n    public double area() { return 2; }\n}\n",
    ),
    (
        "p/Registry.java",
        "package p;\n\npublic class Registry {\n    public static final Registry INSTANCE = new Registry();\n    public int lookup(String k) { return 0; }\n}\n",
    ),
    (
        "p/Cache.java",
        "package p;\n\npublic class Cache {\n    public int lookup(String k) { return 1; }\n}\n",
    ),
    (
        "p/Chrono.java",
        "package p;\n\npublic class Chrono {\n    public int range(int f) { return f; }\n}\n",
    ),
    (
        "p/Other.java",
        "package p;\n\npublic class Other {\n    public int range(int f) { return f; }\n    public void append(String s) {}\n    public char charAt(int i) { return 'x'; }\n}\n",
    ),
    (
        "p/Text.java",
        "package p;\n\npublic class Text implements CharSequence {\n    public char charAt(int i) { return 'y'; }\n    public int length() { return 1; }\n    public CharSequence subSequence(int a, int b) { return this; }\n}\n",
    ),
    (
        "p/Holder.java",
        "package p;\n\npublic class Holder<T> {\n    T value;\n    int size() { return value.range(1); }\n}\n",
    ),
    (
        "p/Use.java",
        "package p;

public class Use {
    public Chrono getChrono() { return new Chrono(); }

    double cast(Object s) {
        return ((Circle) s).area();
    }

    int field(String k) {
        return Registry.INSTANCE.lookup(k);
    }

    int result(int f) {
        return getChrono().range(f) + this.getChrono().range(f);
    }

    String foreign(StringBuilder buf, CharSequence cs, String s) {
        buf.append(s);
        return \"\" + cs.charAt(0) + s.charAt(1);
    }
}
",
    ),
];

#[test]
fn stated_receivers_pick_their_types_methods_only() {
    let (_dir, g) = common::indexed_graph(FILES);
    assert_eq!(common::caller_names(&g, "Circle.area"), ["Use.cast"]);
    assert!(common::caller_names(&g, "Square.area").is_empty());
    assert_eq!(common::caller_names(&g, "Registry.lookup"), ["Use.field"]);
    assert!(common::caller_names(&g, "Cache.lookup").is_empty());
    // `value.range(1)` on a type variable is still answered by name: both `range`s.
    assert_eq!(
        common::caller_names(&g, "Chrono.range"),
        ["Holder.size", "Use.result"]
    );
    assert_eq!(common::caller_names(&g, "Other.range"), ["Holder.size"]);
}

#[test]
fn a_receiver_of_a_library_type_reaches_only_workspace_subtypes() {
    let (_dir, g) = common::indexed_graph(FILES);
    // `StringBuilder` and `String` are the JDK's: not `Other.append` / `Other.charAt`.
    assert!(common::caller_names(&g, "Other.append").is_empty());
    assert!(common::caller_names(&g, "Other.charAt").is_empty());
    // `CharSequence`'s `charAt` may run the workspace's own implementation of it.
    assert_eq!(common::caller_names(&g, "Text.charAt"), ["Use.foreign"]);
}

#[test]
fn a_bare_call_reaches_the_method_a_class_inherits() {
    let (_dir, g) = common::indexed_graph(&[
        (
            "p/Dated.java",
            "package p;\n\npublic interface Dated {\n    default int compareTo(Dated o) { return 0; }\n}\n",
        ),
        (
            "p/Money.java",
            "package p;\n\npublic class Money {\n    public int compareTo(Money o) { return 1; }\n}\n",
        ),
        (
            "p/Day.java",
            "package p;

public class Day implements Dated {
    boolean same(Dated o) { return compareTo(o) == 0; }

    int helper() { return 2; }

    class Inner {
        int outer() { return helper(); }
    }
}
",
        ),
    ]);
    // The interface's default method, not the unrelated `Money.compareTo`.
    assert_eq!(common::caller_names(&g, "Dated.compareTo"), ["Day.same"]);
    assert!(common::caller_names(&g, "Money.compareTo").is_empty());
    // An inner class's bare call of its outer class's method is still found.
    assert_eq!(common::caller_names(&g, "Day.helper"), ["Day.Inner.outer"]);
}
