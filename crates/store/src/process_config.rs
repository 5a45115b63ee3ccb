//! Process-wide SQLite settings, applied once before the first connection opens.
//!
//! SQLite keeps memory statistics by default, behind one global mutex taken on every
//! allocation: readers on separate connections then serialise on it, and eight threads
//! on one workspace ran slower than one. loci never reads those statistics.

use std::sync::Once;

static CONFIGURED: Once = Once::new();

/// Turns SQLite's memory statistics off, once, before SQLite initialises.
pub(crate) fn configure() {
    CONFIGURED.call_once(|| {
        // SAFETY: sqlite3_config is called once, before any connection is opened by
        // this process through loci (SQLite refuses it with SQLITE_MISUSE, harmlessly,
        // if it was already initialised); the variadic argument is the int the option
        // takes.
        let rc = unsafe {
            rusqlite::ffi::sqlite3_config(
                rusqlite::ffi::SQLITE_CONFIG_MEMSTATUS,
                0 as std::ffi::c_int,
            )
        };
        if rc != rusqlite::ffi::SQLITE_OK {
            tracing::debug!(rc, "SQLite memory statistics stay on (already initialised)");
        }
    });
}
