//! The gate's API probe chain (seed 004), for a workspace without a `.loci/` marker:
//!
//! 1. `GET /health` on `127.0.0.1:api.port`;
//! 2. if a loci server answers, the point lookup of the root
//!    (`GET /api/v1/repositories/lookup?path=ROOT`) decides — `registry (api)`;
//! 3. if the lookup errs (neither found, absent nor busy), the repositories list
//!    (`GET /api/v1/repositories`), matched on the root exactly, decides —
//!    `registry (api list)`;
//! 4. if no server answers, `loci serve --host 127.0.0.1 --port P` is started through
//!    the supervisor ([`spawn`]): the configured port first, then random ephemeral
//!    ports while it exits with `bind_conflict`; once healthy, steps 2–3 run against
//!    it, and it is stopped and reaped before the probe returns;
//! 5. otherwise the probe is `Unknown`, and the chain's next probe (loci's own
//!    registry, `registry (cli)`) decides.
//!
//! Everything runs under one monotonic hard deadline (`api.probeDeadlineMs`), with a
//! timeout on every request. The key sent is `LOCI_API_KEY` untouched, else the
//! server's own key file, else a fresh random key; a spawned server gets the user's
//! key by inheritance or the fresh key in its environment — never in its arguments,
//! and no reason or notice ever contains a key. `api.enabled = false`
//! (`LOCI_API_ENABLED=0`) turns the whole chain off: no request, no spawn.

pub mod client;
pub mod spawn;

use std::path::{Path, PathBuf};
use std::sync::Arc;

use loci_lifecycle::Config;
use loci_lifecycle::probe::{IndexednessProbe, ProbeChain, ProbeOutcome, RegistryProbe};

use crate::repositories::{LookupState, RepositoryLookup};
use client::{Client, Deadline};

/// The decider named when a server's point lookup decides.
pub const DECIDER_API: &str = "registry (api)";
/// The decider named when a server's repositories list decides.
pub const DECIDER_API_LIST: &str = "registry (api list)";
/// The variable holding the user's API key.
pub const KEY_ENV: &str = "LOCI_API_KEY";
/// The generated key's file name, beside the registry (what `loci serve` writes).
pub const KEY_FILE: &str = "api-key";
/// Random bytes in an ephemeral key.
const EPHEMERAL_KEY_BYTES: usize = 32;

/// The gate's probe: the API chain, then loci's own registry.
pub fn gate_probe() -> Arc<dyn IndexednessProbe> {
    Arc::new(ProbeChain(vec![
        Box::new(ApiProbe),
        Box::new(RegistryProbe),
    ]))
}

/// The probe of a gate evaluated inside a loci server: its own registry alone (asking
/// the API would ask this very process, or start another server).
pub fn server_probe() -> Arc<dyn IndexednessProbe> {
    Arc::new(RegistryProbe)
}

/// The API half of the chain (see the module doc). Reads its configuration for the
/// workspace it is asked about.
#[derive(Debug, Default, Clone, Copy)]
pub struct ApiProbe;

impl IndexednessProbe for ApiProbe {
    fn lookup(&self, root: &Path) -> ProbeOutcome {
        let cfg = Config::load(Some(root));
        if !cfg.api_enabled() {
            return unknown("off (api.enabled = false)".into());
        }
        let Some(root_text) = root.to_str() else {
            return unknown(format!(
                "{} is not valid UTF-8 and cannot be sent",
                root.display()
            ));
        };
        let deadline = Deadline::after(cfg.api_probe_deadline());
        let client = Client::new();
        let port = cfg.api_port();
        let user_key = std::env::var(KEY_ENV).ok().filter(|k| !k.is_empty());
        let health = client.healthy(port, &deadline);
        if health.is_ok() {
            let key = user_key.clone().or_else(key_file).unwrap_or_default();
            return decide(&client, port, &key, root_text, &deadline);
        }
        let ephemeral;
        let (key, server_key) = match &user_key {
            Some(k) => (k.as_str(), spawn::ServerKey::Inherited),
            None => {
                ephemeral = match ephemeral_key() {
                    Ok(k) => k,
                    Err(e) => return unknown(e),
                };
                (ephemeral.as_str(), spawn::ServerKey::Ephemeral(&ephemeral))
            }
        };
        let exe = match loci_lifecycle::classify::executable(&cfg) {
            Ok(exe) => exe,
            Err(e) => return unknown(e),
        };
        match spawn::start(&exe, port, server_key, &client, &deadline) {
            Ok(server) => {
                let outcome = decide(&client, server.port, key, root_text, &deadline);
                drop(server);
                outcome
            }
            Err(why) => unknown(format!(
                "no server answered ({}); {why}",
                health.err().unwrap_or_default()
            )),
        }
    }
}

fn unknown(why: String) -> ProbeOutcome {
    ProbeOutcome::Unknown(format!("{DECIDER_API}: {why}"))
}

/// Lookup, then the list when the lookup errs.
fn decide(client: &Client, port: u16, key: &str, root: &str, deadline: &Deadline) -> ProbeOutcome {
    let lookup_failed = match client.lookup(port, key, root, deadline) {
        Ok(found) => match from_lookup(found) {
            Ok(outcome) => return outcome,
            Err(why) => why,
        },
        Err(why) => why,
    };
    match client.list(port, key, deadline) {
        Ok(list) => match list.repositories.into_iter().find(|r| r.root == root) {
            Some(r) => ProbeOutcome::Found {
                index_path: PathBuf::from(r.index_path),
                decider: DECIDER_API_LIST.into(),
            },
            None => ProbeOutcome::Absent {
                decider: DECIDER_API_LIST.into(),
            },
        },
        Err(list_failed) => unknown(format!(
            "the lookup failed ({lookup_failed}) and so did the list ({list_failed})"
        )),
    }
}

fn from_lookup(found: RepositoryLookup) -> Result<ProbeOutcome, String> {
    match (found.state, found.repository) {
        (LookupState::Indexed, Some(r)) => Ok(ProbeOutcome::Found {
            index_path: PathBuf::from(r.index_path),
            decider: DECIDER_API.into(),
        }),
        (LookupState::Indexed, None) => Err("the lookup said indexed but named no index".into()),
        (LookupState::NotIndexed, _) => Ok(ProbeOutcome::Absent {
            decider: DECIDER_API.into(),
        }),
        (LookupState::Busy, _) => Ok(ProbeOutcome::Busy {
            why: found
                .message
                .unwrap_or_else(|| "the server's registry is locked".into()),
            decider: DECIDER_API.into(),
        }),
    }
}

/// The key `loci serve` generated into its key file, if there is one to read.
fn key_file() -> Option<String> {
    let registry = loci_store::registry::default_registry_path().ok()?;
    let text = std::fs::read_to_string(registry.parent()?.join(KEY_FILE)).ok()?;
    Some(text.trim().to_string()).filter(|k| !k.is_empty())
}

/// A fresh random key (hex) for a server this probe starts.
fn ephemeral_key() -> Result<String, String> {
    let mut bytes = [0u8; EPHEMERAL_KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| format!("the system's random source failed: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}
