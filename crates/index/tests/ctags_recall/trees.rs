//! Where the corpora are, and how they are sampled and split.
//!
//! Every file gets a stable hash of its path relative to the tree it came from (FNV-1a
//! 64 over the bytes of `prefix/relative/path`, then MurmurHash3's 64-bit finalizer so
//! that every bit depends on every byte): the same file is in the same half and the same
//! sample on every run and machine, whatever the tree's absolute location or the order a
//! directory lists in. Bit 0 picks the half; the bits above it pick the sample.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// One half of a corpus.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Half {
    /// The files whose misses may be read to decide what to fix.
    Tune,
    /// The files no fix was shaped by: what the assertions apply to.
    HeldOut,
}

/// One file of a corpus.
pub struct Source {
    /// Where it is on this machine.
    pub path: PathBuf,
    /// Which half its relative path's hash puts it in.
    pub half: Half,
    /// The hash of its relative path (see the module doc).
    hash: u64,
}

/// The stable hash of a file's relative path: FNV-1a 64, then MurmurHash3's fmix64.
pub fn path_hash(relative: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in relative.bytes() {
        h ^= u64::from(byte);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^ (h >> 33)
}

impl Source {
    /// The file at `path`, hashed by `relative` (its path inside its tree, `/`-separated).
    pub fn new(path: PathBuf, relative: &str) -> Source {
        let hash = path_hash(relative);
        let half = if hash & 1 == 0 {
            Half::Tune
        } else {
            Half::HeldOut
        };
        Source { path, half, hash }
    }
}

/// Every file under `root` (symlinks not followed, directories named in `skip_dirs` not
/// entered) whose name ends with one of `suffixes`, hashed by `prefix` + its path
/// relative to `root`.
pub fn collect(root: &Path, prefix: &str, suffixes: &[&str], skip_dirs: &[&str]) -> Vec<Source> {
    let mut paths = Vec::new();
    walk(root, suffixes, skip_dirs, &mut paths);
    paths
        .into_iter()
        .map(|path| {
            let relative = path
                .strip_prefix(root)
                .unwrap_or(&path)
                .to_string_lossy()
                .into_owned();
            Source::new(path, &format!("{prefix}{relative}"))
        })
        .collect()
}

fn walk(dir: &Path, suffixes: &[&str], skip_dirs: &[&str], out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut paths: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    paths.sort();
    for path in paths {
        let Ok(meta) = std::fs::symlink_metadata(&path) else {
            continue;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if meta.is_dir() {
            if !skip_dirs.contains(&name.as_str()) {
                walk(&path, suffixes, skip_dirs, out);
            }
        } else if meta.is_file() && suffixes.iter().any(|s| name.ends_with(s)) {
            out.push(path);
        }
    }
}

/// The files whose hash falls in one of `default_stride` buckets (`LOCI_RECALL_STRIDE`
/// overrides the stride; 1 keeps every file), in path order.
pub fn sample(files: Vec<Source>, default_stride: u64) -> Vec<Source> {
    let stride = std::env::var("LOCI_RECALL_STRIDE")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .filter(|s| *s > 0)
        .unwrap_or(default_stride);
    let mut kept: Vec<Source> = files
        .into_iter()
        .filter(|f| (f.hash >> 1) % stride == 0)
        .collect();
    kept.sort_by(|a, b| a.path.cmp(&b.path));
    kept
}

/// The first existing directory of `candidates`, each a path whose components may end
/// in one `*` (`/usr/share/go-*/src`: the last match in name order), or `None`.
pub fn first_dir(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().find_map(|pattern| {
        let mut found = vec![PathBuf::from("/")];
        for part in Path::new(pattern).components().skip(1) {
            let part = part.as_os_str().to_string_lossy();
            let mut next = Vec::new();
            for dir in &found {
                match part.strip_suffix('*') {
                    Some(prefix) => {
                        let mut hits: Vec<PathBuf> = std::fs::read_dir(dir)
                            .into_iter()
                            .flatten()
                            .flatten()
                            .filter(|e| e.file_name().to_string_lossy().starts_with(prefix))
                            .map(|e| e.path())
                            .collect();
                        hits.sort();
                        next.extend(hits);
                    }
                    None => next.push(dir.join(&*part)),
                }
            }
            found = next;
        }
        found.into_iter().rfind(|p| p.is_dir())
    })
}

/// A corpus's tree, or what to do without it: under CI (`CI` set, where `.ci/run`
/// installs every tree) its absence is a broken setup and fails the test; elsewhere the
/// test notes it and compares nothing.
pub fn required(label: &str, tree: Option<PathBuf>, install: &str) -> Option<PathBuf> {
    if tree.is_none() {
        let why = format!("{label}: no tree to compare on ({install})");
        assert!(std::env::var_os("CI").is_none(), "{why}");
        eprintln!("note: {why}; nothing compared");
    }
    tree
}

/// A `sysconfig` path of this machine's `python3` (`stdlib`, `include`).
pub fn python_path(key: &str) -> PathBuf {
    let out = Command::new("python3")
        .args([
            "-c",
            &format!("import sysconfig; print(sysconfig.get_paths()[{key:?}])"),
        ])
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 to find its {key} path: {e}"));
    assert!(
        out.status.success(),
        "python3 could not tell its {key} path"
    );
    PathBuf::from(String::from_utf8_lossy(&out.stdout).trim())
}

/// The npm trees: `/usr/lib/node_modules` and the packages `.ci/run` installs under
/// `$LOCI_NODE_TOOLS` (by default `~/.cache/loci-ci/node`), those that exist.
pub fn node_trees() -> Vec<PathBuf> {
    let tools = std::env::var_os("LOCI_NODE_TOOLS")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/loci-ci/node")));
    [
        Some(PathBuf::from("/usr/lib/node_modules")),
        tools.map(|t| t.join("node_modules")),
    ]
    .into_iter()
    .flatten()
    .filter(|p| p.is_dir())
    .collect()
}

/// The unpacked registry package `name-<version>` that `.ci/run` puts under
/// `$LOCI_SOURCE_TREES` (by default `~/.cache/loci-ci/sources`): the highest version in
/// name order, or `None`.
pub fn source_tree(name: &str) -> Option<PathBuf> {
    let root = std::env::var_os("LOCI_SOURCE_TREES")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/loci-ci/sources"))
        })?;
    first_dir(&[&format!("{}/{name}-*", root.to_string_lossy())])
}

