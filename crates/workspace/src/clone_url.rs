//! Which URLs `git clone` may be given: a policy checked before any folder is made
//! or git is run, and the protocol restrictions git then runs under.
//!
//! A remote caller who may name a clone URL may otherwise make the server read its own
//! files (`file://`, a plain local path), run a command (`ext::sh -c ...`), pass git an
//! option (`--upload-pack=...`), or leak credentials into the registry and logs. The
//! remote policy ([`ClonePolicy::remote`]) allows `https://`, `ssh://` and scp-like
//! `user@host:path`, plus the extra schemes an operator enables (`git://`, `http://`);
//! `file://` and local paths are never allowed for it. The local policy
//! ([`ClonePolicy::local`], for `loci workspace create --clone`) also allows local
//! repositories and credentials the user typed; both refuse remote helpers, options
//! and control characters.

use serde::Serialize;

use crate::address::{AddressPolicy, Allowance, Refusal};

/// The longest clone URL accepted, in bytes.
pub const MAX_URL_BYTES: usize = 2048;

/// A transport `git clone` may use.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum CloneScheme {
    /// `https://`.
    Https,
    /// `ssh://` and scp-like `user@host:path`.
    Ssh,
    /// `git://`, the unauthenticated git daemon (an operator's choice).
    Git,
    /// `http://`, unencrypted (an operator's choice).
    Http,
    /// `file://` and local paths (local callers only).
    File,
}

impl CloneScheme {
    /// git's name for the protocol (`protocol.<name>.allow`, `GIT_ALLOW_PROTOCOL`).
    pub fn git_name(self) -> &'static str {
        match self {
            CloneScheme::Https => "https",
            CloneScheme::Ssh => "ssh",
            CloneScheme::Git => "git",
            CloneScheme::Http => "http",
            CloneScheme::File => "file",
        }
    }

    fn from_url_scheme(scheme: &str) -> Option<CloneScheme> {
        Some(match scheme {
            "https" => CloneScheme::Https,
            "ssh" | "git+ssh" | "ssh+git" => CloneScheme::Ssh,
            "git" => CloneScheme::Git,
            "http" => CloneScheme::Http,
            "file" => CloneScheme::File,
            _ => return None,
        })
    }
}

/// The schemes a remote caller gets without configuration.
pub const REMOTE_SCHEMES: &[CloneScheme] = &[CloneScheme::Https, CloneScheme::Ssh];

/// Extra schemes an operator may enable for remote callers (never `file`).
pub const REMOTE_EXTRA_SCHEMES: &[CloneScheme] = &[CloneScheme::Git, CloneScheme::Http];

/// Which clone URLs are accepted, and which addresses a clone may reach.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ClonePolicy {
    schemes: Vec<CloneScheme>,
    credentials: bool,
    remote: bool,
    addresses: AddressPolicy,
}

impl Default for ClonePolicy {
    /// The local policy: what `loci workspace create --clone` accepts.
    fn default() -> Self {
        ClonePolicy::local()
    }
}

impl ClonePolicy {
    /// For a caller across the network: `https`, `ssh` (and scp-like), no credentials
    /// in the URL, no local repository.
    pub fn remote() -> ClonePolicy {
        ClonePolicy {
            schemes: REMOTE_SCHEMES.to_vec(),
            credentials: false,
            remote: true,
            addresses: AddressPolicy::public_and(Vec::new()),
        }
    }

    /// For the local user: every scheme git knows but remote helpers, local paths
    /// included, credentials allowed (they are the user's own).
    pub fn local() -> ClonePolicy {
        ClonePolicy {
            schemes: vec![
                CloneScheme::Https,
                CloneScheme::Ssh,
                CloneScheme::Git,
                CloneScheme::Http,
                CloneScheme::File,
            ],
            credentials: true,
            remote: false,
            addresses: AddressPolicy::open(),
        }
    }

    /// Also lets a remote caller's clone reach these non-public addresses (the
    /// operator's `clone.allowAddresses`); a local policy reaches every address.
    pub fn allow_addresses(mut self, allowed: Vec<Allowance>) -> ClonePolicy {
        if self.remote {
            self.addresses = AddressPolicy::public_and(allowed);
        }
        self
    }

