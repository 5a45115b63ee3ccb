//! Environment policies for children: what a child inherits and what loci
//! pins, with values kept out of `Debug` output and logs.

use std::ffi::{OsStr, OsString};
use std::fmt;
use std::process::Command;

/// The variable every child of loci gets pinned to `0`, so a short-lived loci
/// run (index, sync) can never fork its own background watcher and block on
/// it (seed 004's `ENABLE_AUTO_WATCH=false` pin, in loci's terms). The only
/// watcher loci sanctions is the one lifecycle starts on purpose.
pub const AUTO_WATCH_VAR: &str = "LOCI_AUTO_WATCH";

/// Which environment a child sees.
///
/// `Debug` prints variable names only, never values: values may be secrets
/// (API keys travel to children through the environment).
#[derive(Clone, PartialEq, Eq)]
pub enum EnvPolicy {
    /// The parent's environment, with `pinned` set over it. Every other
    /// variable is passed unchanged.
    Inherit {
        /// Variables set (or replaced) over the inherited ones.
        pinned: Vec<(OsString, OsString)>,
    },
    /// Start empty, copy only the named variables from the parent (those that
    /// are set), then apply `pinned`.
    Allowlist {
        /// Names copied from the parent when present.
        names: Vec<OsString>,
        /// Variables set after the copy.
        pinned: Vec<(OsString, OsString)>,
    },
    /// Start empty and set exactly `vars`.
    Clear {
        /// The child's whole environment.
        vars: Vec<(OsString, OsString)>,
    },
}

impl EnvPolicy {
    /// The default for every child: inherit, with [`AUTO_WATCH_VAR`]`=0`
    /// pinned. The pin is inert on programs that do not read it (git, LLM
    /// tools, loci's own watcher).
    pub fn loci_child() -> Self {
        EnvPolicy::Inherit {
            pinned: vec![(AUTO_WATCH_VAR.into(), "0".into())],
        }
    }

    /// Inherit everything and pin nothing. Prefer [`EnvPolicy::loci_child`].
    pub fn inherit() -> Self {
        EnvPolicy::Inherit { pinned: Vec::new() }
    }

    /// Only the named parent variables (plus, later, any pins).
    pub fn allowlist<I, S>(names: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        EnvPolicy::Allowlist {
            names: names.into_iter().map(Into::into).collect(),
            pinned: Vec::new(),
        }
    }

    /// Exactly these variables and nothing else.
    pub fn clear_with<I, K, V>(vars: I) -> Self
    where
        I: IntoIterator<Item = (K, V)>,
        K: Into<OsString>,
        V: Into<OsString>,
    {
        EnvPolicy::Clear {
            vars: vars
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// Sets `name=value` on top of whatever the policy produces (replacing an
    /// earlier pin of the same name).
    pub fn pin(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        let (name, value) = (name.into(), value.into());
        let list = match &mut self {
            EnvPolicy::Inherit { pinned } | EnvPolicy::Allowlist { pinned, .. } => pinned,
            EnvPolicy::Clear { vars } => vars,
        };
        list.retain(|(k, _)| *k != name);
        list.push((name, value));
        self
    }

    /// The names this policy sets explicitly (for logs: never the values).
    pub fn pinned_names(&self) -> impl Iterator<Item = &OsStr> {
        let list = match self {
            EnvPolicy::Inherit { pinned } | EnvPolicy::Allowlist { pinned, .. } => pinned,
            EnvPolicy::Clear { vars } => vars,
        };
        list.iter().map(|(k, _)| k.as_os_str())
    }

    pub(crate) fn apply(&self, cmd: &mut Command) {
        match self {
            EnvPolicy::Inherit { pinned } => {
                cmd.envs(pinned.iter().map(|(k, v)| (k, v)));
            }
            EnvPolicy::Allowlist { names, pinned } => {
                cmd.env_clear();
                for name in names {
                    if let Some(v) = std::env::var_os(name) {
                        cmd.env(name, v);
                    }
                }
                cmd.envs(pinned.iter().map(|(k, v)| (k, v)));
            }
            EnvPolicy::Clear { vars } => {
                cmd.env_clear();
                cmd.envs(vars.iter().map(|(k, v)| (k, v)));
            }
        }
    }
}

impl Default for EnvPolicy {
    fn default() -> Self {
        EnvPolicy::loci_child()
    }
}

impl fmt::Debug for EnvPolicy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        struct Names<'a>(&'a [(OsString, OsString)]);
        impl fmt::Debug for Names<'_> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.debug_map()
                    .entries(self.0.iter().map(|(k, _)| (k, "<redacted>")))
                    .finish()
            }
        }
        match self {
            EnvPolicy::Inherit { pinned } => f
                .debug_struct("Inherit")
                .field("pinned", &Names(pinned))
                .finish(),
            EnvPolicy::Allowlist { names, pinned } => f
                .debug_struct("Allowlist")
                .field("names", names)
                .field("pinned", &Names(pinned))
                .finish(),
            EnvPolicy::Clear { vars } => {
                f.debug_struct("Clear").field("vars", &Names(vars)).finish()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_never_shows_values() {
        let p = EnvPolicy::loci_child().pin("API_KEY", "sk-secret-value");
        let s = format!("{p:?}");
        assert!(
            s.contains("API_KEY") && !s.contains("sk-secret-value"),
            "{s}"
        );
        let p = EnvPolicy::clear_with([("TOKEN", "hunter2")]);
        assert!(!format!("{p:?}").contains("hunter2"));
    }

    #[test]
    fn pin_replaces_an_earlier_pin() {
        let p = EnvPolicy::loci_child().pin(AUTO_WATCH_VAR, "1");
        assert_eq!(
            p,
            EnvPolicy::Inherit {
                pinned: vec![(AUTO_WATCH_VAR.into(), "1".into())]
            }
        );
    }
}
