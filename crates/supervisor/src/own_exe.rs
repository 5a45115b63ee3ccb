//! The running binary as a program a child can execute, whatever happened since to the
//! file it was started from: an upgrade renames a new binary over it, or deletes it, and
//! a long-lived server must still start its workers and maintenance runs from the code
//! it runs.

use std::path::PathBuf;

/// The program a child runs to run this process's own binary again.
///
/// On Linux, `/proc/self/exe`: a child resolves it while it starts, before it executes
/// anything, as the image of the process that started it. The kernel keeps that image
/// for as long as the process runs, so it is the same binary even after its file was
/// replaced or deleted (a path from [`std::env::current_exe`] would then name the new
/// file, or nothing). Elsewhere, [`std::env::current_exe`].
pub fn own_executable() -> std::io::Result<PathBuf> {
    #[cfg(target_os = "linux")]
    {
        let link = PathBuf::from("/proc/self/exe");
        if link.is_file() {
            return Ok(link);
        }
    }
    std::env::current_exe()
}

#[cfg(test)]
mod tests {
    use super::own_executable;

    #[test]
    fn the_program_is_this_processs_own_image() {
        let program = own_executable().unwrap();
        let ours = std::fs::read(std::env::current_exe().unwrap()).unwrap();
        assert_eq!(std::fs::read(&program).unwrap(), ours, "{program:?}");
    }
}