    /// The addresses a clone may reach.
    pub fn addresses(&self) -> &AddressPolicy {
        &self.addresses
    }

    /// Resolves the host of a checked URL and checks every address it gives against
    /// the address policy (nothing to do for a local repository, or an open policy).
    /// The checked addresses, to pin the connection to.
    pub fn check_destination(
        &self,
        url: &CloneUrl,
    ) -> Result<Vec<std::net::IpAddr>, CloneUrlError> {
        if self.addresses.is_open() {
            return Ok(Vec::new());
        }
        let Some((host, port)) = url.host_port() else {
            return Ok(Vec::new());
        };
        self.addresses.resolve(&host, port).map_err(|r| match r {
            Refusal::Forbidden(class) => CloneUrlError::ForbiddenAddress {
                class: class.name(),
            },
            Refusal::Unresolvable => CloneUrlError::UnresolvableHost,
        })
    }

    /// Also allows `scheme` for a remote caller; `file` is never added to a remote
    /// policy (it would let a caller read the server's own repositories).
    pub fn allow(mut self, scheme: CloneScheme) -> ClonePolicy {
        if (self.remote && !REMOTE_EXTRA_SCHEMES.contains(&scheme))
            || self.schemes.contains(&scheme)
        {
            return self;
        }
        self.schemes.push(scheme);
        self.schemes.sort();
        self
    }

    /// Whether this is a policy for remote callers.
    pub fn is_remote(&self) -> bool {
        self.remote
    }

    /// The schemes allowed, in a stable order.
    pub fn schemes(&self) -> &[CloneScheme] {
        &self.schemes
    }

    /// git's protocol list for `GIT_ALLOW_PROTOCOL` (`https:ssh`).
    pub fn git_protocols(&self) -> String {
        let names: Vec<&str> = self.schemes.iter().map(|s| s.git_name()).collect();
        names.join(":")
    }

    /// Checks `raw` and returns it with the scheme it uses, or the rule it breaks.
    pub fn check(&self, raw: &str) -> Result<CloneUrl, CloneUrlError> {
        let scheme = classify(raw, self.credentials)?;
        if !self.schemes.contains(&scheme) {
            let allowed: Vec<&str> = self.schemes.iter().map(|s| s.git_name()).collect();
            return Err(if scheme == CloneScheme::File {
                CloneUrlError::LocalRepository
            } else {
                CloneUrlError::SchemeNotAllowed {
                    scheme: scheme.git_name(),
                    allowed: allowed.join(", "),
                }
            });
        }
        Ok(CloneUrl {
            text: raw.to_owned(),
            scheme,
        })
    }
}

/// A clone URL that passed a [`ClonePolicy`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CloneUrl {
    text: String,
    scheme: CloneScheme,
}

impl CloneUrl {
    /// The URL, exactly as given.
    pub fn as_str(&self) -> &str {
        &self.text
    }

    /// The transport it uses.
    pub fn scheme(&self) -> CloneScheme {
        self.scheme
    }

    /// The host the URL connects to and its port (the scheme's default when none is
    /// given); `None` for a local repository.
    pub fn host_port(&self) -> Option<(String, u16)> {
        let default = match self.scheme {
            CloneScheme::Https => 443,
            CloneScheme::Http => 80,
            CloneScheme::Git => 9418,
            CloneScheme::Ssh => 22,
            CloneScheme::File => return None,
        };
        let (authority, scp) = match self.text.split_once("://") {
            Some((_, rest)) => (rest.split(['/', '?', '#']).next().unwrap_or(""), false),
            // scp-like `[user@]host:path`: the host ends at the first `:` (or `]`).
            None => (self.text.as_str(), true),
        };
        let host_part = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
        let (host, port) = if let Some(v6) = host_part.strip_prefix('[') {
            let (host, tail) = v6.split_once(']')?;
            (host, tail.strip_prefix(':'))
        } else {
            match host_part.split_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (host_part, None),
            }
        };
        let port = match port {
            Some(p) if !scp && !p.is_empty() => p.parse().ok()?,
            _ => default,
        };
        (!host.is_empty()).then(|| (host.to_owned(), port))
    }

    /// The URL with its host replaced by `ip` (a `git://` clone pinned to the address
    /// that was checked).
    pub fn with_address(&self, ip: std::net::IpAddr) -> CloneUrl {
        let Some((scheme, rest)) = self.text.split_once("://") else {
            return self.clone();
        };
        let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
        let (authority, tail) = rest.split_at(end);
        let (userinfo, host_port) = match authority.rsplit_once('@') {
            Some((u, h)) => (format!("{u}@"), h),
            None => (String::new(), authority),
        };
        let port = if let Some(v6) = host_port.strip_prefix('[') {
            v6.split_once(']').map_or("", |(_, t)| t)
        } else {
            host_port.find(':').map_or("", |at| &host_port[at..])
        };
        let host = match ip {
            std::net::IpAddr::V4(v4) => v4.to_string(),
            std::net::IpAddr::V6(v6) => format!("[{v6}]"),
        };
        CloneUrl {
            text: format!("{scheme}://{userinfo}{host}{port}{tail}"),
            scheme: self.scheme,
        }
    }
}

