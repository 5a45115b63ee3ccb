//! The HTTP half of the probe: `GET /health`, the point lookup and the repositories
//! list of a loci server on `127.0.0.1:PORT`, each with its own timeout, none past the
//! probe's one deadline.

use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::repositories::{Repositories, RepositoryLookup};

/// The longest a health request may take (a loci server answers it in about a
/// millisecond; a port held by something that never answers must not eat the budget).
const HEALTH_TIMEOUT: Duration = Duration::from_millis(250);
/// The longest a lookup or list request may take.
const REQUEST_TIMEOUT: Duration = Duration::from_millis(1_000);

/// One monotonic hard deadline shared by every step of the probe.
#[derive(Debug, Clone, Copy)]
pub struct Deadline {
    start: Instant,
    end: Instant,
}

impl Deadline {
    /// A deadline `budget` from now.
    pub fn after(budget: Duration) -> Deadline {
        let start = Instant::now();
        Deadline {
            start,
            end: start + budget,
        }
    }

    /// What is left (zero once passed).
    pub fn remaining(&self) -> Duration {
        self.end.saturating_duration_since(Instant::now())
    }

    /// Whether it has passed.
    pub fn expired(&self) -> bool {
        self.remaining().is_zero()
    }

    /// Time since the probe started.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed()
    }

    /// The timeout of one request: `cap`, never past the deadline.
    fn request(&self, cap: Duration) -> Result<Duration, String> {
        match self.remaining().min(cap) {
            d if d.is_zero() => Err("the probe's deadline passed".into()),
            d => Ok(d),
        }
    }
}

/// A blocking HTTP client for loopback loci servers: no proxy (a proxy from the
/// environment must never see a loopback request or its key), no redirects, statuses
/// as answers.
pub struct Client {
    agent: ureq::Agent,
}

#[derive(Deserialize)]
struct Health {
    status: String,
}

impl Client {
    /// A client.
    pub fn new() -> Client {
        let agent = ureq::Agent::config_builder()
            .proxy(None)
            .max_redirects(0)
            .http_status_as_error(false)
            .build()
            .into();
        Client { agent }
    }

    /// Whether a loci server answers `GET /health` on `port` (no key is sent: whatever
    /// listens there is not trusted with it before it proves to be loci).
    pub fn healthy(&self, port: u16, deadline: &Deadline) -> Result<(), String> {
        let timeout = deadline.request(HEALTH_TIMEOUT)?;
        let url = format!("http://127.0.0.1:{port}/health");
        let mut resp = self
            .agent
            .get(&url)
            .config()
            .timeout_global(Some(timeout))
            .build()
            .call()
            .map_err(|e| format!("GET /health on 127.0.0.1:{port}: {e}"))?;
        let status = resp.status().as_u16();
        let health: Option<Health> = resp.body_mut().read_json().ok();
        match health {
            Some(h) if status == 200 && h.status == "ok" => Ok(()),
            _ => Err(format!(
                "127.0.0.1:{port} answered GET /health with {status}, not a loci server's health"
            )),
        }
    }

    /// The point lookup of `root`.
    pub fn lookup(
        &self,
        port: u16,
        key: &str,
        root: &str,
        deadline: &Deadline,
    ) -> Result<RepositoryLookup, String> {
        let url = format!("http://127.0.0.1:{port}/api/v1/repositories/lookup");
        let req = self.agent.get(&url).query("path", root);
        self.get_json(req, key, deadline, "GET /api/v1/repositories/lookup")
    }

    /// The list of every registered workspace.
    pub fn list(&self, port: u16, key: &str, deadline: &Deadline) -> Result<Repositories, String> {
        let url = format!("http://127.0.0.1:{port}/api/v1/repositories");
        let req = self.agent.get(&url);
        self.get_json(req, key, deadline, "GET /api/v1/repositories")
    }

    fn get_json<T: serde::de::DeserializeOwned>(
        &self,
        req: ureq::RequestBuilder<ureq::typestate::WithoutBody>,
        key: &str,
        deadline: &Deadline,
        what: &str,
    ) -> Result<T, String> {
        let timeout = deadline.request(REQUEST_TIMEOUT)?;
        let mut resp = req
            .header("Authorization", &format!("Bearer {key}"))
            .config()
            .timeout_global(Some(timeout))
            .build()
            .call()
            .map_err(|e| format!("{what}: {e}"))?;
        let status = resp.status().as_u16();
        if status != 200 {
            // The error envelope's kind, never the body as a whole.
            let kind = resp
                .body_mut()
                .read_json::<serde_json::Value>()
                .ok()
                .and_then(|v| v["error"]["kind"].as_str().map(str::to_string))
                .unwrap_or_else(|| "no error kind".into());
            return Err(format!("{what} answered {status} ({kind})"));
        }
        resp.body_mut()
            .read_json()
            .map_err(|e| format!("{what}: the answer is not the expected JSON: {e}"))
    }
}

impl Default for Client {
    fn default() -> Client {
        Client::new()
    }
}
