//! The API key every request but `GET /health` must carry: `LOCI_API_KEY` when set
//! (used exactly as given), else a random key generated once into `<data dir>/api-key`
//! (mode 0600, beside the registry) and reused by every later `loci serve`. That key
//! uses every memory namespace. More keys, each optionally scoped to memory
//! namespaces, are listed in `api-keys.toml` beside it (or the file
//! `LOCI_API_KEYS_FILE` names): see [`Keys`] and docs/http.md.

use std::io::Write;
use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use base64::Engine;
use loci_api::memory::{MemoryAccess, NamespaceScope};
use loci_api::{ApiError, ErrorKind};
use subtle::ConstantTimeEq;

/// The environment variable that sets the key.
pub const KEY_ENV: &str = "LOCI_API_KEY";
/// The key file's name inside the data directory.
pub const KEY_FILE: &str = "api-key";
/// Random bytes in a generated key (256 bits).
const KEY_BYTES: usize = 32;
/// The environment variable naming the file of further keys.
pub const KEYS_FILE_ENV: &str = "LOCI_API_KEYS_FILE";
/// The file of further keys, beside the key file.
pub const KEYS_FILE: &str = "api-keys.toml";
/// The shortest key the keys file takes, in bytes.
pub const MIN_KEY_BYTES: usize = 16;

/// A fixed set of keys, each with the memory namespaces it may use: the server's own
/// key (every namespace) and those the keys file listed when it was last read. The
/// server holds it in a [`KeyRing`](crate::key_ring::KeyRing), which rereads the file.
#[derive(Debug, Clone)]
pub struct Keys {
    keys: Vec<(ApiKey, MemoryAccess)>,
}

impl Keys {
    /// The server's key alone (every namespace).
    pub fn only(key: ApiKey) -> Keys {
        Keys {
            keys: vec![(key, MemoryAccess::All)],
        }
    }

    /// The server's key and the keys file's (already parsed against it).
    pub fn with_file_keys(main: ApiKey, file: Vec<(ApiKey, MemoryAccess)>) -> Keys {
        let mut keys = Keys::only(main);
        keys.keys.extend(file);
        keys
    }

    /// Whether any of `offered` is one of the keys, two different ones included: what
    /// must never be seen where a key does not belong (a URL). Every offered value is
    /// compared with every key, in constant time each, with no early exit.
    pub fn holds_any<'a>(&self, offered: impl Iterator<Item = &'a [u8]>) -> bool {
        let mut found = false;
        for value in offered {
            for (key, _) in &self.keys {
                found |= key.matches(value);
            }
        }
        found
    }

    /// How many keys there are, the server's own included.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Never: the server's own key is always there.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    /// What the `offered` keys may do: the access of the one key they match, `None`
    /// when none matches or they match two different keys. Every offered value is
    /// compared with every key, in constant time each, with no early exit.
    pub fn access<'a>(&self, offered: impl Iterator<Item = &'a [u8]>) -> Option<MemoryAccess> {
        let mut matched: Option<usize> = None;
        let mut conflict = false;
        for value in offered {
            for (i, (key, _)) in self.keys.iter().enumerate() {
                if key.matches(value) {
                    conflict |= matched.is_some_and(|m| m != i);
                    matched = Some(i);
                }
            }
        }
        match matched {
            Some(i) if !conflict => Some(self.keys[i].1.clone()),
            _ => None,
        }
    }
}

/// Where the keys file is: `LOCI_API_KEYS_FILE` when set (`true`: it must exist),
/// else `api-keys.toml` beside the key file (`false`: absent means no further key).
pub fn keys_file_path() -> Result<(PathBuf, bool), ApiError> {
    Ok(match std::env::var_os(KEYS_FILE_ENV) {
        Some(p) if !p.is_empty() => (PathBuf::from(p), true),
        _ => (key_path()?.with_file_name(KEYS_FILE), false),
    })
}

/// The keys the file at `path` lists beside `main` (none when it is absent and not
/// `required`), after narrowing it to its owner.
pub fn read_keys_file(path: &Path, required: bool, main: &ApiKey) -> Result<Keys, ApiError> {
    let text = match std::fs::read_to_string(path) {
        Ok(text) => text,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound && !required => {
            return Ok(Keys::only(main.clone()));
        }
        Err(e) => return Err(unreadable(path, &e)),
    };
    restrict(path)?;
    let only = Keys::only(main.clone());
    let file = parse_keys_file(&text, path, &only)?;
    Ok(Keys::with_file_keys(main.clone(), file))
}

