//! Which repository a workspace's memories belong to on a shared store. Two clones of
//! one repository, on two machines, must name it the same way to share memories, so
//! the name comes from what the clones share: the configured `memory.repositoryId`,
//! else the `origin` remote's URL, normalised (`git@github.com:acme/app.git` and
//! `https://github.com/acme/app` are both `github.com/acme/app`), followed by the
//! workspace's folder inside the repository when it is not the repository's root.

use std::path::Path;
use std::time::Duration;

use loci_supervisor::{Outcome, SpawnSpec, Supervisor};

use crate::error::{ApiError, ErrorKind};

/// Longest identity accepted, in bytes.
pub const MAX_REPOSITORY_ID: usize = 512;

/// How long one `git` query may take.
const GIT_BUDGET: Duration = Duration::from_secs(10);

/// The identity of the repository `root` belongs to: `configured` when given (checked),
/// else derived from git (see the module doc).
pub fn repository_id(root: &Path, configured: Option<&str>) -> Result<String, ApiError> {
    if let Some(id) = configured {
        return check_configured(id);
    }
    let remote = git(root, &["config", "--get", "remote.origin.url"]).ok_or_else(|| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!(
                "memory.url is set, but {} has no git remote `origin` to name its repository by",
                root.display()
            ),
        )
        .hint("set memory.repositoryId (or LOCI_MEMORY_REPOSITORY_ID) to the same name on every clone")
    })?;
    let base = normalise_remote(&remote).ok_or_else(|| {
        ApiError::new(
            ErrorKind::InvalidInput,
            "the git remote `origin` of this workspace is not a URL loci can name a repository by",
        )
        .hint("set memory.repositoryId (or LOCI_MEMORY_REPOSITORY_ID)")
    })?;
    let prefix = git(root, &["rev-parse", "--show-prefix"]).unwrap_or_default();
    Ok(with_folder(&base, &prefix))
}

/// `base`, and the workspace's folder inside the repository after `//` when there is one.
fn with_folder(base: &str, prefix: &str) -> String {
    let folder = prefix.trim().trim_end_matches('/');
    if folder.is_empty() {
        base.to_string()
    } else {
        format!("{base}//{folder}")
    }
}

fn check_configured(id: &str) -> Result<String, ApiError> {
    let id = id.trim();
    let bad = |why: &str| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("memory.repositoryId is not usable: {why}"),
        )
    };
    if id.is_empty() {
        return Err(bad("it is empty"));
    }
    if id.len() > MAX_REPOSITORY_ID {
        return Err(bad(&format!(
            "{} bytes, over the limit of {MAX_REPOSITORY_ID}",
            id.len()
        )));
    }
    if id.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(bad("it holds a space or a control character"));
    }
    Ok(id.to_string())
}

/// `host/path` of a remote URL, without scheme, user, password, port, `.git` or a
/// trailing `/`; the host lower-cased. A local path stays a path (`file:///` before it).
/// `None` when nothing is left to name.
pub fn normalise_remote(url: &str) -> Option<String> {
    let url = url.trim();
    let (host, path) = if let Some((_, rest)) = url.split_once("://") {
        if let Some(path) = url.strip_prefix("file://") {
            return local(path);
        }
        let (authority, path) = rest.split_once('/').unwrap_or((rest, ""));
        let host = authority.rsplit('@').next().unwrap_or(authority);
        (strip_port(host), path)
    } else if let Some((authority, path)) = scp_like(url) {
        (authority.rsplit('@').next().unwrap_or(authority), path)
    } else {
        return local(url);
    };
    let path = clean_path(path);
    if host.is_empty() || path.is_empty() {
        return None;
    }
    Some(format!("{}/{path}", host.to_ascii_lowercase()))
}

/// `user@host:path` (git's scp-like syntax): a `:` before any `/`.
fn scp_like(url: &str) -> Option<(&str, &str)> {
    let colon = url.find(':')?;
    if url[..colon].contains('/') {
        return None;
    }
    Some((&url[..colon], &url[colon + 1..]))
}

fn strip_port(host: &str) -> &str {
    if host.starts_with('[') {
        // An IPv6 literal: the port, if any, follows the `]`.
        return host
            .split_once(']')
            .map_or(host, |(h, _)| &host[..h.len() + 1]);
    }
    host.split_once(':').map_or(host, |(h, _)| h)
}

fn clean_path(path: &str) -> String {
    let path = path.trim_matches('/');
    let path = path.strip_suffix(".git").unwrap_or(path);
    path.trim_end_matches('/').to_string()
}

fn local(path: &str) -> Option<String> {
    let path = clean_path(path);
    (!path.is_empty()).then(|| format!("file:///{path}"))
}

