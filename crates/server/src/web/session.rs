//! The web view's sign-in: one-time tokens (minted by the key holder, printed by
//! `loci serve`) traded once for a session; sessions looked up by their cookie. The
//! API key itself never reaches a browser: a token is good once and for a short time,
//! a session only for the web view. Lookups compare every stored secret in constant
//! time (the stores are small and bounded), so timing tells nothing about a secret.

use std::sync::Mutex;
use std::time::{Duration, Instant};

use base64::Engine;
use loci_api::memory::MemoryAccess;
use subtle::ConstantTimeEq;

/// Unredeemed tokens kept at most; minting one more drops the oldest.
const MAX_TOKENS: usize = 16;
/// Live sessions kept at most; one more ends the oldest.
const MAX_SESSIONS: usize = 64;

/// Why a token was not accepted.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum Refused {
    /// No such token: never minted, or already used (each is good once).
    #[error("this sign-in link is unknown or was already used (each link signs in once)")]
    Unknown,
    /// The token was minted longer ago than `web.signinTtlMs`.
    #[error("this sign-in link has expired")]
    Expired,
}

/// What a signed-in browser may do: its CSRF token goes in every form it is shown.
#[derive(Debug, Clone)]
pub struct Session {
    /// The form token: a POST without it (or with another) is refused.
    pub csrf: String,
    /// The memory namespaces of the key that minted the sign-in: a session never
    /// reaches further than the key it came from.
    pub access: MemoryAccess,
}

struct Token {
    secret: String,
    minted: Instant,
    access: MemoryAccess,
}

struct Live {
    id: String,
    csrf: String,
    expires: Instant,
    access: MemoryAccess,
}

/// The tokens and sessions of one server (see the module doc).
pub struct SignIn {
    token_ttl: Duration,
    session_ttl: Duration,
    tokens: Mutex<Vec<Token>>,
    sessions: Mutex<Vec<Live>>,
}

impl std::fmt::Debug for SignIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SignIn")
            .field("token_ttl", &self.token_ttl)
            .field("session_ttl", &self.session_ttl)
            .finish_non_exhaustive()
    }
}

/// 32 bytes of the OS's random source, URL-safe base64.
fn secret() -> Result<String, getrandom::Error> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes)?;
    Ok(base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes))
}

/// Whether two secrets are equal, in time that does not depend on where they differ.
pub(crate) fn same(a: &str, b: &str) -> bool {
    a.len() == b.len() && bool::from(a.as_bytes().ct_eq(b.as_bytes()))
}

impl SignIn {
    /// A store whose tokens live `token_ttl` and sessions `session_ttl`.
    pub fn new(token_ttl: Duration, session_ttl: Duration) -> SignIn {
        SignIn {
            token_ttl,
            session_ttl,
            tokens: Mutex::new(Vec::new()),
            sessions: Mutex::new(Vec::new()),
        }
    }

    /// How long a token stays good.
    pub fn token_ttl(&self) -> Duration {
        self.token_ttl
    }

    /// How long a session lasts.
    pub fn session_ttl(&self) -> Duration {
        self.session_ttl
    }

    /// A new one-time token, for a session with `access` (the minting key's).
    pub fn mint(&self, access: MemoryAccess) -> Result<String, getrandom::Error> {
        let token = secret()?;
        let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
        let ttl = self.token_ttl;
        tokens.retain(|t| t.minted.elapsed() <= ttl);
        if tokens.len() >= MAX_TOKENS {
            tokens.remove(0);
        }
        tokens.push(Token {
            secret: token.clone(),
            minted: Instant::now(),
            access,
        });
        Ok(token)
    }

    /// Trades `token` for a new session id: the token is gone after this call, whether
    /// it was still good or not.
    pub fn redeem(&self, token: &str) -> Result<String, RedeemError> {
        let minted = {
            let mut tokens = self.tokens.lock().unwrap_or_else(|p| p.into_inner());
            let mut found = None;
            for (i, t) in tokens.iter().enumerate() {
                if same(&t.secret, token) {
                    found = Some(i);
                }
            }
            found.map(|i| tokens.remove(i))
        };
        let Token { minted, access, .. } = minted.ok_or(RedeemError::Refused(Refused::Unknown))?;
        if minted.elapsed() > self.token_ttl {
            return Err(RedeemError::Refused(Refused::Expired));
        }
        let id = secret().map_err(RedeemError::Random)?;
        let csrf = secret().map_err(RedeemError::Random)?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        sessions.retain(|s| s.expires > now);
        if sessions.len() >= MAX_SESSIONS {
            sessions.remove(0);
        }
        sessions.push(Live {
            id: id.clone(),
            csrf,
            expires: now + self.session_ttl,
            access,
        });
        Ok(id)
    }

    /// The live session of cookie value `id`, if any.
    pub fn session(&self, id: &str) -> Option<Session> {
        let sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let mut found = None;
        for s in sessions.iter() {
            if same(&s.id, id) && s.expires > now {
                found = Some(Session {
                    csrf: s.csrf.clone(),
                    access: s.access.clone(),
                });
            }
        }
        found
    }

    /// Ends the session of cookie value `id` (sign-out).
    pub fn end(&self, id: &str) {
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        sessions.retain(|s| !same(&s.id, id));
    }
}

/// Why [`SignIn::redeem`] made no session.
#[derive(Debug, thiserror::Error)]
pub enum RedeemError {
    /// The token is not good.
    #[error(transparent)]
    Refused(Refused),
    /// The OS's random source failed.
    #[error("the OS's random source failed: {0}")]
    Random(getrandom::Error),
}

#[cfg(test)]
mod tests {
    use super::*;

    fn store(token_ttl_ms: u64) -> SignIn {
        SignIn::new(Duration::from_millis(token_ttl_ms), Duration::from_secs(60))
    }

    #[test]
    fn a_token_signs_in_once() {
        let s = store(60_000);
        let t = s.mint(MemoryAccess::All).unwrap();
        let id = s.redeem(&t).unwrap();
        assert!(s.session(&id).is_some());
        assert!(matches!(
            s.redeem(&t),
            Err(RedeemError::Refused(Refused::Unknown))
        ));
    }

    #[test]
    fn an_expired_token_is_refused_and_spent() {
        let s = store(0);
        let t = s.mint(MemoryAccess::All).unwrap();
        std::thread::sleep(Duration::from_millis(2));
        assert!(matches!(
            s.redeem(&t),
            Err(RedeemError::Refused(Refused::Expired))
        ));
        assert!(matches!(
            s.redeem(&t),
            Err(RedeemError::Refused(Refused::Unknown))
        ));
    }

    #[test]
    fn unknown_cookies_and_ended_sessions_have_no_session() {
        let s = store(60_000);
        assert!(s.session("made-up").is_none());
        let id = s.redeem(&s.mint(MemoryAccess::All).unwrap()).unwrap();
        assert!(s.session(&id).is_some());
        s.end(&id);
        assert!(s.session(&id).is_none());
    }

    #[test]
    fn tokens_are_bounded() {
        let s = store(60_000);
        let first = s.mint(MemoryAccess::All).unwrap();
        for _ in 0..MAX_TOKENS {
            s.mint(MemoryAccess::All).unwrap();
        }
        assert!(s.redeem(&first).is_err(), "the oldest token was dropped");
    }
}