/// The keys of a keys file (TOML): one `[[keys]]` table per key, with `key` (at least
/// [`MIN_KEY_BYTES`] of printable ASCII, no space), an optional `name` (what errors
/// call it) and an optional `namespaces` (a non-empty array of namespace names: the
/// key uses only those; absent: every namespace). No error quotes a key.
pub fn parse_keys_file(
    text: &str,
    path: &Path,
    existing: &Keys,
) -> Result<Vec<(ApiKey, MemoryAccess)>, ApiError> {
    let bad = |what: String| {
        ApiError::new(
            ErrorKind::InvalidInput,
            format!("the API keys file {}: {what}", path.display()),
        )
        .hint("each key is a [[keys]] table: key = \"...\" (16 or more characters), name = \"...\" (optional), namespaces = [\"...\"] (optional: absent means every namespace)")
    };
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        // The message alone: the error's own rendering quotes the line, which may hold a key.
        let line = e
            .span()
            .map(|s| text[..s.start.min(text.len())].matches('\n').count() + 1);
        bad(match line {
            Some(l) => format!("line {l}: {}", e.message()),
            None => e.message().to_string(),
        })
    })?;
    if let Some(other) = table.keys().find(|k| *k != "keys") {
        return Err(bad(format!(
            "unknown table or field `{other}` (only [[keys]])"
        )));
    }
    let entries = match table.get("keys") {
        None => return Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a,
        Some(_) => return Err(bad("`keys` must be an array of tables ([[keys]])".into())),
    };
    let mut out: Vec<(ApiKey, MemoryAccess)> = Vec::new();
    for (i, entry) in entries.iter().enumerate() {
        let toml::Value::Table(entry) = entry else {
            return Err(bad(format!("keys entry {} is not a table", i + 1)));
        };
        let label = match entry.get("name") {
            None => format!("keys entry {}", i + 1),
            Some(toml::Value::String(n)) => format!("keys entry {} ({n:?})", i + 1),
            Some(_) => {
                return Err(bad(format!(
                    "keys entry {}: `name` must be a string",
                    i + 1
                )));
            }
        };
        if let Some(other) = entry
            .keys()
            .find(|k| !["key", "name", "namespaces"].contains(&k.as_str()))
        {
            return Err(bad(format!(
                "{label}: unknown field `{other}` (key, name, namespaces)"
            )));
        }
        let key = match entry.get("key") {
            Some(toml::Value::String(k)) => k,
            Some(_) => return Err(bad(format!("{label}: `key` must be a string"))),
            None => return Err(bad(format!("{label} has no `key`"))),
        };
        if key.len() < MIN_KEY_BYTES {
            return Err(bad(format!(
                "{label}: the key is shorter than {MIN_KEY_BYTES} characters"
            )));
        }
        if !key.bytes().all(|b| b.is_ascii_graphic()) {
            return Err(bad(format!(
                "{label}: the key holds a space, a control character or a character outside ASCII"
            )));
        }
        if existing.holds_any(std::iter::once(key.as_bytes()))
            || out.iter().any(|(k, _)| k.matches(key.as_bytes()))
        {
            return Err(bad(format!(
                "{label}: the key is already another key (LOCI_API_KEY, the api-key file, or an entry above)"
            )));
        }
        let access = match entry.get("namespaces") {
            None => MemoryAccess::All,
            Some(toml::Value::Array(list)) => {
                let names = list
                    .iter()
                    .map(|v| match v {
                        toml::Value::String(s) => Ok(s.clone()),
                        _ => Err(bad(format!("{label}: `namespaces` must hold strings"))),
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                MemoryAccess::Scoped(
                    NamespaceScope::new(names)
                        .map_err(|e| bad(format!("{label}: {}", e.message)))?,
                )
            }
            Some(_) => {
                return Err(bad(format!(
                    "{label}: `namespaces` must be an array of names"
                )));
            }
        };
        out.push((ApiKey::new(key), access));
    }
    Ok(out)
}

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

    const MAIN: &str = "the-servers-own-key-0000";

    fn parse(text: &str) -> Result<Vec<(ApiKey, MemoryAccess)>, ApiError> {
        parse_keys_file(
            text,
            Path::new("/k/api-keys.toml"),
            &Keys::only(ApiKey::new(MAIN)),
        )
    }

    #[test]
    fn the_keys_file_gives_each_key_its_namespaces() {
        let keys = parse(
            "[[keys]]\nname = \"a\"\nkey = \"aaaaaaaaaaaaaaaa-1\"\nnamespaces = [\"team-a\", \"shared\"]\n\n\
             [[keys]]\nkey = \"bbbbbbbbbbbbbbbb-2\"\n",
        )
        .unwrap();
        assert_eq!(keys.len(), 2);
        let MemoryAccess::Scoped(scope) = &keys[0].1 else {
            panic!("{:?}", keys[0].1)
        };
        assert_eq!(scope.namespaces(), ["team-a", "shared"]);
        assert_eq!(keys[1].1, MemoryAccess::All);
        assert!(parse("").unwrap().is_empty());
        let all = Keys {
            keys: [(ApiKey::new(MAIN), MemoryAccess::All)]
                .into_iter()
                .chain(keys)
                .collect(),
        };
        let b = |s: &'static str| s.as_bytes();
        assert_eq!(all.access([b(MAIN)].into_iter()), Some(MemoryAccess::All));
        assert!(matches!(
            all.access([b("wrong"), b("aaaaaaaaaaaaaaaa-1")].into_iter()),
            Some(MemoryAccess::Scoped(_))
        ));
        // Two different keys at once are refused, whichever they are.
        assert_eq!(
            all.access([b(MAIN), b("aaaaaaaaaaaaaaaa-1")].into_iter()),
            None
        );
        assert_eq!(all.access([b("aaaaaaaaaaaaaaaa-1 ")].into_iter()), None);
        assert_eq!(all.access(std::iter::empty()), None);
        // Holding a key, though, is holding any: two different keys hold two.
        assert!(all.holds_any([b(MAIN), b("aaaaaaaaaaaaaaaa-1")].into_iter()));
        assert!(all.holds_any([b("wrong"), b("aaaaaaaaaaaaaaaa-1")].into_iter()));
        assert!(!all.holds_any([b("wrong"), b("aaaaaaaaaaaaaaaa-1 ")].into_iter()));
        assert!(!all.holds_any(std::iter::empty()));
    }

    #[test]
    fn a_bad_keys_file_is_refused_naming_the_entry_never_the_key() {
        let secret = "sssssssssssssssssecret";
        for (text, says) in [
            ("[[keys]]\nkey = \"short\"", "shorter than 16"),
            (&format!("[[keys]]\nkey = \"{secret} x\""), "space"),
            (
                &format!("[[keys]]\nkey = \"{MAIN}\""),
                "already another key",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\n[[keys]]\nkey = \"{secret}\""),
                "entry 2",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\nnamespaces = []"),
                "empty",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\nnamespaces = [\" a\"]"),
                "whitespace",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\nnamespaces = [\"a\", \"a\"]"),
                "twice",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\nnamespaces = [\"a\\u0007\"]"),
                "control",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\nnamespaces = \"a\""),
                "array",
            ),
            (
                &format!("[[keys]]\nkey = \"{secret}\"\nnamespace = [\"a\"]"),
                "unknown field `namespace`",
            ),
            (
                "[[keys]]\nname = \"ci\"\nnamespaces = [\"a\"]",
                "entry 1 (\"ci\") has no `key`",
            ),
            (
                &format!("key = \"{secret}\""),
                "unknown table or field `key`",
            ),
            (&format!("[[keys]]\nkey = \"{secret}"), "line 2"),
            ("[[keys]]\nkey = 1234567890123456", "must be a string"),
        ] {
            let e = parse(text).unwrap_err();
            assert_eq!(e.kind, ErrorKind::InvalidInput, "{text}: {e}");
            assert!(e.message.contains(says), "{text}: {e}");
            assert!(e.message.contains("/k/api-keys.toml"), "{e}");
            assert!(
                !e.message.contains(secret) && !e.message.contains(MAIN),
                "{e}"
            );
            assert!(!e.message.contains("1234567890123456"), "{e}");
        }
    }
}
