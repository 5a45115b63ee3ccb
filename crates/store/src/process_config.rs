//! Process-wide SQLite settings, chosen once before the first connection opens.
//!
//! SQLite keeps memory statistics by default, behind one global mutex taken on every
//! allocation: readers on separate connections then serialise on it (eight threads on
//! one workspace handle ran slower than one). The statistics are also what SQLite's
//! heap limit needs, which the query engine sets to bound user SQL. So the choice is
//! per process: a long-running host that serves many concurrent graph reads (a server)
//! turns them off with [`prefer_parallel_reads`] and runs user SQL in the worker
//! process, which keeps them; every other process keeps SQLite's default.

/// Turns SQLite's memory statistics off for this process, so concurrent readers do
/// not serialise on their mutex. Call it before any connection opens; returns false
/// when SQLite was already initialised (the setting then stays as it was). The query
/// engine's heap limit does not apply in such a process.
pub fn prefer_parallel_reads() -> bool {
    // SAFETY: sqlite3_config takes an int for this option; SQLite refuses it with
    // SQLITE_MISUSE, harmlessly, once initialised, and it is not called concurrently
    // with an initialisation here (hosts call it at start-up).
    let rc = unsafe {
        rusqlite::ffi::sqlite3_config(rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS, 0 as std::ffi::c_int)
    };
    rc == rusqlite::ffi::SQLITE_OK
}
