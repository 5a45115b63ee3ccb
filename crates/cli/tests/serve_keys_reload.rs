//! The keys file read again while `loci serve` runs (docs/http.md, "Keys scoped to
//! namespaces"): against the real server over loopback, a key added to the file works
//! on the next request, a rescoped key moves to its new namespaces, a revoked one is
//! refused over HTTP and `/mcp`, and a file broken while editing drops its keys (the
//! server's own key still works) until it is mended.

use serde_json::{Value, json};

use crate::serve_support::agent;
use crate::serve_support::mcp::{INIT, KEY, Served};

const ALPHA: &str = "alpha-key-0123456789abcdef";
const BETA: &str = "beta-key-0123456789abcdef";

fn entry(key: &str, namespace: &str) -> String {
    format!("[[keys]]\nkey = \"{key}\"\nnamespaces = [\"{namespace}\"]\n")
}

/// The status of remembering a memory named `name` in `namespace` with `key`.
fn remember(s: &Served, key: &str, id: i64, namespace: &str, name: &str) -> (u16, Value) {
    let resp = agent()
        .post(&format!(
            "http://{}/api/v1/workspaces/{id}/memory/remember",
            s.addr
        ))
        .header("Authorization", &format!("Bearer {key}"))
        .send_json(json!({"name": name, "body": "a note", "namespace": namespace}))
        .unwrap();
    let status = resp.status().as_u16();
    let text = resp.into_body().read_to_string().unwrap();
    (status, serde_json::from_str(&text).unwrap_or(Value::Null))
}

#[test]
fn keys_added_rescoped_revoked_or_broken_in_the_file_count_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api-keys.toml");
    std::fs::write(&path, entry(ALPHA, "team-a")).unwrap();
    let s = Served::start(&[("LOCI_API_KEYS_FILE", path.to_str().unwrap())]);
    let id = s.workspace_id("app");
    assert_eq!(remember(&s, ALPHA, id, "team-a", "one").0, 200);
    assert_eq!(remember(&s, BETA, id, "team-b", "one").0, 401);

    // Added and rescoped: no restart.
    std::fs::write(&path, entry(ALPHA, "team-c") + &entry(BETA, "team-b")).unwrap();
    assert_eq!(remember(&s, BETA, id, "team-b", "two").0, 200);
    let (status, v) = remember(&s, ALPHA, id, "team-a", "two");
    assert_eq!(status, 403, "{v}");
    assert_eq!(v["error"]["kind"], "forbidden_namespace", "{v}");
    assert_eq!(remember(&s, ALPHA, id, "team-c", "two").0, 200);

    // Revoked: refused by the memory routes and by /mcp alike, in a session it opened.
    let open = s.post_as(ALPHA, None, &[], INIT);
    assert_eq!(open.status, 200, "{}", open.body);
    let session = open.session.expect("a session id");
    std::fs::write(&path, entry(BETA, "team-b")).unwrap();
    assert_eq!(remember(&s, ALPHA, id, "team-c", "three").0, 401);
    assert_eq!(s.post_as(ALPHA, None, &[], INIT).status, 401);
    let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list"}"#;
    let listed = s.post_as(ALPHA, Some(&session), &[], list);
    assert_eq!(listed.status, 401, "{}", listed.body);
    assert_eq!(remember(&s, BETA, id, "team-b", "three").0, 200);

    // Broken while editing: the file's keys stop, the server's own goes on.
    std::fs::write(&path, entry(BETA, "team-b") + "[[keys]]\nkey = \"short\"\n").unwrap();
    assert_eq!(remember(&s, BETA, id, "team-b", "four").0, 401);
    assert_eq!(remember(&s, KEY, id, "team-b", "four").0, 200);
    std::fs::write(&path, entry(BETA, "team-b")).unwrap();
    assert_eq!(remember(&s, BETA, id, "team-b", "five").0, 200);
}
