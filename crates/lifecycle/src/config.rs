//! Layered configuration: built-in defaults < `$XDG_CONFIG_HOME/loci/config.toml` <
//! `<workspace>/.loci/config.toml` < environment (`LOCI_<SECTION>_<KEY>`).
//!
//! Every key is declared once in [`KEYS`] with its type, range, default and variable.
//! A value of the wrong type or out of range is skipped with one warning naming the key
//! and the layer, and the lower layer's value applies.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::fmt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Serialize;

mod keys;
mod value;

pub use keys::{KEYS, MAX_FILE_BYTES_RANGE};
pub use value::{KeyDef, Kind, SecretUrl, Value, mask_password};

/// Where a value came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "layer", rename_all = "snake_case")]
pub enum Source {
    /// Built into loci.
    Default,
    /// The user's file (`$XDG_CONFIG_HOME/loci/config.toml`).
    User {
        /// The file.
        path: PathBuf,
    },
    /// The workspace's file (`<workspace>/.loci/config.toml`).
    Workspace {
        /// The file.
        path: PathBuf,
    },
    /// An environment variable.
    Env {
        /// The variable.
        var: String,
    },
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Source::Default => f.write_str("default"),
            Source::User { path } => write!(f, "user config {}", path.display()),
            Source::Workspace { path } => write!(f, "workspace config {}", path.display()),
            Source::Env { var } => write!(f, "environment {var}"),
        }
    }
}

/// A value that was skipped, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ConfigWarning {
    /// The key (or `*` for a whole file that could not be read).
    pub key: String,
    /// The layer it was in.
    pub layer: Source,
    /// What was wrong.
    pub message: String,
}

impl fmt::Display for ConfigWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "config: {} in {}: {}; the lower layer's value applies",
            self.key, self.layer, self.message
        )
    }
}

/// One effective setting, for `loci config show`.
#[derive(Debug, Clone, Serialize)]
pub struct Setting {
    /// Dotted key.
    pub key: &'static str,
    /// Its environment variable.
    pub env: &'static str,
    /// The effective value (`None`: unset).
    pub value: Option<Value>,
    /// Where it came from.
    pub source: Source,
    /// What it does.
    pub doc: &'static str,
}

/// The effective configuration for one workspace.
#[derive(Debug, Clone)]
pub struct Config {
    settings: BTreeMap<&'static str, Setting>,
    warnings: Vec<ConfigWarning>,
}

/// Reads environment variables (the process environment, or a map in tests).
pub type EnvLookup<'a> = &'a dyn Fn(&str) -> Option<OsString>;

impl Config {
    /// Loads the layers for `workspace` (no workspace layer when `None`) from the
    /// process environment.
    pub fn load(workspace: Option<&Path>) -> Config {
        Config::load_with(workspace, &|name| std::env::var_os(name))
    }

    /// Loads the layers, reading variables through `env`.
    pub fn load_with(workspace: Option<&Path>, env: EnvLookup<'_>) -> Config {
        let mut config = Config {
            settings: KEYS
                .iter()
                .map(|d| {
                    (
                        d.key,
                        Setting {
                            key: d.key,
                            env: d.env,
                            value: d.default.clone(),
                            source: Source::Default,
                            doc: d.doc,
                        },
                    )
                })
                .collect(),
            warnings: Vec::new(),
        };
        if let Some(path) = user_config_path(env) {
            config.apply_file(&path, Source::User { path: path.clone() });
        }
        if let Some(ws) = workspace {
            let path = ws.join(loci_store::INDEX_DIR).join("config.toml");
            config.apply_file(&path, Source::Workspace { path: path.clone() });
        }
        for def in KEYS {
            let Some(raw) = env(def.env) else { continue };
            let layer = Source::Env {
                var: def.env.to_string(),
            };
            let text = raw.to_string_lossy();
            match parse_env(def.kind, text.trim()) {
                Ok(v) => config.set(def, v, layer),
                Err(message) => config.warn(def.key, layer, message),
            }
        }
        config
    }