/// One line git prints for `args` in `root`, or `None` when git fails or prints nothing.
fn git(root: &Path, args: &[&str]) -> Option<String> {
    let outcome = run_git(root, args)?;
    let text = String::from_utf8_lossy(&outcome.stdout.head)
        .trim()
        .to_string();
    (!text.is_empty()).then_some(text)
}

/// Runs git with `args` in `root` under the supervisor, within [`GIT_BUDGET`]; `None`
/// when it could not run or failed.
fn run_git(root: &Path, args: &[&str]) -> Option<Outcome> {
    let spec = SpawnSpec::new("git")
        .arg("-C")
        .arg(root)
        .args(args.iter().copied())
        .budget(GIT_BUDGET)
        .capture_cap(64 << 10);
    let outcome = Supervisor::new().run(spec).ok()?;
    outcome.success().then_some(outcome)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_way_to_write_one_remote_names_one_repository() {
        for url in [
            "https://github.com/acme/app",
            "https://github.com/acme/app.git",
            "https://github.com/acme/app/",
            "https://user:token@GitHub.com/acme/app.git",
            "http://github.com:8080/acme/app",
            "git@github.com:acme/app.git",
            "github.com:acme/app",
            "ssh://git@github.com/acme/app.git",
            "ssh://git@github.com:22/acme/app",
            "git://github.com/acme/app.git",
        ] {
            assert_eq!(
                normalise_remote(url).as_deref(),
                Some("github.com/acme/app"),
                "{url}"
            );
        }
    }

    #[test]
    fn different_repositories_stay_different_and_nothing_is_refused_quietly() {
        assert_eq!(
            normalise_remote("git@gitlab.example:group/sub/app.git").as_deref(),
            Some("gitlab.example/group/sub/app")
        );
        assert_ne!(
            normalise_remote("https://github.com/acme/App"),
            normalise_remote("https://github.com/acme/app-2")
        );
        assert_eq!(
            normalise_remote("/srv/git/app.git").as_deref(),
            Some("file:///srv/git/app")
        );
        assert_eq!(
            normalise_remote("file:///srv/git/app.git").as_deref(),
            Some("file:///srv/git/app")
        );
        assert_eq!(
            normalise_remote("ssh://[::1]:2222/acme/app").as_deref(),
            Some("[::1]/acme/app")
        );
        for nothing in ["", "https://github.com/", "git@github.com:", "/"] {
            assert_eq!(normalise_remote(nothing), None, "{nothing:?}");
        }
    }

    #[test]
    fn a_workspace_inside_a_repository_is_named_with_its_folder() {
        assert_eq!(
            with_folder("github.com/a/b", "services/api/\n"),
            "github.com/a/b//services/api"
        );
        assert_eq!(with_folder("github.com/a/b", "\n"), "github.com/a/b");
    }

    #[test]
    fn a_configured_identity_is_checked_and_wins() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            repository_id(dir.path(), Some(" team/app ")).unwrap(),
            "team/app"
        );
        for bad in ["", "a b", "x\u{7}", &"x".repeat(MAX_REPOSITORY_ID + 1)] {
            let e = repository_id(dir.path(), Some(bad)).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidInput, "{bad:?}");
        }
    }

    /// Real git: two clones of one repository, at different paths, name it the same;
    /// a folder without a remote is refused with the key to set.
    #[test]
    fn two_clones_of_one_repository_share_an_identity() {
        let dir = tempfile::tempdir().unwrap();
        let run = |cwd: &Path, args: &[&str]| {
            assert!(run_git(cwd, args).is_some(), "git {args:?}");
        };
        let (a, b) = (dir.path().join("a"), dir.path().join("b"));
        for (clone, url) in [
            (&a, "git@github.com:acme/app.git"),
            (&b, "https://github.com/acme/app"),
        ] {
            std::fs::create_dir_all(clone.join("services/api")).unwrap();
            run(clone, &["init", "-q"]);
            run(clone, &["remote", "add", "origin", url]);
        }
        assert_eq!(repository_id(&a, None).unwrap(), "github.com/acme/app");
        assert_eq!(
            repository_id(&a.join("services/api"), None).unwrap(),
            repository_id(&b.join("services/api"), None).unwrap()
        );
        assert_eq!(
            repository_id(&b.join("services/api"), None).unwrap(),
            "github.com/acme/app//services/api"
        );
        let plain = dir.path().join("plain");
        std::fs::create_dir_all(&plain).unwrap();
        let e = repository_id(&plain, None).unwrap_err();
        assert_eq!(e.kind, ErrorKind::InvalidInput);
        assert!(e.to_string().contains("origin"), "{e}");
    }
}
