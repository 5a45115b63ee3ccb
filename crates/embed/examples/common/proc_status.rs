//! A field of `/proc/self/status` for the benchmarks' memory figures (`VmRSS`,
//! `VmHWM`), shared by the `embed_bench` and `e5_bench` examples through `#[path]`.

/// The `kB` value of `field` in `/proc/self/status` (0 where there is none).
pub fn status_kb(field: &str) -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with(field))
                .and_then(|l| l.split_whitespace().nth(1)?.parse().ok())
        })
        .unwrap_or(0.0)
}