    fn apply_file(&mut self, path: &Path, layer: Source) {
        let text = match std::fs::read_to_string(path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return,
            Err(e) => return self.warn("*", layer, format!("cannot read the file: {e}")),
        };
        let table: toml::Table = match text.parse() {
            Ok(t) => t,
            Err(e) => {
                let first = e.to_string().lines().next().unwrap_or("").to_string();
                return self.warn("*", layer, format!("not valid TOML: {first}"));
            }
        };
        for (section, inner) in &table {
            let Some(inner) = inner.as_table() else {
                self.warn(section, layer.clone(), "expected a table".into());
                continue;
            };
            for (name, value) in inner {
                let key = format!("{section}.{name}");
                match KEYS.iter().find(|d| d.key == key) {
                    None => self.warn(&key, layer.clone(), "unknown key".into()),
                    Some(def) => match parse_toml(def.kind, value) {
                        Ok(v) => self.set(def, v, layer.clone()),
                        Err(message) => self.warn(&key, layer.clone(), message),
                    },
                }
            }
        }
    }

    fn set(&mut self, def: &KeyDef, value: Value, source: Source) {
        if let Some(s) = self.settings.get_mut(def.key) {
            s.value = Some(value);
            s.source = source;
        }
    }

    fn warn(&mut self, key: &str, layer: Source, message: String) {
        self.warnings.push(ConfigWarning {
            key: key.to_string(),
            layer,
            message,
        });
    }

    /// Values skipped while loading, one per bad value.
    pub fn warnings(&self) -> &[ConfigWarning] {
        &self.warnings
    }

    /// Every setting, by key.
    pub fn settings(&self) -> impl Iterator<Item = &Setting> {
        self.settings.values()
    }

    /// One setting.
    pub fn setting(&self, key: &str) -> Option<&Setting> {
        self.settings.get(key)
    }

    fn bool(&self, key: &str) -> bool {
        matches!(
            self.settings.get(key).and_then(|s| s.value.as_ref()),
            Some(Value::Bool(true))
        )
    }

    fn int(&self, key: &str) -> Option<u64> {
        match self.settings.get(key).and_then(|s| s.value.as_ref()) {
            Some(Value::Int(n)) => Some(*n),
            _ => None,
        }
    }

    fn millis(&self, key: &str) -> Option<Duration> {
        self.int(key).map(Duration::from_millis)
    }

    /// A key [`KEYS`] declares with an integer default: its value, else that default.
    /// The default is written once, in the table, never again at the accessor.
    fn declared_int(&self, key: &str) -> u64 {
        self.int(key).unwrap_or_else(|| declared_default(key))
    }

    /// [`Self::declared_int`] in milliseconds.
    fn declared_millis(&self, key: &str) -> Duration {
        Duration::from_millis(self.declared_int(key))
    }

    /// `lifecycle.autoCreate`.
    pub fn auto_create(&self) -> bool {
        self.bool("lifecycle.autoCreate")
    }

    /// `lifecycle.syncOnStart`.
    pub fn sync_on_start(&self) -> bool {
        self.bool("lifecycle.syncOnStart")
    }

    /// `lifecycle.livenessCacheMs`.
    pub fn liveness_cache(&self) -> Duration {
        self.millis("lifecycle.livenessCacheMs").unwrap_or_default()
    }

    /// `lifecycle.gateBudgetMs`.
    pub fn gate_budget(&self) -> Duration {
        self.declared_millis("lifecycle.gateBudgetMs")
    }

    /// `lifecycle.watchDebounceMs`.
    pub fn watch_debounce(&self) -> Duration {
        self.declared_millis("lifecycle.watchDebounceMs")
    }

