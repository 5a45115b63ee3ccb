//! Reading a workspace's file without leaving the workspace: the file a relative path
//! names is opened beneath the workspace's directory handle, so a symlink (or a `..`)
//! that leads out is refused by the kernel, whatever was swapped in since the path was
//! indexed. Only regular files are opened (a FIFO put in a file's place would block a
//! reader forever).

use std::fs::File;
use std::io;
use std::path::{Component, Path};

/// Opens the regular file `relative` beneath the directory `dir` for reading: on Linux
/// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` from a handle on `dir`; elsewhere
/// (or without `openat2`) the real path must lie inside `dir`'s real path. A path that
/// is absolute or has `..`, a symlink leading out, and anything but a regular file are
/// refused (`PermissionDenied`, or `InvalidInput` for the non-file).
pub fn open_file_beneath(dir: &Path, relative: &Path) -> io::Result<File> {
    let normal = relative.components().next().is_some()
        && relative
            .components()
            .all(|c| matches!(c, Component::Normal(_) | Component::CurDir));
    if !normal {
        return Err(refused(relative));
    }
    let file = open(dir, relative)?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            "not a regular file",
        ));
    }
    Ok(file)
}

/// The whole of the regular file `relative` beneath `dir` ([`open_file_beneath`]).
pub fn read_file_beneath(dir: &Path, relative: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    io::Read::read_to_end(&mut open_file_beneath(dir, relative)?, &mut bytes)?;
    Ok(bytes)
}

fn refused(relative: &Path) -> io::Error {
    io::Error::new(
        io::ErrorKind::PermissionDenied,
        format!("{} leads outside the workspace", relative.display()),
    )
}

#[cfg(target_os = "linux")]
fn open(dir: &Path, relative: &Path) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags, ResolveFlags, openat2};
    use rustix::io::Errno;
    let handle = rustix::fs::open(
        dir,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    // Non-blocking, so a FIFO in a file's place cannot hang the open.
    let flags = OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK;
    let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
    let mut attempts = 0;
    loop {
        match openat2(&handle, relative, flags, Mode::empty(), resolve) {
            Ok(fd) => return Ok(File::from(fd)),
            // A concurrent rename elsewhere makes the kernel refuse to vouch: retry.
            Err(Errno::AGAIN | Errno::INTR) if attempts < 16 => attempts += 1,
            Err(Errno::XDEV) => return Err(refused(relative)),
            Err(Errno::NOSYS) => return open_checked(dir, relative),
            Err(e) => return Err(e.into()),
        }
    }
}

#[cfg(not(target_os = "linux"))]
fn open(dir: &Path, relative: &Path) -> io::Result<File> {
    open_checked(dir, relative)
}

/// The portable way: the real path must be inside the directory's real path. A swap
/// between the check and the open is not caught (best effort, as `docs/paths.md` says).
fn open_checked(dir: &Path, relative: &Path) -> io::Result<File> {
    let real_dir = std::fs::canonicalize(dir)?;
    let real = std::fs::canonicalize(dir.join(relative))?;
    if !crate::strictly_inside(&real_dir, &real) {
        return Err(refused(relative));
    }
    File::open(real)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    fn read(dir: &Path, rel: &str) -> io::Result<String> {
        let mut s = String::new();
        open_file_beneath(dir, Path::new(rel))?.read_to_string(&mut s)?;
        Ok(s)
    }

    #[test]
    fn files_inside_are_read_and_nothing_outside_is() {
        let (ws, outside) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
        std::fs::create_dir_all(ws.path().join("src")).unwrap();
        std::fs::write(ws.path().join("src/a.rs"), "inside").unwrap();
        std::fs::write(outside.path().join("secret"), "secret").unwrap();
        std::os::unix::fs::symlink(outside.path().join("secret"), ws.path().join("src/out.rs"))
            .unwrap();
        std::os::unix::fs::symlink("a.rs", ws.path().join("src/rel.rs")).unwrap();
        std::os::unix::fs::symlink(outside.path(), ws.path().join("dirlink")).unwrap();
        assert_eq!(read(ws.path(), "src/a.rs").unwrap(), "inside");
        assert_eq!(read(ws.path(), "src/rel.rs").unwrap(), "inside");
        for rel in ["src/out.rs", "dirlink/secret", "../x", "/etc/passwd", ""] {
            assert!(read(ws.path(), rel).is_err(), "{rel} was read");
        }
        assert!(
            read(ws.path(), "src").is_err(),
            "a directory was opened as a file"
        );
        assert!(open_checked(ws.path(), Path::new("src/out.rs")).is_err());
        assert!(open_checked(ws.path(), Path::new("src/a.rs")).is_ok());
    }
}
