//! Environment policies seen from inside a real child.

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

use loci_supervisor::{AUTO_WATCH_VAR, EnvPolicy, SpawnSpec, Supervisor};

fn child_env(policy: EnvPolicy) -> BTreeMap<OsString, OsString> {
    let out = Supervisor::new()
        .run(SpawnSpec::new("/usr/bin/env").arg("-0").env(policy))
        .unwrap();
    assert!(out.success() && !out.stdout.truncated);
    out.stdout
        .head
        .split(|&b| b == 0)
        .filter(|kv| !kv.is_empty())
        .map(|kv| {
            let eq = kv.iter().position(|&b| b == b'=').unwrap();
            (
                OsString::from_vec(kv[..eq].to_vec()),
                OsString::from_vec(kv[eq + 1..].to_vec()),
            )
        })
        .collect()
}

#[test]
fn loci_child_sees_auto_watch_zero_and_every_other_variable_unchanged() {
    // This test binary never modifies its own environment.
    let mut expected: BTreeMap<OsString, OsString> = std::env::vars_os().collect();
    expected.insert(AUTO_WATCH_VAR.into(), "0".into());
    assert_eq!(child_env(EnvPolicy::loci_child()), expected);
}

#[test]
fn default_spec_policy_is_the_loci_child_pin() {
    let out = Supervisor::new()
        .run(SpawnSpec::new("sh").args(["-c", "printf %s \"$LOCI_AUTO_WATCH\""]))
        .unwrap();
    assert_eq!(out.stdout.head, b"0");
}

#[test]
fn allowlist_hides_everything_else() {
    let env = child_env(EnvPolicy::allowlist(["PATH", "LOCI_NO_SUCH_VAR"]).pin("EXTRA", "1"));
    let keys: Vec<_> = env.keys().cloned().collect();
    assert_eq!(keys, [OsString::from("EXTRA"), OsString::from("PATH")]);
    assert_eq!(
        env[&OsString::from("PATH")],
        std::env::var_os("PATH").unwrap()
    );
}

#[test]
fn clear_sets_exactly_the_given_pairs() {
    let env = child_env(EnvPolicy::clear_with([("A", "1"), ("B", "two words")]));
    let expected: BTreeMap<OsString, OsString> =
        [("A".into(), "1".into()), ("B".into(), "two words".into())].into();
    assert_eq!(env, expected);
}
