//! `GET /api/v1/repositories` and `GET /api/v1/repositories/lookup?path=ABS`: the
//! registered workspaces with their absolute paths, and the point lookup of one root,
//! for a session-start gate on this machine (the gate's API probe chain). They are the
//! only routes whose answers carry absolute paths, so they answer loopback peers only:
//! the peer's socket address decides (`ConnectInfo`), never a header a client writes.
//! Everyone else gets 403 `forbidden_peer`, even with the key and `--allow-remote`.

use std::net::SocketAddr;

use axum::extract::{ConnectInfo, FromRequestParts, Query};
use axum::http::request::Parts;
use loci_api::repositories::{self, Repositories, RepositoryLookup};
use loci_api::{ApiError, ErrorKind};
use serde::Deserialize;

use crate::reply::{HttpError, Reply};

/// The list's route.
pub const LIST_PATH: &str = "/api/v1/repositories";
/// The point lookup's route.
pub const LOOKUP_PATH: &str = "/api/v1/repositories/lookup";

/// A request whose TCP peer is a loopback address. A server started without connect
/// info (no peer known) refuses too: the check fails closed.
pub struct LoopbackPeer;

impl<S: Send + Sync> FromRequestParts<S> for LoopbackPeer {
    type Rejection = HttpError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        let peer = parts
            .extensions
            .get::<ConnectInfo<SocketAddr>>()
            .map(|c| c.0);
        match peer {
            Some(addr) if is_loopback_peer(addr) => Ok(LoopbackPeer),
            other => Err(HttpError(
                ApiError::new(
                    ErrorKind::ForbiddenPeer,
                    format!(
                        "{} answers only callers on this machine's loopback, not {}",
                        parts.uri.path(),
                        other.map_or_else(|| "an unknown peer".to_string(), |a| a.ip().to_string())
                    ),
                )
                .hint("its answers hold absolute paths; ask from this machine over 127.0.0.1 or [::1]"),
            )),
        }
    }
}

/// `127.0.0.0/8`, `::1`, and `::ffff:127.x.y.z` (an IPv4 loopback peer of a dual-stack
/// socket).
pub fn is_loopback_peer(addr: SocketAddr) -> bool {
    match addr.ip() {
        std::net::IpAddr::V4(ip) => ip.is_loopback(),
        std::net::IpAddr::V6(ip) => {
            ip.is_loopback() || ip.to_ipv4_mapped().is_some_and(|v4| v4.is_loopback())
        }
    }
}

/// The lookup's query: `?path=ABS`.
#[derive(Debug, Deserialize)]
pub struct LookupQuery {
    /// The workspace root, absolute, matched exactly.
    pub path: Option<String>,
}

/// `GET /api/v1/repositories`.
pub async fn list(_: LoopbackPeer) -> Reply<Repositories> {
    let listed = crate::handler::blocking(repositories::list).await?;
    Ok(axum::Json(listed))
}

/// `GET /api/v1/repositories/lookup?path=ABS`.
pub async fn lookup(
    _: LoopbackPeer,
    query: Result<Query<LookupQuery>, axum::extract::rejection::QueryRejection>,
) -> Reply<RepositoryLookup> {
    let path = query.ok().and_then(|q| q.0.path).ok_or_else(|| {
        HttpError(
            ApiError::new(
                ErrorKind::InvalidInput,
                "the lookup needs the query parameter `path` (the absolute workspace root)",
            )
            .hint("GET /api/v1/repositories/lookup?path=/home/me/repo"),
        )
    })?;
    let found = crate::handler::blocking(move || repositories::lookup(&path)).await?;
    Ok(axum::Json(found))
}

#[cfg(test)]
mod tests {
    use super::is_loopback_peer;

    #[test]
    fn only_loopback_peers_pass_including_ipv4_mapped_ones() {
        for good in [
            "127.0.0.1:1",
            "127.9.8.7:80",
            "[::1]:5",
            "[::ffff:127.0.0.1]:9",
        ] {
            assert!(is_loopback_peer(good.parse().unwrap()), "{good}");
        }
        for bad in [
            "192.0.2.2:1",
            "10.0.0.1:80",
            "0.0.0.0:1",
            "[::]:1",
            "[fd00::2]:1",
            "[::ffff:192.0.2.2]:9",
        ] {
            assert!(!is_loopback_peer(bad.parse().unwrap()), "{bad}");
        }
    }
}
