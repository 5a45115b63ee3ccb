//! The process's resident memory, for the debug log of a large run: where a run's
//! memory goes is read from its log, phase by phase, without a profiler.

/// Resident set size in MiB (`/proc/self/statm`), `None` where there is no procfs.
pub(crate) fn resident_mib() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf only reads a configuration value.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()? / (1 << 20))
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_running_process_has_some_resident_memory() {
        let mib = super::resident_mib().expect("procfs on Linux");
        assert!((1..1 << 20).contains(&mib), "{mib} MiB");
    }
}