    /// `lifecycle.executable`, if configured.
    pub fn executable(&self) -> Option<PathBuf> {
        match self
            .settings
            .get("lifecycle.executable")
            .and_then(|s| s.value.as_ref())
        {
            Some(Value::Path(p)) => Some(p.clone()),
            _ => None,
        }
    }

    /// `index.probeTimeoutMs`.
    pub fn probe_timeout(&self) -> Duration {
        self.declared_millis("index.probeTimeoutMs")
    }

    /// `index.maintenanceTimeoutMs`; `None` when no layer sets it, and then the
    /// supervisor's pre-existing default budget applies unchanged.
    pub fn maintenance_timeout(&self) -> Option<Duration> {
        self.millis("index.maintenanceTimeoutMs")
    }

    /// `index.maxFileBytes`.
    pub fn max_file_bytes(&self) -> u64 {
        self.declared_int("index.maxFileBytes")
    }

    /// `index.fileBudgetMs`: the time one file's work may take (per MiB).
    pub fn file_budget(&self) -> loci_index::FileBudget {
        loci_index::FileBudget::new(self.declared_millis("index.fileBudgetMs"))
    }

    /// Sets what an index run allows one file from this configuration: its size
    /// (`index.maxFileBytes`) and its time (`index.fileBudgetMs`).
    pub fn limit_files(&self, opts: &mut loci_index::IndexOptions) {
        opts.max_file_bytes = self.max_file_bytes();
        opts.file_budget = self.file_budget();
    }

    /// A path-valued key (`roots.managed`, `roots.base`, `lifecycle.executable`).
    pub fn path(&self, key: &str) -> Option<PathBuf> {
        match self.settings.get(key).and_then(|s| s.value.as_ref()) {
            Some(Value::Path(p)) => Some(p.clone()),
            _ => None,
        }
    }

    /// `api.enabled`.
    pub fn api_enabled(&self) -> bool {
        self.bool("api.enabled")
    }

    /// `api.port`.
    pub fn api_port(&self) -> u16 {
        // The key's range (1..=65535) is checked when it is read.
        u16::try_from(self.declared_int("api.port")).unwrap_or(u16::MAX)
    }

    /// `api.probeDeadlineMs`.
    pub fn api_probe_deadline(&self) -> Duration {
        self.declared_millis("api.probeDeadlineMs")
    }

    /// `api.requestTimeoutMs`.
    pub fn api_request_timeout(&self) -> Duration {
        self.declared_millis("api.requestTimeoutMs")
    }

    /// `web.signinTtlMs`.
    pub fn web_signin_ttl(&self) -> Duration {
        self.declared_millis("web.signinTtlMs")
    }

    /// `web.sessionTtlMs`.
    pub fn web_session_ttl(&self) -> Duration {
        self.declared_millis("web.sessionTtlMs")
    }

    /// `api.maxBodyBytes`.
    pub fn api_max_body_bytes(&self) -> u64 {
        self.declared_int("api.maxBodyBytes")
    }

    /// `api.headerReadTimeoutMs`.
    pub fn api_header_read_timeout(&self) -> Duration {
        self.declared_millis("api.headerReadTimeoutMs")
    }

    /// `api.maxHeaderBytes`.
    pub fn api_max_header_bytes(&self) -> u64 {
        self.declared_int("api.maxHeaderBytes")
    }

    /// `mcp.maxSessions`.
    pub fn mcp_max_sessions(&self) -> usize {
        usize::try_from(self.declared_int("mcp.maxSessions")).unwrap_or(usize::MAX)
    }

    /// `mcp.sessionIdleMs`.
    pub fn mcp_session_idle(&self) -> Duration {
        self.declared_millis("mcp.sessionIdleMs")
    }

    /// `clone.allowGit`.
    pub fn clone_allow_git(&self) -> bool {
        self.bool("clone.allowGit")
    }

    /// `clone.allowHttp`.
    pub fn clone_allow_http(&self) -> bool {
        self.bool("clone.allowHttp")
    }

