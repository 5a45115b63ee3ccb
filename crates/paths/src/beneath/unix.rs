//! Directory-handle operations on Unix: `openat2(RESOLVE_BENEATH)` on Linux,
//! an `O_NOFOLLOW` walk elsewhere or when the kernel lacks `openat2`.

use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::PathBuf;

use rustix::fs::{AtFlags, CWD, Dir, FileType, Mode, OFlags, mkdirat, openat, statat};
use rustix::io::Errno;

use super::{
    BeneathError, DirEntry, FileKind, Listing, MAX_LIST_ENTRIES, Probe, check_root, sub_segment,
};
use crate::{ContainedPath, Root, RootError, Segment};

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC);

/// How a path is walked beneath the root handle.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Strategy {
    /// `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)` (Linux 5.6+).
    #[cfg(target_os = "linux")]
    Openat2,
    /// `openat(O_NOFOLLOW)` one component at a time; refuses all symlinks.
    NoFollowWalk,
}

#[cfg(target_os = "linux")]
static OPENAT2_AVAILABLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

fn default_strategy() -> Strategy {
    #[cfg(target_os = "linux")]
    if OPENAT2_AVAILABLE.load(std::sync::atomic::Ordering::Relaxed) {
        return Strategy::Openat2;
    }
    Strategy::NoFollowWalk
}

/// An open handle on a root. Every operation walks from this handle, never
/// from a path string, so nothing swapped in after barrier 3 can lead
/// outside the root.
#[derive(Debug)]
pub struct RootDir {
    root: Root,
    fd: OwnedFd,
    strategy: Strategy,
}

/// A directory opened beneath a root, with the path it was contained as.
#[derive(Debug)]
pub struct OpenedDir {
    fd: OwnedFd,
    target: ContainedPath,
    created: bool,
}

impl RootDir {
    /// Opens the root directory (the root's own path is trusted local
    /// configuration and may itself be a symlink).
    pub fn open(root: &Root) -> Result<RootDir, BeneathError> {
        let fd = openat(CWD, root.path(), DIR_FLAGS, Mode::empty()).map_err(|e| {
            RootError::Unavailable {
                setting: root.setting(),
                path: root.path().to_path_buf(),
                source: e.into(),
            }
        })?;
        Ok(RootDir {
            root: root.clone(),
            fd,
            strategy: default_strategy(),
        })
    }

    #[cfg(test)]
    pub(crate) fn with_strategy(mut self, strategy: Strategy) -> RootDir {
        self.strategy = strategy;
        self
    }

    /// The root this handle is on.
    pub fn root(&self) -> &Root {
        &self.root
    }

    /// `mkdir -p` of `target`'s segment, one `mkdirat` per component on a
    /// handle opened beneath the root. Existing directories are kept.
    /// Fails with [`BeneathError::NotADirectory`] when a file is in the
    /// way, [`BeneathError::Escape`] when a component leads outside.
    pub fn create_dir_all(&self, target: &ContainedPath) -> Result<OpenedDir, BeneathError> {
        check_root(&self.root, target)?;
        let mut current = self.open_rel(".").map_err(|e| self.error("open", ".", e))?;
        let mut prefix = String::new();
        let mut created = false;
        for component in target.segment().components() {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(component);
            created = match mkdirat(&current, component, Mode::from_bits_truncate(0o755)) {
                Ok(()) => true,
                Err(Errno::EXIST) => false,
                Err(e) => return Err(self.error("mkdir", &prefix, e)),
            };
            current = self
                .open_rel(&prefix)
                .map_err(|e| self.error("open", &prefix, e))?;
        }
        Ok(OpenedDir {
            fd: current,
            target: target.clone(),
            created,
        })
    }

    /// Opens `target` beneath the root, without creating anything.
    pub fn open_dir(&self, target: &ContainedPath) -> Result<OpenedDir, BeneathError> {
        check_root(&self.root, target)?;
        let segment = target.segment().as_str();
        let fd = self
            .open_rel(segment)
            .map_err(|e| self.error("open", segment, e))?;
        Ok(OpenedDir {
            fd,
            target: target.clone(),
            created: false,
        })
    }

