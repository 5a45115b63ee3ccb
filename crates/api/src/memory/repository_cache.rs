//! The repository identity of a workspace, remembered per process: deriving it spawns
//! `git` twice, which a long-lived host (`loci serve`, `loci mcp`) would otherwise pay
//! on every memory request. An entry holds while the repository's `config` file (where
//! `remote.origin.url` lives) keeps its modification time and size; changing the
//! remote rewrites that file, so the next request derives the identity again.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::SystemTime;

use super::repository_id::repository_id;
use crate::error::ApiError;

/// What an entry is valid for: the git config file's path, modification time and size.
type Stamp = (PathBuf, SystemTime, u64);

/// Identities derived from git, by workspace root.
static CACHE: OnceLock<Mutex<HashMap<PathBuf, (Stamp, String)>>> = OnceLock::new();

/// [`repository_id`], from the cache when the repository's git config is unchanged. A
/// configured identity is checked as given (no git); a failure is never remembered, so
/// fixing the remote takes effect at once; a workspace whose git config cannot be found
/// without git (no `.git` above it) is derived every time.
pub fn cached_repository_id(root: &Path, configured: Option<&str>) -> Result<String, ApiError> {
    if configured.is_some() {
        return repository_id(root, configured);
    }
    let Some(stamp) = stamp(root) else {
        return repository_id(root, None);
    };
    let cache = CACHE.get_or_init(Default::default);
    if let Some((seen, id)) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(root)
        && *seen == stamp
    {
        return Ok(id.clone());
    }
    let id = repository_id(root, None)?;
    cache
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .insert(root.to_path_buf(), (stamp, id.clone()));
    Ok(id)
}

/// The stamp of the git config of the repository `root` is in: the nearest `.git`
/// above it, a directory or a worktree's `gitdir:` file (whose `commondir` holds the
/// shared config).
fn stamp(root: &Path) -> Option<Stamp> {
    let dot_git = root
        .ancestors()
        .map(|d| d.join(".git"))
        .find(|p| p.exists())?;
    let git_dir = if dot_git.is_dir() {
        dot_git
    } else {
        let text = std::fs::read_to_string(&dot_git).ok()?;
        let dir = PathBuf::from(text.trim().strip_prefix("gitdir:")?.trim());
        let dir = dot_git.parent()?.join(dir);
        match std::fs::read_to_string(dir.join("commondir")) {
            Ok(common) => dir.join(common.trim()),
            Err(_) => dir,
        }
    };
    let config = git_dir.join("config");
    let meta = std::fs::metadata(&config).ok()?;
    Some((config, meta.modified().ok()?, meta.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_worktree_stamps_the_shared_config() {
        let dir = tempfile::tempdir().unwrap();
        let common = dir.path().join("main/.git");
        std::fs::create_dir_all(common.join("worktrees/wt")).unwrap();
        std::fs::write(common.join("config"), "[core]\n").unwrap();
        std::fs::write(common.join("worktrees/wt/commondir"), "../..\n").unwrap();
        let wt = dir.path().join("wt");
        std::fs::create_dir_all(wt.join("sub")).unwrap();
        std::fs::write(
            wt.join(".git"),
            format!("gitdir: {}\n", common.join("worktrees/wt").display()),
        )
        .unwrap();
        let (config, _, len) = stamp(&wt.join("sub")).unwrap();
        assert_eq!(
            config.canonicalize().unwrap(),
            common.join("config").canonicalize().unwrap()
        );
        assert_eq!(len, 7);
        assert!(stamp(Path::new("/")).is_none() || Path::new("/.git").exists());
    }
}
