//! Go's bare calls: `F(x)` names a function of the caller's own package, never a
//! method (Go has no implicit receiver), never another package's `F`; `Month(m)` and
//! `byte(x)` are conversions, not calls of the methods `Time.Month` or `dataIO.byte`.

use crate::common;

use loci_index::graph::Graph;

const TIME: &str = "package time

type Time struct{ sec int64 }

type Month int

func (t Time) Unix() int64 { return t.sec }

func (t Time) Month() Month { return Month(t.sec % 12) }

func (t Time) Date() (int, Month, int) { return 0, t.Month(), 0 }

func Unix(sec int64) Time { return Time{sec} }

func Date(y int, m Month, d int) Time { return Unix(int64(y)) }

func UnixMilli(ms int64) Time { return Unix(ms / 1000) }

func parse(v int) Time { return Date(v, Month(v), 1) }

func later(t Time) int64 { return t.Unix() + 1 }
";

const DATA: &str = "package time

type dataIO struct{ p []byte }

func (d *dataIO) byte() (byte, bool) { return d.p[0], true }

func (d *dataIO) read(n int) []byte { return d.p[:n] }

func encode(x int) []byte { return []byte{byte(x), byte(x >> 8)} }

func load(f int, buf []byte) int { return read(f, buf) }
";

const SYS: &str = "package time

func read(fd int, buf []byte) int { return len(buf) }
";

const OTHER: &str = "package clock

func Unix(sec int64) int64 { return sec }

func UnixMilli(ms int64) int64 { return Unix(ms) }
";

fn tree() -> (tempfile::TempDir, Graph) {
    common::indexed_graph(&[
        ("time/time.go", TIME),
        ("time/data.go", DATA),
        ("time/sys_unix.go", SYS),
        ("clock/clock.go", OTHER),
    ])
}

#[test]
fn a_bare_call_reaches_a_function_of_its_own_package_never_a_method() {
    let (_dir, g) = tree();
    assert_eq!(
        common::caller_names(&g, "time/time.go:13"),
        ["Date", "UnixMilli"]
    );
    // Only `t.Unix()` calls the method.
    assert_eq!(common::caller_names(&g, "Time.Unix"), ["later"]);
    // (`time.go:13` and `time.go:15` are the functions `Unix` and `Date`: the bare names
    // are ambiguous with the methods.) `Date(..)` is the function; `Month(v)` and
    // `Month(t.sec % 12)` convert.
    assert_eq!(common::caller_names(&g, "time/time.go:15"), ["parse"]);
    assert!(common::caller_names(&g, "Time.Date").is_empty());
    assert_eq!(common::caller_names(&g, "Time.Month"), ["Time.Date"]);
    // `byte(x)` converts; `read(f, buf)` is the package's function, not the method of
    // the same name in the caller's own file.
    assert!(common::caller_names(&g, "dataIO.byte").is_empty());
    assert!(common::caller_names(&g, "dataIO.read").is_empty());
    assert_eq!(common::caller_names(&g, "time/sys_unix.go:read"), ["load"]);
    // Each package's bare `Unix(..)` is its own.
    assert_eq!(
        common::caller_names(&g, "clock/clock.go:Unix"),
        ["UnixMilli"]
    );
}
