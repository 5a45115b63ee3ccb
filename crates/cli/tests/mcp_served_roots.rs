//! The adversarial table for `/mcp` on `loci serve`: a key holder names its session's
//! workspace by client roots (sent raw: outside the roots, symlinks both ways, `..`,
//! percent-encoding, other schemes and hosts, Windows spellings, the base itself, roots
//! that change mid-session), by the `Loci-Workspace` header or by a tool's `workspace`
//! argument. Only a workspace inside the server's roots is ever bound; every other name
//! is refused with a named error, binds nothing, creates no file outside the roots, and
//! no answer carries a host path. The client is the official MCP Python SDK.

use crate::mcp_support;
use crate::serve_support;

use crate::serve_support::mcp::*;
use mcp_support::python_sdk_ready;
use serde_json::{Value, json};
use serve_support::tree_under as tree;

/// One row: how the session names its workspace, and what each step must answer (a
/// folder name when bound, else the error kind).
fn case(name: &str, how: Value, want: &str) -> Value {
    let mut c = json!({"name": name, "steps": [{"want": want}]});
    for (k, v) in how.as_object().unwrap() {
        c[k] = v.clone();
    }
    c
}

fn file(path: &str) -> String {
    format!("file://{path}")
}

#[test]
fn a_session_binds_only_inside_the_roots_and_every_other_name_is_refused() {
    if !python_sdk_ready() {
        return;
    }
    let s = Served::start(&[]);
    std::fs::create_dir_all(s.base.path().join("team/my app")).unwrap();
    let b = std::fs::canonicalize(s.base.path()).unwrap();
    let o = std::fs::canonicalize(s.outside.path()).unwrap();
    let (b, o) = (b.to_str().unwrap(), o.to_str().unwrap());
    let o_name = s.outside.path().file_name().unwrap().to_str().unwrap();
    let uris = |u: &[String]| json!({ "uris": u });
    let header = |h: &str| json!({ "header": h });
    let mut cases = vec![
        // Bound: inside the base, by any of the three names.
        case(
            "root inside",
            uris(&[file(&format!("{b}/team/app"))]),
            "app",
        ),
        case(
            "root outside whose real path is inside",
            uris(&[file(&format!("{o}/link-in"))]),
            "app",
        ),
        case(
            "percent-encoded space inside",
            uris(&[file(&format!("{b}/team/my%20app"))]),
            "my app",
        ),
        case(
            "the first acceptable of several roots",
            uris(&[file(&format!("{o}/victim")), file(&format!("{b}/team/app"))]),
            "app",
        ),
        case("header locator", header(APP), "app"),
        case(
            "header locator wins over roots outside",
            json!({"header": APP, "uris": [file(&format!("{o}/victim"))]}),
            "app",
        ),
        // Refused client roots.
        case(
            "another index on the host",
            uris(&[file(&format!("{o}/victim"))]),
            "outside_roots",
        ),
        case(
            "the server's working directory",
            uris(&[file(&format!("{o}/plain"))]),
            "outside_roots",
        ),
        case(
            "a symlink inside leading out",
            uris(&[file(&format!("{b}/team/link-out"))]),
            "outside_roots",
        ),
        case(
            "dot-dot out of the base",
            uris(&[file(&format!("{b}/team/../../{o_name}/victim"))]),
            "outside_roots",
        ),
        case(
            "dot-dot that stays inside",
            uris(&[file(&format!("{b}/team/app/../app"))]),
            "outside_roots",
        ),
        case(
            "percent-encoded dot-dot",
            uris(&[file(&format!("{b}/team/%2e%2e/%2E%2E/{o_name}/victim"))]),
            "outside_roots",
        ),
        case(
            "percent-encoded slash",
            uris(&[file(&format!("{b}/team%2Fapp"))]),
            "outside_roots",
        ),
        case(
            "percent-encoded NUL",
            uris(&[file(&format!("{b}/team/app%00"))]),
            "outside_roots",
        ),
        case(
            "a bad percent escape",
            uris(&[file(&format!("{b}/team/ap%zz"))]),
            "outside_roots",
        ),
        case(
            "https scheme",
            uris(&[format!("https://example.com{b}/team/app")]),
            "outside_roots",
        ),
        case(
            "vscode-remote scheme",
            uris(&[format!("vscode-remote://ssh-remote+h{b}/team/app")]),
            "outside_roots",
        ),
        case(
            "a remote file host",
            uris(&[format!("file://evil.example{b}/team/app")]),
            "outside_roots",
        ),
        case(
            "windows drive",
            uris(&["file:///C:/Users/app".into()]),
            "outside_roots",
        ),
        case(
            "windows backslashes",
            uris(&["file://C:\\Users\\app".into()]),
            "outside_roots",
        ),
        case(
            "backslash inside the base",
            uris(&[file(&format!("{b}\\team\\app"))]),
            "outside_roots",
        ),
        case(
            "UNC path",
            uris(&["\\\\server\\share\\app".into()]),
            "outside_roots",
        ),
        case("the base itself", uris(&[file(b)]), "outside_roots"),
        case(
            "no such folder outside",
            uris(&[file(&format!("{o}/nowhere"))]),
            "outside_roots",
        ),
        case(
            "no such folder inside",
            uris(&[file(&format!("{b}/team/nowhere"))]),
            "not_found",
        ),
        case(
            "relative path",
            uris(&["file:team/app".into()]),
            "outside_roots",
        ),
        case("no roots at all", uris(&[]), "no_workspace"),
        case(
            "no roots capability and no header",
            json!({}),
            "no_workspace",
        ),
        // Refused header locators.
        case(
            "header segment with dot-dot",
            header(r#"{"kind":"mounted","segment":"../x"}"#),
            "invalid_segment",
        ),
        case(
            "header absolute segment",
            header(r#"{"kind":"mounted","segment":"/etc"}"#),
            "invalid_segment",
        ),
        case(
            "header segment through a symlink out",
            header(r#"{"kind":"mounted","segment":"team/link-out"}"#),
            "outside_roots",
        ),
        case(
            "header with a path riding along",
            header(r#"{"kind":"mounted","segment":"team/app","path":"/etc"}"#),
            "invalid_input",
        ),
        case("header not JSON", header("team/app"), "invalid_input"),
        case(
            "header unknown kind",
            header(r#"{"kind":"host","path":"/"}"#),
            "invalid_input",
        ),
        case(
            "header unavailable",
            header(r#"{"kind":"unavailable","reason":"x"}"#),
            "invalid_input",
        ),
        case(
            "header managed without a managed root",
            header(r#"{"kind":"managed","name":"app"}"#),
            "no_root",
        ),
        case(
            "header segment that does not exist",
            header(r#"{"kind":"mounted","segment":"team/nowhere"}"#),
            "not_found",
        ),
    ];
    // Tool arguments, and roots that change mid-session.
    cases.push(json!({"name": "argument locator", "steps": [
        {"arg": {"kind": "mounted", "segment": "team/app"}, "want": "app"}]}));
    cases.push(json!({"name": "argument through a symlink out", "steps": [
        {"arg": {"kind": "mounted", "segment": "team/link-out"}, "want": "outside_roots"}]}));
    cases.push(json!({"name": "argument as a path string", "steps": [
        {"arg": format!("{o}/victim"), "want": "invalid_input"}]}));
    cases.push(json!({"name": "roots change out and back", "uris": [file(&format!("{b}/team/app"))], "steps": [
        {"want": "app"},
        {"uris": [file(&format!("{o}/victim"))], "want": "outside_roots"},
        {"uris": [file(&format!("{b}/team/link-out"))], "want": "outside_roots"},
        {"uris": [file(&format!("{b}/team/app"))], "want": "app"}]}));

    let outside_before = tree(s.outside.path());
    let cases_file = s.scratch.path().join("cases.json");
    std::fs::write(&cases_file, serde_json::to_string(&cases).unwrap()).unwrap();
    let results = s.adversary(&["table", cases_file.to_str().unwrap()], &[]);

    let secrets = s.secrets();
    let mut failures = Vec::new();
    for (case, result) in cases.iter().zip(results.as_array().unwrap()) {
        let name = case["name"].as_str().unwrap();
        if let Some(e) = result.get("exception") {
            failures.push(format!("{name}: the client failed: {e}"));
            continue;
        }
        let text = result.to_string();
        for secret in &secrets {
            if text.contains(secret.as_str()) {
                failures.push(format!("{name}: an answer carries the host path {secret}"));
            }
        }
        for (step, got) in case["steps"]
            .as_array()
            .unwrap()
            .iter()
            .zip(result["steps"].as_array().unwrap())
        {
            let want = step["want"].as_str().unwrap();
            let status = &got["status"];
            if status["isError"] == true {
                // A refused session refuses every tool alike.
                for tool in ["status", "remember", "query"] {
                    let kind = &got[tool]["_meta"]["loci/error"]["kind"];
                    if kind != want {
                        failures.push(format!(
                            "{name}: {tool} answered {kind}, not {want}: {}",
                            got[tool]
                        ));
                    }
                }
            } else {
                let shown = &status["structuredContent"]["workspace"];
                if shown != want {
                    failures.push(format!("{name}: bound to {shown}, wanted {want}"));
                }
                // `app` is indexed; another folder inside is not (yet).
                let query_kind = &got["query"]["_meta"]["loci/error"]["kind"];
                let query_ok = if want == "app" {
                    got["query"]["isError"] == false
                } else {
                    query_kind == "no_index"
                };
                if !query_ok {
                    failures.push(format!(
                        "{name}: the bound session's query: {}",
                        got["query"]
                    ));
                }
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    // Nothing was made or touched outside the roots (no `.loci`, no memory.db).
    assert_eq!(tree(s.outside.path()), outside_before);
    assert!(!s.outside.path().join("plain/.loci").exists());
}

/// A file of the index replaced by a symlink out of the workspace after indexing: no
/// tool (over `/mcp` or stdio) and no HTTP route reads through it.
#[test]
fn no_read_follows_a_symlink_out_of_the_workspace() {
    // No background sync: the index keeps the file the symlink replaced.
    let s = Served::start(&[("LOCI_LIFECYCLE_SYNC_ON_START", "0")]);
    let secret = s.outside.path().join("secret.rs");
    std::fs::write(
        &secret,
        "pub fn parse_config() -> u32 { 0 } // victim_secret_line\n",
    )
    .unwrap();
    let lib = s.base.path().join("team/app/src/lib.rs");
    std::fs::remove_file(&lib).unwrap();
    std::os::unix::fs::symlink(&secret, &lib).unwrap();

    let session = s.open_session(&[("loci-workspace", APP)]);
    let symbol = s.call_tool(
        &session,
        "symbol",
        json!({"symbol": "parse_config", "body_lines": 5}),
    );
    let search = s.call_tool(&session, "search", json!({"pattern": "parse_config"}));
    let id = s.workspace_id("app");
    let route = agent()
        .post(&format!("http://{}/api/v1/workspaces/{id}/search", s.addr))
        .header("authorization", &format!("Bearer {KEY}"))
        .send_json(json!({"pattern": "parse_config"}))
        .unwrap()
        .into_body()
        .read_to_string()
        .unwrap();
    let app = s.base.path().join("team/app");
    let mut stdio = mcp_support::Stdio_::start({
        let mut cmd = mcp_support::loci(s.home.path());
        cmd.arg("mcp")
            .arg("--workspace")
            .arg(&app)
            .env("LOCI_LIFECYCLE_SYNC_ON_START", "0");
        cmd
    });
    stdio.initialize();
    let stdio_symbol = stdio.call("symbol", json!({"symbol": "parse_config", "body_lines": 5}));
    let stdio_search = stdio.call("search", json!({"pattern": "parse_config"}));
    for (what, answer) in [
        ("/mcp symbol", symbol.to_string()),
        ("/mcp search", search.to_string()),
        ("HTTP search", route),
        ("stdio symbol", stdio_symbol.to_string()),
        ("stdio search", stdio_search.to_string()),
    ] {
        assert!(
            !answer.contains("victim_secret_line"),
            "{what} read through the symlink: {answer}"
        );
    }
    // The definition is still answered from the index, only without the outside text.
    assert_eq!(symbol["isError"], false, "{symbol}");
    assert_eq!(stdio_symbol["isError"], false, "{stdio_symbol}");
}