    /// `clone.allowAddresses`, as written (parsed by the clone policy).
    pub fn clone_allow_addresses(&self) -> Option<&str> {
        self.text("clone.allowAddresses")
    }

    /// `limits.readDeadlineMs`.
    pub fn read_deadline(&self) -> Duration {
        self.declared_millis("limits.readDeadlineMs")
    }

    /// `limits.queryTimeoutMs`.
    pub fn query_timeout(&self) -> Duration {
        self.declared_millis("limits.queryTimeoutMs")
    }

    /// `memory.url`: the PostgreSQL server a team's memory lives on, when set.
    pub fn memory_url(&self) -> Option<&SecretUrl> {
        match self
            .settings
            .get("memory.url")
            .and_then(|s| s.value.as_ref())
        {
            Some(Value::Secret(u)) => Some(u),
            _ => None,
        }
    }

    /// A text-valued key (`llm.model`, `llm.args`).
    pub fn text(&self, key: &str) -> Option<&str> {
        match self.settings.get(key).and_then(|s| s.value.as_ref()) {
            Some(Value::Text(t)) => Some(t),
            _ => None,
        }
    }

    /// A boolean key (`llm.allowSpawn`...).
    pub fn flag(&self, key: &str) -> bool {
        self.bool(key)
    }

    /// An integer key (`llm.maxCalls`...), if set.
    pub fn integer(&self, key: &str) -> Option<u64> {
        self.int(key)
    }

    /// `limits.queryTimeoutMs` as declared, whatever any layer sets: the deadline of a
    /// statement whose caller names none, for a front end that loads no configuration.
    pub fn declared_query_timeout() -> Duration {
        Duration::from_millis(declared_default("limits.queryTimeoutMs"))
    }

    /// `limits.maxRows` as declared (see [`Config::declared_query_timeout`]).
    pub fn declared_max_rows() -> usize {
        usize::try_from(declared_default("limits.maxRows")).unwrap_or(usize::MAX)
    }

    /// `limits.maxRows`.
    pub fn max_rows(&self) -> usize {
        usize::try_from(self.declared_int("limits.maxRows")).unwrap_or(usize::MAX)
    }
}

/// The integer default [`KEYS`] declares for `key` (0 for a key declared without one,
/// which the tests rule out for every key read through [`Config::declared_int`]).
fn declared_default(key: &str) -> u64 {
    match KEYS.iter().find(|d| d.key == key).map(|d| &d.default) {
        Some(Some(Value::Int(n))) => *n,
        _ => 0,
    }
}