/// A sample of the `.java` files of a JDK's `src.zip` (`LOCI_RECALL_JDK_ZIP`, else the
/// first `/usr/lib/jvm/*/lib/src.zip` in name order), unpacked into `into` by
/// `python3`'s `zipfile`; hashed by their path inside the archive. `None` when there is
/// no archive.
pub fn jdk_sample(into: &Path, stride: u64) -> Option<Vec<Source>> {
    let zip = match std::env::var_os("LOCI_RECALL_JDK_ZIP") {
        Some(zip) => PathBuf::from(zip),
        None => {
            let mut zips: Vec<PathBuf> = std::fs::read_dir("/usr/lib/jvm")
                .ok()?
                .flatten()
                .map(|e| e.path().join("lib/src.zip"))
                .filter(|z| z.is_file())
                .collect();
            zips.sort();
            zips.into_iter().next()?
        }
    };
    let script = "import sys, zipfile\n\
                  z = zipfile.ZipFile(sys.argv[1])\n\
                  if len(sys.argv) == 2:\n    print('\\n'.join(z.namelist()))\n\
                  else:\n    z.extractall(sys.argv[2], sys.stdin.read().split())\n";
    let listing = Command::new("python3")
        .args(["-c", script])
        .arg(&zip)
        .output()
        .unwrap_or_else(|e| panic!("cannot run python3 to list {}: {e}", zip.display()));
    assert!(
        listing.status.success(),
        "python3 could not list {}",
        zip.display()
    );
    let names: Vec<String> = String::from_utf8_lossy(&listing.stdout)
        .lines()
        .filter(|n| n.ends_with(".java") && !n.ends_with("module-info.java"))
        .map(str::to_string)
        .collect();
    let sampled = sample(
        names.iter().map(|n| Source::new(into.join(n), n)).collect(),
        stride,
    );
    let wanted: Vec<String> = sampled
        .iter()
        .map(|s| {
            s.path
                .strip_prefix(into)
                .expect("under the temp dir")
                .to_string_lossy()
                .into_owned()
        })
        .collect();
    let mut child = Command::new("python3")
        .args(["-c", script])
        .arg(&zip)
        .arg(into)
        .stdin(Stdio::piped())
        .spawn()
        .expect("python3 to unpack the JDK sample");
    std::io::Write::write_all(
        &mut child.stdin.take().expect("piped stdin"),
        wanted.join("\n").as_bytes(),
    )
    .expect("write the names to unpack");
    assert!(
        child.wait().expect("python3 unpacking").success(),
        "python3 could not unpack {}",
        zip.display()
    );
    Some(sampled)
}

/// Pinned: a change to the hash would silently move files between the halves (the
/// values are those of an independent Python implementation).
#[test]
fn path_hash_is_fixed_across_runs_and_machines() {
    assert_eq!(path_hash(""), 0xefd0_1f60_ba99_2926);
    assert_eq!(path_hash("lib/npm.js"), 0xde2e_4b73_e21d_3b5d);
    assert_eq!(
        path_hash("java.base/java/util/HashMap.java"),
        0xe6c7_f867_00f1_cf41
    );
    assert_eq!(
        Source::new(PathBuf::from("/x"), "lib/npm.js").half,
        Half::HeldOut
    );
}

/// Every shell script directly in `dir` (a regular file whose first line is a `sh` or
/// `bash` `#!`), hashed by `prefix` + its name.
pub fn shell_scripts(dir: &Path, prefix: &str) -> Vec<Source> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| std::fs::symlink_metadata(p).is_ok_and(|m| m.is_file()))
        .filter(|p| {
            let head = std::fs::read(p).unwrap_or_default();
            let first = head.split(|b| *b == b'\n').next().unwrap_or_default();
            let first = String::from_utf8_lossy(first);
            first.starts_with("#!")
                && first
                    .split_whitespace()
                    .next()
                    .is_some_and(|i| i.ends_with("/sh") || i.ends_with("/bash"))
        })
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|p| {
            let name = p
                .file_name()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned();
            Source::new(p, &format!("{prefix}{name}"))
        })
        .collect()
}
