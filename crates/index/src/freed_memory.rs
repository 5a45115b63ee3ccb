//! Giving freed memory back to the system between the phases of a large run.
//!
//! glibc's allocator keeps what a thread frees in that thread's arena for reuse; after a
//! phase that built and dropped large structures on several threads (a million gathered
//! facts, a chunk's symbol table and edges) the process holds it all, and its resident
//! size ratchets up with every chunk. Measured on a 50,000-file tree (1.6 M
//! definitions, 11 M edges): 1.1 GB peak before, about 0.6 GB with this and the
//! bounded symbol tables and sorts (docs/performance.md).

/// Returns the allocator's free memory to the system (glibc `malloc_trim`); a no-op
/// where the allocator is not glibc's.
pub(crate) fn release() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only releases memory the allocator holds free; it takes no
    // pointer and may be called from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}
