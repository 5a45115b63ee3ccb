//! Every mutation as one `SERIALIZABLE` transaction, retried when PostgreSQL refuses it
//! for a conflict with concurrent writers: the outcome is as if the writers of every
//! process had taken turns, as SQLite's immediate transactions do, so none loses a
//! write or duplicates a version. A refused transaction stored nothing, so running it
//! again is safe; the retries are bounded in count and time.

use std::time::{Duration, Instant};

use postgres::error::SqlState;
use postgres::{IsolationLevel, Transaction};

use super::ctx::{Ctx, Db};
use super::handle::PgStore;
use crate::MemoryError;

/// Most attempts of one transaction.
const MAX_ATTEMPTS: u32 = 64;
/// No attempt starts after this long since the first (SQLite's busy timeout is 10 s).
const BUDGET: Duration = Duration::from_secs(10);
/// The first pause between attempts; it doubles up to [`MAX_PAUSE`], with jitter.
const FIRST_PAUSE: Duration = Duration::from_millis(2);
const MAX_PAUSE: Duration = Duration::from_millis(100);

/// Why PostgreSQL refused a transaction, when running it again may succeed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Conflict {
    /// 40001 or 40P01: a concurrent writer's transaction conflicted with this one.
    Serialization,
    /// 23505: a concurrent writer inserted the same key first; run again, the
    /// transaction's own check sees it (a name taken, an entity that exists).
    Duplicate,
}

fn conflict(e: &MemoryError) -> Option<Conflict> {
    let MemoryError::Postgres { source, .. } = e else {
        return None;
    };
    let code = source.code()?;
    if *code == SqlState::T_R_SERIALIZATION_FAILURE || *code == SqlState::T_R_DEADLOCK_DETECTED {
        Some(Conflict::Serialization)
    } else if *code == SqlState::UNIQUE_VIOLATION {
        Some(Conflict::Duplicate)
    } else {
        None
    }
}

/// The pause before attempt `attempt` (2, 3...): exponential, capped, and spread by a
/// jitter from the clock and the thread so racing writers do not retry in step.
fn pause(attempt: u32) -> Duration {
    let base = FIRST_PAUSE
        .saturating_mul(1 << attempt.saturating_sub(2).min(16))
        .min(MAX_PAUSE);
    let seed = {
        use std::hash::{BuildHasher, Hasher};
        let mut h = std::collections::hash_map::RandomState::new().build_hasher();
        let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        h.write_u128(now.map_or(0, |d| d.as_nanos()));
        h.write_u32(attempt);
        h.finish()
    };
    // Between half and one and a half times the base.
    base / 2 + Duration::from_nanos(seed % (base.as_nanos() as u64).max(1))
}

impl PgStore {
    /// Runs `f` in a `SERIALIZABLE` transaction and commits; on a conflict (see
    /// [`Conflict`]) rolls back and runs it again, up to [`MAX_ATTEMPTS`] times within
    /// [`BUDGET`]. `f` may run several times: it must only act through the transaction.
    pub(super) fn write<T>(
        &self,
        mut f: impl FnMut(&mut Transaction<'_>, &Ctx) -> Result<T, MemoryError>,
    ) -> Result<T, MemoryError> {
        let c = &self.ctx;
        let mut client = self.client()?;
        let started = Instant::now();
        let mut attempt = 0;
        loop {
            attempt += 1;
            let outcome = (|| {
                let mut tx = client
                    .build_transaction()
                    .isolation_level(IsolationLevel::Serializable)
                    .start()
                    .db(c)?;
                let out = f(&mut tx, c)?;
                tx.commit().db(c)?;
                Ok(out)
            })();
            let err = match outcome {
                Ok(out) => return Ok(out),
                Err(e) => e,
            };
            let Some(kind) = conflict(&err) else {
                return Err(err);
            };
            if attempt >= MAX_ATTEMPTS || started.elapsed() >= BUDGET {
                return Err(match kind {
                    Conflict::Serialization => MemoryError::PgConflict {
                        target: c.target.clone(),
                        attempts: attempt,
                        elapsed_ms: started.elapsed().as_millis() as u64,
                    },
                    // Not a race after all: the database's own words.
                    Conflict::Duplicate => err,
                });
            }
            tracing::debug!(target: "memory", attempt, ?kind, "memory transaction conflicted; retrying");
            std::thread::sleep(pause(attempt + 1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pauses_grow_to_a_cap_and_stay_within_half_and_one_and_a_half_times_it() {
        for attempt in 2..40 {
            let p = pause(attempt);
            assert!(p >= FIRST_PAUSE / 2, "{attempt}: {p:?}");
            assert!(p <= MAX_PAUSE * 3 / 2, "{attempt}: {p:?}");
        }
        assert!(pause(30) >= MAX_PAUSE / 2);
    }
}
