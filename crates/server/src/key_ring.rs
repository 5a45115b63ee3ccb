//! The keys the server accepts as the keys file says now. Each request looks at the
//! file's metadata (one `stat`) and rereads it when it changed, so a key added,
//! rescoped or revoked takes effect on the next request without a restart. A file
//! that stops parsing (or becomes unreadable, or goes away when `LOCI_API_KEYS_FILE`
//! names it) drops every key it listed until it is mended: the server's own key keeps
//! working, and a mistake made while revoking a key never leaves that key working.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use loci_api::ApiError;
use loci_api::memory::MemoryAccess;
use loci_api::vocab::store::FileStamp;

use crate::key::{self, ApiKey, Keys};

/// The server's key, the keys file it watches, and that file's keys as last read.
#[derive(Debug)]
pub struct KeyRing {
    main: ApiKey,
    file: PathBuf,
    required: bool,
    read: Mutex<Read>,
}

/// The keys in force and the file's state they were read from.
#[derive(Debug)]
struct Read {
    stamp: Option<FileStamp>,
    keys: Arc<Keys>,
}

impl KeyRing {
    /// The server's key and the keys file's (see [`key::keys_file_path`]). A keys file
    /// that is bad at start stops the server: nothing is served on a guess.
    pub fn load() -> Result<KeyRing, ApiError> {
        let main = key::load()?;
        let (file, required) = key::keys_file_path()?;
        KeyRing::watching(main, file, required)
    }

    /// A ring over `main` and the keys file at `file` (`required`: it must exist).
    pub fn watching(main: ApiKey, file: PathBuf, required: bool) -> Result<KeyRing, ApiError> {
        // Stamped before reading: a write racing the read changes the stamp again, and
        // the next request reads once more. (Narrowing the file's mode changes its ctime
        // too: that costs one harmless second read.)
        let stamp = FileStamp::of(&file);
        let keys = key::read_keys_file(&file, required, &main)?;
        Ok(KeyRing {
            main,
            file,
            required,
            read: Mutex::new(Read {
                stamp,
                keys: Arc::new(keys),
            }),
        })
    }

    /// What the `offered` keys may do (see [`Keys::access`]), against the keys file as
    /// it is now.
    pub fn access<'a>(&self, offered: impl Iterator<Item = &'a [u8]>) -> Option<MemoryAccess> {
        self.current().access(offered)
    }

    /// The keys in force, after rereading the file if it changed since last read.
    pub fn current(&self) -> Arc<Keys> {
        let now = FileStamp::of(&self.file);
        let mut read = self.read.lock().unwrap_or_else(|p| p.into_inner());
        if read.stamp != now {
            read.keys = Arc::new(self.reread());
            read.stamp = now;
        }
        Arc::clone(&read.keys)
    }

    /// The file's keys now; the server's key alone when the file is bad.
    fn reread(&self) -> Keys {
        match key::read_keys_file(&self.file, self.required, &self.main) {
            Ok(keys) => {
                tracing::info!(
                    file = %self.file.display(),
                    keys = keys.len() - 1,
                    "the API keys file changed and was read again"
                );
                keys
            }
            Err(e) => {
                tracing::error!("{e}; until it is mended only the server's own key is accepted");
                Keys::only(self.main.clone())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MAIN: &str = "the-servers-own-key-0000";
    const ALPHA: &str = "alpha-key-0123456789";
    const BETA: &str = "beta-key-0123456789a";

    fn entry(key: &str, namespace: &str) -> String {
        format!("[[keys]]\nkey = \"{key}\"\nnamespaces = [\"{namespace}\"]\n")
    }

    fn scope(ring: &KeyRing, key: &str) -> Option<Vec<String>> {
        match ring.access(std::iter::once(key.as_bytes()))? {
            MemoryAccess::All => Some(vec!["*".into()]),
            MemoryAccess::Scoped(s) => Some(s.namespaces().to_vec()),
        }
    }

    #[test]
    fn a_key_added_rescoped_or_revoked_counts_on_the_next_request() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api-keys.toml");
        std::fs::write(&path, entry(ALPHA, "team-a")).unwrap();
        let ring = KeyRing::watching(ApiKey::new(MAIN), path.clone(), true).unwrap();
        assert_eq!(scope(&ring, ALPHA), Some(vec!["team-a".into()]));
        assert_eq!(scope(&ring, BETA), None);

        // Added, and rescoped, written in place.
        std::fs::write(&path, entry(ALPHA, "team-b") + &entry(BETA, "team-c")).unwrap();
        assert_eq!(scope(&ring, ALPHA), Some(vec!["team-b".into()]));
        assert_eq!(scope(&ring, BETA), Some(vec!["team-c".into()]));

        // Revoked by replacing the file (a new inode, as editors and `mv` do).
        let next = dir.path().join("next.toml");
        std::fs::write(&next, entry(BETA, "team-c")).unwrap();
        std::fs::rename(&next, &path).unwrap();
        assert_eq!(scope(&ring, ALPHA), None);
        assert_eq!(scope(&ring, BETA), Some(vec!["team-c".into()]));
        assert_eq!(scope(&ring, MAIN), Some(vec!["*".into()]));
    }

    #[test]
    fn a_bad_or_missing_file_drops_its_keys_until_mended_and_keeps_the_servers() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api-keys.toml");
        let good = entry(ALPHA, "team-a");
        std::fs::write(&path, &good).unwrap();
        let ring = KeyRing::watching(ApiKey::new(MAIN), path.clone(), true).unwrap();
        for bad in [
            // A typo made while revoking another key.
            format!("{good}[[keys]]\nkey = \"{BETA}\"\nnamespaces = \"team-c\"\n"),
            format!("{good}[[keys"),
            String::new() + &good + &good,
        ] {
            std::fs::write(&path, &bad).unwrap();
            assert_eq!(scope(&ring, ALPHA), None, "{bad}");
            assert_eq!(scope(&ring, MAIN), Some(vec!["*".into()]));
            std::fs::write(&path, &good).unwrap();
            assert_eq!(scope(&ring, ALPHA), Some(vec!["team-a".into()]), "{bad}");
        }
        // A named file that goes away takes its keys with it; back, they are back.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(scope(&ring, ALPHA), None);
        assert_eq!(scope(&ring, MAIN), Some(vec!["*".into()]));
        std::fs::write(&path, &good).unwrap();
        assert_eq!(scope(&ring, ALPHA), Some(vec!["team-a".into()]));
    }

    #[test]
    fn the_default_file_may_appear_later_and_a_bad_one_at_start_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api-keys.toml");
        let ring = KeyRing::watching(ApiKey::new(MAIN), path.clone(), false).unwrap();
        assert_eq!(scope(&ring, ALPHA), None);
        std::fs::write(&path, entry(ALPHA, "team-a")).unwrap();
        assert_eq!(scope(&ring, ALPHA), Some(vec!["team-a".into()]));
        let mode = std::os::unix::fs::MetadataExt::mode(&std::fs::metadata(&path).unwrap());
        assert_eq!(mode & 0o077, 0, "narrowed to its owner: {mode:o}");

        std::fs::write(&path, "[[keys").unwrap();
        let e = KeyRing::watching(ApiKey::new(MAIN), path.clone(), false).unwrap_err();
        assert_eq!(e.kind, loci_api::ErrorKind::InvalidInput, "{e}");
        let missing = dir.path().join("absent.toml");
        let e = KeyRing::watching(ApiKey::new(MAIN), missing, true).unwrap_err();
        assert_eq!(e.kind, loci_api::ErrorKind::Unreadable, "{e}");
    }
}