/// Why a clone URL was refused; [`kind`](Self::kind) is the stable reason.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CloneUrlError {
    /// Nothing was given.
    #[error("the clone URL is empty")]
    Empty,
    /// Longer than [`MAX_URL_BYTES`].
    #[error("the clone URL is {len} bytes long, over the limit of {MAX_URL_BYTES}")]
    TooLong {
        /// Its length in bytes.
        len: usize,
    },
    /// A control character or whitespace.
    #[error("the clone URL holds a control character or whitespace at byte {at}")]
    ControlCharacter {
        /// Its byte offset.
        at: usize,
    },
    /// It (or its host) starts with `-`, which git or ssh would read as an option.
    #[error("the clone URL `{url}` would be read as an option (it or its host starts with `-`)")]
    OptionLike {
        /// The URL.
        url: String,
    },
    /// `transport::address`: a git remote helper (`ext::` runs a command).
    #[error(
        "the clone URL `{url}` names a git remote helper (`{helper}::`), which is never allowed"
    )]
    RemoteHelper {
        /// The URL.
        url: String,
        /// The helper named.
        helper: String,
    },
    /// A user name with a password, or a token, in the URL.
    #[error("the clone URL carries credentials; give the server its own credentials instead")]
    Credentials,
    /// `file://` or a plain local path.
    #[error(
        "the clone URL names a repository on this machine (a local path or file://), which a remote caller may not clone"
    )]
    LocalRepository,
    /// A scheme this policy does not allow.
    #[error("the clone URL's scheme `{scheme}` is not allowed (allowed: {allowed})")]
    SchemeNotAllowed {
        /// git's name for it.
        scheme: &'static str,
        /// The allowed ones.
        allowed: String,
    },
    /// The host resolves to an address the policy does not reach (loopback, link-local,
    /// private...); only the class is named, never the address or the port.
    #[error(
        "the clone URL's host resolves to a {class} address, which this server does not clone from"
    )]
    ForbiddenAddress {
        /// The address's class (`loopback`, `link_local`, `private`...).
        class: &'static str,
    },
    /// The host does not resolve.
    #[error("the clone URL's host does not resolve")]
    UnresolvableHost,
    /// A scheme git does not know, or no host.
    #[error("the clone URL `{url}` is malformed: {why}")]
    Malformed {
        /// The URL.
        url: String,
        /// What is wrong.
        why: &'static str,
    },
}

impl CloneUrlError {
    /// A stable snake_case name: `empty`, `too_long`, `control_character`,
    /// `option_like`, `remote_helper`, `credentials`, `local_repository`,
    /// `scheme_not_allowed`, `malformed`, `forbidden_address` or `unresolvable_host`.
    pub fn kind(&self) -> &'static str {
        match self {
            Self::Empty => "empty",
            Self::TooLong { .. } => "too_long",
            Self::ControlCharacter { .. } => "control_character",
            Self::OptionLike { .. } => "option_like",
            Self::RemoteHelper { .. } => "remote_helper",
            Self::Credentials => "credentials",
            Self::LocalRepository => "local_repository",
            Self::SchemeNotAllowed { .. } => "scheme_not_allowed",
            Self::Malformed { .. } => "malformed",
            Self::ForbiddenAddress { .. } => "forbidden_address",
            Self::UnresolvableHost => "unresolvable_host",
        }
    }
}