    /// What is at `target`, reached beneath the root. An escape is an
    /// error, not an answer.
    pub fn probe(&self, target: &ContainedPath) -> Result<Probe, BeneathError> {
        check_root(&self.root, target)?;
        let segment = target.segment().as_str();
        match self.open_rel(segment) {
            Ok(_) => Ok(Probe::Directory),
            Err(Errno::NOENT) => Ok(Probe::Missing),
            Err(Errno::NOTDIR) => Ok(Probe::NotADirectory),
            Err(e) => Err(self.error("open", segment, e)),
        }
    }

    /// The real directories directly under `under` (the root itself when
    /// `None`): the folder picker. Symlinks are not listed; names that are
    /// not valid segment components are counted in `skipped`.
    pub fn list_dirs(&self, under: Option<&ContainedPath>) -> Result<Listing, BeneathError> {
        let label = under.map_or(".", |t| t.segment().as_str());
        if let Some(target) = under {
            check_root(&self.root, target)?;
        }
        let fd = self
            .open_rel(label)
            .map_err(|e| self.error("open", label, e))?;
        let read_err = |e| self.error("read_dir", label, e);
        let mut found: Vec<(String, Segment)> = Vec::new();
        let mut skipped = 0;
        for entry in Dir::read_from(&fd).map_err(read_err)? {
            let entry = entry.map_err(read_err)?;
            let raw = entry.file_name();
            if matches!(raw.to_bytes(), b"." | b"..") {
                continue;
            }
            let stat = match statat(&fd, raw, AtFlags::SYMLINK_NOFOLLOW) {
                Ok(stat) => stat,
                Err(Errno::NOENT) => continue,
                Err(e) => return Err(self.error("stat", label, e)),
            };
            #[allow(clippy::unnecessary_cast)]
            if FileType::from_raw_mode(stat.st_mode as _) != FileType::Directory {
                continue;
            }
            let name = raw.to_str().ok();
            match name.and_then(|n| sub_segment(under, n).map(|s| (n.to_owned(), s))) {
                Some(pair) => found.push(pair),
                None => skipped += 1,
            }
        }
        found.sort();
        let truncated = found.len().saturating_sub(MAX_LIST_ENTRIES);
        found.truncate(MAX_LIST_ENTRIES);
        let entries = found
            .into_iter()
            .map(|(name, segment)| DirEntry {
                repository: has_git(fd.as_fd(), &name),
                hidden: name.starts_with('.'),
                name,
                segment,
            })
            .collect();
        Ok(Listing {
            root: self.root.kind(),
            segment: under.map(|t| t.segment().clone()),
            entries,
            skipped,
            truncated,
        })
    }

    fn open_rel(&self, rel: &str) -> Result<OwnedFd, Errno> {
        open_beneath(self.fd.as_fd(), rel, self.strategy)
    }

    fn error(&self, op: &'static str, segment: &str, e: Errno) -> BeneathError {
        let root = self.root.path().to_path_buf();
        let segment = segment.to_owned();
        match e {
            Errno::XDEV => BeneathError::Escape { root, segment },
            Errno::LOOP => BeneathError::Symlink { root, segment },
            Errno::NOTDIR => BeneathError::NotADirectory { root, segment },
            Errno::NOENT => BeneathError::NotFound { root, segment },
            e => BeneathError::Io {
                op,
                root,
                segment,
                source: e.into(),
            },
        }
    }
}

fn has_git(parent: BorrowedFd<'_>, name: &str) -> bool {
    openat(parent, name, DIR_FLAGS | OFlags::NOFOLLOW, Mode::empty())
        .and_then(|child| statat(&child, ".git", AtFlags::SYMLINK_NOFOLLOW))
        .is_ok()
}

