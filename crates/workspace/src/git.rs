//! `git init` and `git clone -- URL .`, run through the supervisor (no
//! shell), in the directory opened beneath the root.

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use loci_paths::OpenedDir;
use loci_supervisor::{EnvPolicy, SpawnSpec, Supervisor};

use crate::egress::EgressProxy;
use crate::{ClonePolicy, CloneScheme, CloneUrl, CloneUrlError, CreateError};

/// A checked clone URL and the addresses its host resolved to when it was checked
/// (empty when the policy reaches every address).
pub(crate) struct Destination {
    pub(crate) url: CloneUrl,
    pub(crate) addresses: Vec<std::net::IpAddr>,
}

/// Protocols a local `git clone` may use (`GIT_ALLOW_PROTOCOL`): everything else,
/// `ext::` (which runs a command) included, is refused by git itself. A clone's own
/// list is its [`ClonePolicy`]'s, never wider than this.
pub const ALLOWED_PROTOCOLS: &str = "file:git:http:https:ssh";

/// How much of git's stderr an error message quotes, in bytes.
const STDERR_TAIL: usize = 2000;

pub(crate) struct GitRun<'a> {
    pub(crate) supervisor: &'a Supervisor,
    pub(crate) program: &'a OsString,
    pub(crate) budget: Duration,
    pub(crate) output_cap: usize,
    pub(crate) policy: &'a ClonePolicy,
}

impl GitRun<'_> {
    /// Runs `git init` (no URL) or `git clone -- URL .` in `dir`.
    pub(crate) fn run(
        &self,
        dir: &OpenedDir,
        clone: Option<&Destination>,
    ) -> Result<(), CreateError> {
        let segment = dir.target().segment().to_string();
        let protocols = self.policy.git_protocols();
        let guarded = clone.filter(|_| !self.policy.addresses().is_open());
        // http(s): every connection, redirects included, goes through the checking
        // proxy. git://: the URL is pinned to the address that was checked.
        let proxy = match guarded {
            Some(d) if matches!(d.url.scheme(), CloneScheme::Http | CloneScheme::Https) => {
                let proxy = EgressProxy::start(self.policy.addresses().clone()).map_err(|e| {
                    CreateError::Git {
                        action: "clone",
                        segment: segment.clone(),
                        message: format!("cannot start the clone's proxy: {e}"),
                    }
                })?;
                Some(proxy)
            }
            _ => None,
        };
        let (action, args): (&'static str, Vec<String>) = match clone {
            None => ("init", vec!["init".into(), "--quiet".into()]),
            Some(d) => {
                let pinned = match (guarded, d.addresses.first()) {
                    (Some(_), Some(ip)) if d.url.scheme() == CloneScheme::Git => {
                        d.url.with_address(*ip)
                    }
                    _ => d.url.clone(),
                };
                let mut args = Vec::new();
                if let Some(proxy) = &proxy {
                    args.extend(["-c".to_owned(), format!("http.proxy={}", proxy.url())]);
                }
                args.extend(clone_args(self.policy, &pinned));
                ("clone", args)
            }
        };
        let failed = |message: String| CreateError::Git {
            action,
            segment: segment.clone(),
            message,
        };
        let key = format!(
            "workspace-create:{}:{}",
            dir.target().root_kind().as_str(),
            segment
        );
        let spec = SpawnSpec::new(self.program)
            .args(args)
            .cwd(working_directory(dir))
            .env(
                EnvPolicy::loci_child()
                    .pin("GIT_TERMINAL_PROMPT", "0")
                    .pin("GIT_ALLOW_PROTOCOL", protocols)
                    .pin("GIT_PROTOCOL_FROM_USER", "0")
                    // Nothing bypasses the proxy.
                    .pin("NO_PROXY", "")
                    .pin("no_proxy", ""),
            )
            .budget(self.budget)
            .capture_cap(self.output_cap)
            .single_flight(key);
        let outcome = self
            .supervisor
            .run(spec)
            .map_err(|e| failed(e.to_string()))?;
        if outcome.success() {
            return Ok(());
        }
        if let Some(class) = proxy.as_ref().and_then(EgressProxy::refused) {
            return Err(CreateError::InvalidCloneUrl(Box::new(
                CloneUrlError::ForbiddenAddress {
                    class: class.name(),
                },
            )));
        }
        let status = if outcome.timed_out {
            format!("timed out after {:?}", self.budget)
        } else if outcome.cancelled {
            "cancelled".to_owned()
        } else {
            outcome.exit.to_string()
        };
        let stderr = outcome.stderr.to_string_lossy();
        let stderr = stderr.trim();
        let tail = match stderr.char_indices().rev().nth(STDERR_TAIL) {
            Some((at, _)) => &stderr[at..],
            None => stderr,
        };
        if self.policy.is_remote() && action == "clone" {
            // git's own words would tell a remote caller which ports answer (refused,
            // timed out, not a repository): they go to the server's log only.
            tracing::warn!(%segment, %status, stderr = %tail, "git clone failed");
            return Err(failed(format!(
                "{status}; the server's log has git's own message"
            )));
        }
        Err(failed(if tail.is_empty() {
            status
        } else {
            format!("{status}: {tail}")
        }))
    }
}

/// `git clone` of a checked URL: every protocol refused but the policy's
/// (`protocol.allow=never`, then `protocol.<name>.allow=always` for each), no hooks
/// (an empty template, and `core.hooksPath` pointed at nothing), and `--` before the
/// URL so it can never be read as an option.
fn clone_args(policy: &ClonePolicy, url: &CloneUrl) -> Vec<String> {
    let mut args = vec!["-c".to_owned(), "protocol.allow=never".to_owned()];
    for scheme in policy.schemes() {
        args.push("-c".to_owned());
        args.push(format!("protocol.{}.allow=always", scheme.git_name()));
    }
    args.extend(
        [
            "-c",
            "core.hooksPath=/dev/null",
            "clone",
            "--quiet",
            "--template=",
            "--",
            url.as_str(),
            ".",
        ]
        .map(str::to_owned),
    );
    args
}

/// The child's working directory. On Linux, `/proc/self/fd/N` of the handle
/// opened beneath the root: the child resolves it against its own inherited
/// descriptor before `exec`, so it starts in the directory that was checked,
/// whatever was renamed or swapped since. Elsewhere, the contained path.
fn working_directory(dir: &OpenedDir) -> PathBuf {
    #[cfg(target_os = "linux")]
    {
        let proc_path = dir.proc_path();
        if proc_path.exists() {
            return proc_path;
        }
    }
    dir.target().path().to_path_buf()
}