/// `$XDG_CONFIG_HOME/loci/config.toml`, else `$HOME/.config/loci/config.toml`.
fn user_config_path(env: EnvLookup<'_>) -> Option<PathBuf> {
    let var = |n: &str| env(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("XDG_CONFIG_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".config")))
        .map(|d| d.join("loci").join("config.toml"))
}

fn check_int(n: u64, min: u64, max: u64) -> Result<Value, String> {
    if (min..=max).contains(&n) {
        Ok(Value::Int(n))
    } else {
        Err(format!("{n} is out of range {min}..={max}"))
    }
}

fn parse_env(kind: Kind, text: &str) -> Result<Value, String> {
    match kind {
        Kind::Bool => match text.to_ascii_lowercase().as_str() {
            "1" | "true" | "yes" | "on" => Ok(Value::Bool(true)),
            "0" | "false" | "no" | "off" => Ok(Value::Bool(false)),
            _ => Err(format!("`{text}` is not a boolean (1/0, true/false)")),
        },
        Kind::Int { min, max } => match text.parse::<u64>() {
            Ok(n) => check_int(n, min, max),
            Err(_) => Err(format!("`{text}` is not a whole number")),
        },
        Kind::Path if text.is_empty() => Err("empty path".into()),
        Kind::Path => Ok(Value::Path(PathBuf::from(text))),
        Kind::Text if text.is_empty() => Err("empty text".into()),
        Kind::Text => Ok(Value::Text(text.to_string())),
        Kind::DatabaseUrl => database_url(text),
    }
}

/// A PostgreSQL URL, checked without ever quoting it (it may hold a password).
fn database_url(text: &str) -> Result<Value, String> {
    let rest = ["postgres://", "postgresql://"]
        .iter()
        .find_map(|scheme| text.strip_prefix(scheme));
    match rest {
        None => Err("not a PostgreSQL URL: it must start with postgres:// or postgresql://".into()),
        Some(rest) if rest.is_empty() || rest.chars().any(char::is_whitespace) => {
            Err("not a PostgreSQL URL: nothing after the scheme, or a space in it".into())
        }
        Some(_) => Ok(Value::Secret(SecretUrl::new(text))),
    }
}

fn parse_toml(kind: Kind, value: &toml::Value) -> Result<Value, String> {
    match (kind, value) {
        (Kind::Bool, toml::Value::Boolean(b)) => Ok(Value::Bool(*b)),
        (Kind::Int { min, max }, toml::Value::Integer(n)) => match u64::try_from(*n) {
            Ok(n) => check_int(n, min, max),
            Err(_) => Err(format!("{n} is out of range {min}..={max}")),
        },
        (Kind::Path, toml::Value::String(s)) if !s.is_empty() => Ok(Value::Path(PathBuf::from(s))),
        (Kind::Text, toml::Value::String(s)) if !s.is_empty() => Ok(Value::Text(s.clone())),
        (Kind::DatabaseUrl, toml::Value::String(s)) => database_url(s),
        (Kind::DatabaseUrl, other) => Err(format!(
            "expected a postgres:// URL, found {}",
            other.type_str()
        )),
        (kind, other) => Err(format!(
            "expected {}, found {} `{other}`",
            match kind {
                Kind::Bool => "a boolean",
                Kind::Int { .. } => "an integer",
                Kind::Path | Kind::Text | Kind::DatabaseUrl => "a non-empty string",
            },
            other.type_str()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    fn load(files: &[(&str, &str)], vars: &[(&str, &str)]) -> (Config, tempfile::TempDir) {
        let dir = tempfile::tempdir().unwrap();
        for (rel, text) in files {
            let p = dir.path().join(rel);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let mut map: HashMap<String, OsString> = vars
            .iter()
            .map(|(k, v)| (k.to_string(), OsString::from(v)))
            .collect();
        map.insert("XDG_CONFIG_HOME".into(), dir.path().join("xdg").into());
        let ws = dir.path().join("ws");
        let c = Config::load_with(Some(&ws), &|n| map.get(n).cloned());
        (c, dir)
    }

    #[test]
    fn defaults_apply_when_nothing_is_set() {
        let (c, _d) = load(&[], &[]);
        assert!(!c.auto_create());
        assert!(c.sync_on_start());
        assert_eq!(c.probe_timeout(), Duration::from_millis(30_000));
        assert_eq!(c.maintenance_timeout(), None);
        assert!(c.warnings().is_empty());
    }

    /// Every accessor that falls back to a declared default finds one (a key declared
    /// without a default would read as 0), and a setting that lost its value reads as
    /// the declared default, not as a second literal.
    #[test]
    fn accessors_read_the_defaults_the_table_declares() {
        let (c, _d) = load(&[], &[]);
        let mut cleared = c.clone();
        for s in cleared.settings.values_mut() {
            s.value = None;
        }
        for c in [&c, &cleared] {
            assert_eq!(c.gate_budget(), Duration::from_millis(50));
            assert_eq!(c.watch_debounce(), Duration::from_millis(300));
            assert_eq!(c.probe_timeout(), Duration::from_secs(30));
            assert_eq!(c.max_file_bytes(), loci_index::DEFAULT_MAX_FILE_BYTES);
            assert_eq!(
                c.file_budget(),
                loci_index::FileBudget::new(loci_index::DEFAULT_FILE_BUDGET)
            );
            assert_eq!(c.api_port(), 8000);
            assert_eq!(c.api_probe_deadline(), Duration::from_secs(2));
            assert_eq!(c.api_request_timeout(), Duration::from_secs(30));
            assert_eq!(c.api_max_body_bytes(), 1 << 20);
            assert_eq!(c.api_header_read_timeout(), Duration::from_secs(10));
            assert_eq!(c.api_max_header_bytes(), 65_536);
            assert_eq!(c.mcp_max_sessions(), 256);
            assert_eq!(c.mcp_session_idle(), Duration::from_secs(300));
            assert_eq!(c.read_deadline(), Duration::from_secs(10));
            assert_eq!(c.query_timeout(), Duration::from_secs(10));
            assert_eq!(c.max_rows(), 1000);
        }
        assert_eq!(Config::declared_query_timeout(), Duration::from_secs(10));
        assert_eq!(Config::declared_max_rows(), 1000);
    }

    #[test]
    fn each_layer_overrides_the_one_below() {
        let (c, _d) = load(
            &[
                (
                    "xdg/loci/config.toml",
                    "[lifecycle]\nautoCreate = true\nlivenessCacheMs = 1000\n[index]\nmaintenanceTimeoutMs = 5000\n",
                ),
                (
                    "ws/.loci/config.toml",
                    "[lifecycle]\nlivenessCacheMs = 2000\n[index]\nmaintenanceTimeoutMs = 7000\n",
                ),
            ],
            &[("LOCI_INDEX_MAINTENANCE_TIMEOUT_MS", "9000")],
        );
        assert!(c.auto_create());
        assert!(matches!(
            c.setting("lifecycle.autoCreate").unwrap().source,
            Source::User { .. }
        ));
        assert_eq!(c.liveness_cache(), Duration::from_millis(2000));
        assert!(matches!(
            c.setting("lifecycle.livenessCacheMs").unwrap().source,
            Source::Workspace { .. }
        ));
        assert_eq!(c.maintenance_timeout(), Some(Duration::from_millis(9000)));
        assert_eq!(
            c.setting("index.maintenanceTimeoutMs").unwrap().source,
            Source::Env {
                var: "LOCI_INDEX_MAINTENANCE_TIMEOUT_MS".into()
            }
        );
    }

    #[test]
    fn invalid_values_warn_once_and_fall_back_to_the_lower_layer() {
        let (c, _d) = load(
            &[
                ("xdg/loci/config.toml", "[index]\nprobeTimeoutMs = 4000\n"),
                (
                    "ws/.loci/config.toml",
                    "[index]\nprobeTimeoutMs = \"fast\"\n[lifecycle]\nautoCreate = 3\nbogus = 1\n",
                ),
            ],
            &[
                ("LOCI_INDEX_PROBE_TIMEOUT_MS", "0"),
                ("LOCI_LIFECYCLE_AUTO_CREATE", "maybe"),
            ],
        );
        assert_eq!(c.probe_timeout(), Duration::from_millis(4000));
        assert!(!c.auto_create());
        let keys: Vec<(&str, &str)> = c
            .warnings()
            .iter()
            .map(|w| {
                (
                    w.key.as_str(),
                    match w.layer {
                        Source::Workspace { .. } => "workspace",
                        Source::Env { .. } => "env",
                        _ => "other",
                    },
                )
            })
            .collect();
        assert_eq!(
            keys,
            [
                ("index.probeTimeoutMs", "workspace"),
                ("lifecycle.autoCreate", "workspace"),
                ("lifecycle.bogus", "workspace"),
                ("lifecycle.autoCreate", "env"),
                ("index.probeTimeoutMs", "env"),
            ]
        );
    }
}