/// Opens the directory `rel` (`/`-separated normal components, or `.`)
/// beneath `root`.
fn open_beneath(root: BorrowedFd<'_>, rel: &str, strategy: Strategy) -> Result<OwnedFd, Errno> {
    match strategy {
        #[cfg(target_os = "linux")]
        Strategy::Openat2 => {
            use rustix::fs::{ResolveFlags, openat2};
            let resolve = ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS;
            let mut attempts = 0;
            loop {
                match openat2(root, rel, DIR_FLAGS, Mode::empty(), resolve) {
                    // A concurrent rename anywhere on the system makes the
                    // kernel refuse to vouch for `..` resolution: retry.
                    Err(Errno::AGAIN | Errno::INTR) if attempts < 16 => attempts += 1,
                    Err(Errno::NOSYS) => {
                        OPENAT2_AVAILABLE.store(false, std::sync::atomic::Ordering::Relaxed);
                        return open_beneath(root, rel, Strategy::NoFollowWalk);
                    }
                    other => return other,
                }
            }
        }
        Strategy::NoFollowWalk => {
            let mut current = openat(root, ".", DIR_FLAGS, Mode::empty())?;
            for component in rel.split('/').filter(|c| *c != ".") {
                if component.is_empty() || component == ".." {
                    return Err(Errno::INVAL);
                }
                current = match openat(
                    &current,
                    component,
                    DIR_FLAGS | OFlags::NOFOLLOW,
                    Mode::empty(),
                ) {
                    Ok(fd) => fd,
                    Err(Errno::NOTDIR) | Err(Errno::LOOP) => {
                        let stat = statat(&current, component, AtFlags::SYMLINK_NOFOLLOW)?;
                        #[allow(clippy::unnecessary_cast)]
                        let is_link =
                            FileType::from_raw_mode(stat.st_mode as _) == FileType::Symlink;
                        return Err(if is_link { Errno::LOOP } else { Errno::NOTDIR });
                    }
                    Err(e) => return Err(e),
                };
            }
            Ok(current)
        }
    }
}

impl OpenedDir {
    /// The contained path this directory was opened as.
    pub fn target(&self) -> &ContainedPath {
        &self.target
    }

    /// Whether [`RootDir::create_dir_all`] created the last component (false
    /// when it already existed, or for [`RootDir::open_dir`]).
    pub fn created(&self) -> bool {
        self.created
    }

    /// What the entry `name` (one component) in this directory is, without
    /// following a symlink.
    pub fn probe_entry(&self, name: &str) -> Result<Option<FileKind>, BeneathError> {
        let io = |source: std::io::Error| BeneathError::Io {
            op: "stat",
            root: self.target.root().path().to_path_buf(),
            segment: format!("{}/{name}", self.target.segment()),
            source,
        };
        if !super::is_one_component(name) {
            return Err(io(std::io::Error::new(
                std::io::ErrorKind::InvalidInput,
                "not a single path component",
            )));
        }
        match statat(&self.fd, name, AtFlags::SYMLINK_NOFOLLOW) {
            #[allow(clippy::unnecessary_cast)]
            Ok(stat) => Ok(Some(match FileType::from_raw_mode(stat.st_mode as _) {
                FileType::Directory => FileKind::Directory,
                FileType::Symlink => FileKind::Symlink,
                FileType::RegularFile => FileKind::File,
                _ => FileKind::Other,
            })),
            Err(Errno::NOENT) => Ok(None),
            Err(e) => Err(io(e.into())),
        }
    }