/// The scheme `raw` uses, after the rules every policy shares.
fn classify(raw: &str, credentials_ok: bool) -> Result<CloneScheme, CloneUrlError> {
    if raw.is_empty() {
        return Err(CloneUrlError::Empty);
    }
    if raw.len() > MAX_URL_BYTES {
        return Err(CloneUrlError::TooLong { len: raw.len() });
    }
    if let Some((at, _)) = raw
        .char_indices()
        .find(|(_, c)| c.is_control() || c.is_whitespace())
    {
        return Err(CloneUrlError::ControlCharacter { at });
    }
    let option = || CloneUrlError::OptionLike {
        url: raw.to_owned(),
    };
    let malformed = |why| CloneUrlError::Malformed {
        url: raw.to_owned(),
        why,
    };
    if raw.starts_with('-') {
        return Err(option());
    }
    // git reads `<transport>::<address>` as a remote helper wherever `::` comes
    // before the first `/`.
    let head = raw.split('/').next().unwrap_or(raw);
    if let Some((helper, _)) = head.split_once("::") {
        return Err(CloneUrlError::RemoteHelper {
            url: raw.to_owned(),
            helper: helper.to_owned(),
        });
    }
    if let Some((scheme, rest)) = raw.split_once("://") {
        let lower = scheme.to_ascii_lowercase();
        let scheme = CloneScheme::from_url_scheme(&lower)
            .ok_or_else(|| malformed("git knows no such scheme"))?;
        if scheme == CloneScheme::File {
            return Ok(scheme);
        }
        let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
        let host = match authority.rsplit_once('@') {
            Some((userinfo, host)) => {
                // `ssh://user@host` names an account, not a secret; anything else
                // before `@` (a password, a token) is a credential.
                let user_only = scheme == CloneScheme::Ssh && !userinfo.contains(':');
                if !user_only && !credentials_ok {
                    return Err(CloneUrlError::Credentials);
                }
                host
            }
            None => authority,
        };
        if host.is_empty() || host.starts_with(':') {
            return Err(malformed("it names no host"));
        }
        if host.starts_with('-') {
            return Err(option());
        }
        return Ok(scheme);
    }
    // Without `://`, git reads `[user@]host:path` as ssh when a `:` comes before the
    // first `/`; anything else is a local path.
    match head.split_once(':') {
        Some((userhost, path)) if !userhost.is_empty() => {
            // `user:password@host:path`: the first `:` is the password's.
            if !userhost.contains('@')
                && path.split_once('@').is_some_and(|(_, h)| h.contains(':'))
                && !credentials_ok
            {
                return Err(CloneUrlError::Credentials);
            }
            let host = userhost.rsplit_once('@').map_or(userhost, |(_, h)| h);
            if host.is_empty() {
                return Err(malformed("it names no host"));
            }
            if host.starts_with('-') {
                return Err(option());
            }
            if path.is_empty() && raw.len() == head.len() {
                return Err(malformed("it names no repository path"));
            }
            Ok(CloneScheme::Ssh)
        }
        _ => Ok(CloneScheme::File),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_remote_policy_takes_https_ssh_and_scp_like_and_refuses_the_rest_by_name() {
        let remote = ClonePolicy::remote();
        for (url, scheme) in [
            ("https://example.com/team/app.git", CloneScheme::Https),
            ("HTTPS://example.com/app", CloneScheme::Https),
            ("ssh://git@example.com/app.git", CloneScheme::Ssh),
            ("ssh://example.com:2222/app.git", CloneScheme::Ssh),
            ("git@example.com:team/app.git", CloneScheme::Ssh),
            ("example.com:app.git", CloneScheme::Ssh),
        ] {
            assert_eq!(remote.check(url).map(|u| u.scheme()), Ok(scheme), "{url}");
        }
        for (url, kind) in [
            ("", "empty"),
            ("ext::sh -c touch% /tmp/pwned", "control_character"),
            ("ext::sh", "remote_helper"),
            ("fd::17", "remote_helper"),
            ("file:///etc", "local_repository"),
            ("FILE:///srv/repo.git", "local_repository"),
            ("/srv/repo.git", "local_repository"),
            ("./repo", "local_repository"),
            ("../repo", "local_repository"),
            ("repo.git", "local_repository"),
            ("--upload-pack=touch /tmp/x", "control_character"),
            ("--upload-pack=x", "option_like"),
            ("-oProxyCommand=x:y", "option_like"),
            ("ssh://-oProxyCommand=x/y", "option_like"),
            ("https://user:secret@example.com/app.git", "credentials"),
            ("https://token@example.com/app.git", "credentials"),
            ("ssh://user:pw@example.com/app.git", "credentials"),
            ("user:pw@example.com:app.git", "credentials"),
            ("https://example.com/a\nb", "control_character"),
            ("https://example.com/a\u{7f}", "control_character"),
            ("git://example.com/app.git", "scheme_not_allowed"),
            ("http://example.com/app.git", "scheme_not_allowed"),
            ("gopher://example.com/app", "malformed"),
            ("https:///app.git", "malformed"),
        ] {
            let err = remote.check(url).unwrap_err();
            assert_eq!(err.kind(), kind, "{url:?}: {err}");
        }
        assert_eq!(
            remote
                .check(&format!("https://h/{}", "a".repeat(3000)))
                .unwrap_err()
                .kind(),
            "too_long"
        );
    }

    #[test]
    fn an_operator_may_add_git_and_http_but_never_file_to_the_remote_policy() {
        let policy = ClonePolicy::remote()
            .allow(CloneScheme::Git)
            .allow(CloneScheme::File)
            .allow(CloneScheme::Http);
        assert_eq!(policy.git_protocols(), "https:ssh:git:http");
        assert!(policy.check("git://127.0.0.1:9418/app").is_ok());
        assert!(policy.check("http://127.0.0.1/app").is_ok());
        assert_eq!(
            policy.check("file:///srv/app").unwrap_err().kind(),
            "local_repository"
        );
    }

    #[test]
    fn hosts_and_ports_come_out_of_every_url_form_and_a_pin_keeps_the_rest() {
        let local = ClonePolicy::local();
        for (url, host, port) in [
            ("https://example.com/app.git", "example.com", 443),
            ("https://example.com:8443/app.git", "example.com", 8443),
            ("http://[::1]:8080/app.git", "::1", 8080),
            ("git://10.0.0.1/app.git", "10.0.0.1", 9418),
            ("ssh://git@example.com:2222/app.git", "example.com", 2222),
            ("git@example.com:team/app.git", "example.com", 22),
            ("example.com:app.git", "example.com", 22),
        ] {
            let u = local.check(url).unwrap();
            assert_eq!(u.host_port(), Some((host.to_owned(), port)), "{url}");
        }
        assert_eq!(local.check("/srv/repo.git").unwrap().host_port(), None);
        let u = ClonePolicy::remote()
            .allow(CloneScheme::Git)
            .check("git://example.com:9419/team/app.git")
            .unwrap();
        assert_eq!(
            u.with_address("192.0.2.7".parse().unwrap()).as_str(),
            "git://192.0.2.7:9419/team/app.git"
        );
        assert_eq!(
            u.with_address("2001:db8::7".parse().unwrap()).as_str(),
            "git://[2001:db8::7]:9419/team/app.git"
        );
    }

    #[test]
    fn a_remote_destination_on_loopback_is_refused_by_class_unless_allowed() {
        let remote = ClonePolicy::remote().allow(CloneScheme::Http);
        let url = remote.check("http://127.0.0.1:1/app.git").unwrap();
        assert_eq!(
            remote.check_destination(&url).unwrap_err().kind(),
            "forbidden_address"
        );
        let allowed = remote.allow_addresses(vec![Allowance::Class(
            crate::address::AddressClass::Loopback,
        )]);
        assert!(allowed.check_destination(&url).is_ok());
        assert!(ClonePolicy::local().check_destination(&url).is_ok());
    }

    #[test]
    fn the_local_policy_takes_local_paths_and_still_refuses_helpers_and_options() {
        let local = ClonePolicy::local();
        assert!(local.check("/srv/repo.git").is_ok());
        assert!(local.check("file:///srv/repo.git").is_ok());
        assert!(local.check("https://me:token@example.com/app.git").is_ok());
        assert_eq!(local.check("ext::sh").unwrap_err().kind(), "remote_helper");
        assert_eq!(local.check("-u").unwrap_err().kind(), "option_like");
    }
}
