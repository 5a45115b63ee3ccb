//! The API key every request but `GET /health` must carry: `LOCI_API_KEY` when set
//! (used exactly as given), else a random key generated once into `<data dir>/api-key`
//! (mode 0600, beside the registry) and reused by every later `loci serve`.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use loci_api::{ApiError, ErrorKind};
use subtle::ConstantTimeEq;

/// The environment variable that sets the key.
pub const KEY_ENV: &str = "LOCI_API_KEY";
/// The key file's name inside the data directory.
pub const KEY_FILE: &str = "api-key";
/// Random bytes in a generated key (256 bits).
const KEY_BYTES: usize = 32;

/// The key the server accepts. Its `Debug` never shows it.
#[derive(Clone)]
pub struct ApiKey(Vec<u8>);

impl std::fmt::Debug for ApiKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ApiKey(<redacted>)")
    }
}

impl ApiKey {
    /// A key from its text (for tests and the environment).
    pub fn new(text: &str) -> ApiKey {
        ApiKey(text.as_bytes().to_vec())
    }

    /// Whether `offered` is the key, in time that does not depend on where they differ.
    pub fn matches(&self, offered: &[u8]) -> bool {
        bool::from(self.0.as_slice().ct_eq(offered))
    }
}

/// Where the generated key lives: `api-key` beside the registry.
pub fn key_path() -> Result<PathBuf, ApiError> {
    let registry = loci_api::vocab::store::default_registry_path()?;
    let dir = registry.parent().ok_or_else(|| {
        ApiError::new(
            ErrorKind::Failure,
            format!("the registry path {} has no directory", registry.display()),
        )
    })?;
    Ok(dir.join(KEY_FILE))
}

/// The key: `LOCI_API_KEY` if set and not empty, else the key file (created on first
/// use).
pub fn load() -> Result<ApiKey, ApiError> {
    match std::env::var(KEY_ENV) {
        Ok(k) if !k.is_empty() => Ok(ApiKey::new(&k)),
        _ => load_or_create(&key_path()?),
    }
}

/// The key stored at `path`, or a new random one written there with mode 0600.
pub fn load_or_create(path: &Path) -> Result<ApiKey, ApiError> {
    match std::fs::read_to_string(path) {
        Ok(text) => {
            let key = text.trim();
            if key.is_empty() {
                return Err(ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("the API key file {} is empty", path.display()),
                )
                .hint("delete it so `loci serve` writes a new key, or set LOCI_API_KEY"));
            }
            restrict(path)?;
            return Ok(ApiKey::new(key));
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(unreadable(path, &e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(|e| {
            ApiError::new(
                ErrorKind::Mkdir,
                format!("cannot create {}: {e}", dir.display()),
            )
        })?;
    }
    let mut bytes = [0u8; KEY_BYTES];
    getrandom::fill(&mut bytes).map_err(|e| {
        ApiError::new(
            ErrorKind::Failure,
            format!("the system's random source failed: {e}"),
        )
    })?;
    let key = base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes);
    let created = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path);
    match created {
        Ok(mut file) => {
            file.write_all(key.as_bytes())
                .and_then(|()| file.write_all(b"\n"))
                .and_then(|()| file.sync_all())
                .map_err(|e| unreadable(path, &e))?;
            Ok(ApiKey::new(&key))
        }
        // Another `loci serve` wrote it first: use that one.
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => load_or_create(path),
        Err(e) => Err(unreadable(path, &e)),
    }
}

/// A key file others can read is narrowed to its owner.
fn restrict(path: &Path) -> Result<(), ApiError> {
    let meta = std::fs::metadata(path).map_err(|e| unreadable(path, &e))?;
    if meta.permissions().mode() & 0o077 != 0 {
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600))
            .map_err(|e| unreadable(path, &e))?;
    }
    Ok(())
}

fn unreadable(path: &Path, e: &std::io::Error) -> ApiError {
    ApiError::new(
        ErrorKind::Unreadable,
        format!("cannot use the API key file {}: {e}", path.display()),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_generated_key_is_private_and_reused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join(KEY_FILE);
        let first = load_or_create(&path).unwrap();
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "{mode:o}");
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(text.trim().len() >= 40, "{text}");
        assert!(first.matches(text.trim().as_bytes()));
        let again = load_or_create(&path).unwrap();
        assert!(again.matches(text.trim().as_bytes()));
        assert!(!again.matches(b"wrong"));
        assert!(!format!("{first:?}").contains(text.trim()));
    }
}