    /// Whether the directory has no entries besides `.` and `..`.
    pub fn is_empty(&self) -> Result<bool, BeneathError> {
        let io = |e: Errno| BeneathError::Io {
            op: "read_dir",
            root: self.target.root().path().to_path_buf(),
            segment: self.target.segment().to_string(),
            source: e.into(),
        };
        for entry in Dir::read_from(&self.fd).map_err(io)? {
            let entry = entry.map_err(io)?;
            if !matches!(entry.file_name().to_bytes(), b"." | b"..") {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// On Linux, `/proc/self/fd/N` for this handle: a working directory for
    /// a child process that names this exact directory, whatever is renamed
    /// or swapped afterwards, as long as the child is spawned from this
    /// process while the handle is open (the child resolves it against its
    /// own inherited descriptor before `exec`).
    #[cfg(target_os = "linux")]
    pub fn proc_path(&self) -> PathBuf {
        use std::os::fd::AsRawFd;
        PathBuf::from(format!("/proc/self/fd/{}", self.fd.as_raw_fd()))
    }
}

impl AsFd for OpenedDir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{RootKind, contain, lookup_root};
    use std::os::unix::fs::symlink;

    fn setup() -> (tempfile::TempDir, Root) {
        let dir = tempfile::tempdir().unwrap();
        std::fs::create_dir(dir.path().join("root")).unwrap();
        std::fs::create_dir(dir.path().join("outside")).unwrap();
        let root = lookup_root(
            RootKind::Base,
            Some(dir.path().join("root").as_os_str()),
            None,
        )
        .unwrap();
        (dir, root)
    }

    #[test]
    fn fallback_walk_creates_nested_directories() {
        let (_dir, root) = setup();
        let target = contain(&root, &Segment::parse("a/b/c").unwrap()).unwrap();
        let rd = RootDir::open(&root)
            .unwrap()
            .with_strategy(Strategy::NoFollowWalk);
        let opened = rd.create_dir_all(&target).unwrap();
        assert!(opened.created());
        assert!(root.path().join("a/b/c").is_dir());
        assert!(!rd.create_dir_all(&target).unwrap().created());
    }

    #[test]
    fn fallback_walk_refuses_a_symlink_swapped_in_after_the_check() {
        let (dir, root) = setup();
        std::fs::create_dir(root.path().join("ws")).unwrap();
        let target = contain(&root, &Segment::parse("ws/new").unwrap()).unwrap();
        std::fs::remove_dir(root.path().join("ws")).unwrap();
        symlink(dir.path().join("outside"), root.path().join("ws")).unwrap();
        let rd = RootDir::open(&root)
            .unwrap()
            .with_strategy(Strategy::NoFollowWalk);
        let err = rd.create_dir_all(&target).unwrap_err();
        assert_eq!(err.kind(), "symlink_refused", "{err}");
        assert!(!dir.path().join("outside/new").exists());
    }

    #[test]
    fn fallback_walk_reports_a_file_in_the_way() {
        let (_dir, root) = setup();
        std::fs::write(root.path().join("f"), b"x").unwrap();
        let target = contain(&root, &Segment::parse("f/x").unwrap()).unwrap();
        let rd = RootDir::open(&root)
            .unwrap()
            .with_strategy(Strategy::NoFollowWalk);
        assert_eq!(
            rd.create_dir_all(&target).unwrap_err().kind(),
            "not_a_directory"
        );
        assert_eq!(rd.probe(&target).unwrap(), Probe::NotADirectory);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn openat2_refuses_a_symlink_swapped_in_after_the_check() {
        let (dir, root) = setup();
        std::fs::create_dir(root.path().join("ws")).unwrap();
        let target = contain(&root, &Segment::parse("ws/new").unwrap()).unwrap();
        std::fs::remove_dir(root.path().join("ws")).unwrap();
        symlink(dir.path().join("outside"), root.path().join("ws")).unwrap();
        let rd = RootDir::open(&root)
            .unwrap()
            .with_strategy(Strategy::Openat2);
        let err = rd.create_dir_all(&target).unwrap_err();
        assert_eq!(err.kind(), "escapes_root", "{err}");
        // a relative symlink climbing out is refused the same way
        std::fs::remove_file(root.path().join("ws")).unwrap();
        symlink("../outside", root.path().join("ws")).unwrap();
        let err = rd.create_dir_all(&target).unwrap_err();
        assert_eq!(err.kind(), "escapes_root", "{err}");
        assert!(!dir.path().join("outside/new").exists());
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn openat2_follows_a_relative_symlink_that_stays_beneath_the_root() {
        let (_dir, root) = setup();
        std::fs::create_dir(root.path().join("real")).unwrap();
        symlink("real", root.path().join("alias")).unwrap();
        let target = contain(&root, &Segment::parse("alias/x").unwrap()).unwrap();
        let rd = RootDir::open(&root).unwrap();
        assert_eq!(rd.strategy, Strategy::Openat2);
        rd.create_dir_all(&target).unwrap();
        assert!(root.path().join("real/x").is_dir());
    }
}
