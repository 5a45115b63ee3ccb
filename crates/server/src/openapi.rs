//! The OpenAPI 3.1 document, generated: every type's schema comes from its Rust type
//! through schemars (`loci_api::schema::schemas()` and this crate's own answers), with
//! each root's `$defs` hoisted into `components/schemas` and every `$ref` pointed there.

use std::collections::BTreeMap;

use schemars::SchemaGenerator;
use schemars::generate::SchemaSettings;
use serde_json::{Map, Value, json};

use crate::answers::{Capabilities, Health, STATS_PATH_FIELDS, WorkspaceSummaries};
use crate::handler::PREFIX;
pub use crate::openapi_operation::Operation;
use crate::openapi_operation::op;

/// Every route the server answers.
pub const OPERATIONS: &[Operation] = &[
    Operation {
        auth: false,
        ..op(
            "get",
            "/health",
            "health",
            "Liveness and version (no key needed).",
            None,
            "Health",
        )
    },
    op(
        "get",
        "/api/v1/capabilities",
        "capabilities",
        "What this server implements.",
        None,
        "Capabilities",
    ),
    op(
        "get",
        "/api/v1/openapi.json",
        "openapi",
        "This document.",
        None,
        "OpenApiDocument",
    ),
    op(
        "get",
        "/api/v1/workspaces",
        "workspaces",
        "The registered workspaces, by id (never by absolute path).",
        None,
        "WorkspaceSummaries",
    ),
    op(
        "post",
        "/api/v1/workspaces",
        "create_workspace",
        "Creates (or confirms) a workspace under a configured root, by locator (capability workspace.create).",
        Some("CreateWorkspaceRequest"),
        "CreatedWorkspace",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/find",
        "find",
        "Definitions by name or glob.",
        Some("FindRequest"),
        "SymbolsPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/def",
        "def",
        "Where a symbol is defined.",
        Some("SymbolRequest"),
        "SymbolsPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/refs",
        "refs",
        "Every use of a symbol, and the references by its name that linked to none.",
        Some("RefsRequest"),
        "RefsPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/callers",
        "callers",
        "Who calls a symbol.",
        Some("TraversalRequest"),
        "TraversalPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/callees",
        "callees",
        "What a symbol calls.",
        Some("TraversalRequest"),
        "TraversalPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/impact",
        "impact",
        "What depends on a symbol or a file.",
        Some("TraversalRequest"),
        "TraversalPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/changes",
        "changes",
        "What a git diff changes: files, touched definitions, their callers, impact, tests and memories.",
        Some("ChangesRequest"),
        "ChangesAnswer",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/outline",
        "outline",
        "The definitions of one file, nested.",
        Some("OutlineRequest"),
        "OutlinePage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/search",
        "search",
        "Code text search.",
        Some("SearchRequest"),
        "SearchPage",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/search/meaning",
        "search_meaning",
        "Code units (functions, types, modules) a sentence describes, best first: vectors, full text and callers fused. Needs `loci embed` (else 412 no_vectors) and, but for signals text, the local model (412 model_missing).",
        Some("MeaningRequest"),
        "MeaningPage",
    ),
    op(
        "get",
        "/api/v1/workspaces/{id}/stats",
        "stats",
        "Counts of the index (no absolute paths).",
        None,
        "StatsAnswer",
    ),
    op(
        "get",
        "/api/v1/workspaces/{id}",
        "get_workspace",
        "One workspace: lifecycle state, reason, notices, freshness, last run (no absolute paths).",
        None,
        "WorkspaceDetail",
    ),
    Operation {
        status: 202,
        ..op(
            "post",
            "/api/v1/workspaces/{id}/index",
            "index_workspace",
            "Starts (or joins) a background index run; answers its id and progress URL.",
            None,
            "RunStarted",
        )
    },
    Operation {
        status: 202,
        ..op(
            "post",
            "/api/v1/workspaces/{id}/sync",
            "sync_workspace",
            "Starts (or joins) a background sync run; answers its id and progress URL.",
            None,
            "RunStarted",
        )
    },
    Operation {
        status: 202,
        ..op(
            "post",
            "/api/v1/workspaces/{id}/rebuild",
            "rebuild_workspace",
            "Deletes the index and rebuilds it in the background, only with {\"consent\": true} (else 409 consent_required, nothing touched).",
            Some("RebuildRequest"),
            "RunStarted",
        )
    },
    op(
        "get",
        "/api/v1/workspaces/{id}/runs/{run}",
        "get_run",
        "A background run: state, progress counts, the error kind on failure.",
        None,
        "RunView",
    ),
    op(
        "post",
        "/api/v1/fs",
        "fs",
        "The folder picker: directories under a root, or a folder in it, by segment (never a path).",
        Some("FsRequest"),
        "FsListing",
    ),
    op(
        "post",
        "/api/v1/workspaces/{id}/query",
        "query",
        "One read-only SQL statement, in the workspace's killable worker process.",
        Some("SqlRequest"),
        "SqlAnswer",
    ),
    op(
        "get",
        "/api/v1/workspaces/{id}/query",
        "queries",
        "The workspace's running and queued queries, by id.",
        None,
        "QueriesInFlight",
    ),
    op(
        "delete",
        "/api/v1/workspaces/{id}/query/{qid}",
        "cancel_query",
        "Cancels a query: removed when queued, killed with its worker when running.",
        None,
        "CancelAnswer",
    ),
    op(
        "get",
        "/api/v1/repositories",
        "repositories",
        "Loopback peers only: every registered workspace WITH its absolute root and index path (the one exception to no absolute paths; others get 403 forbidden_peer).",
        None,
        "Repositories",
    ),
    op(
        "post",
        crate::web::MINT_PATH,
        "web_signin",
        "A one-time URL that signs a browser in to the web view (good once, for web.signinTtlMs); the key itself never reaches the browser.",
        None,
        "WebSignIn",
    ),
    Operation {
        query: Some((
            "path",
            "The workspace root, absolute, matched exactly.",
            "^/",
        )),
        ..op(
            "get",
            "/api/v1/repositories/lookup",
            "repository_lookup",
            "Loopback peers only: whether an absolute path is a registered workspace root (indexed, not_indexed or busy; a registry failure is an error).",
            None,
            "RepositoryLookup",
        )
    },
];

/// Every documented route: [`OPERATIONS`], the memory's and the user store's.
pub fn operations() -> impl Iterator<Item = &'static Operation> {
    OPERATIONS
        .iter()
        .chain(crate::openapi_memory::MEMORY_OPERATIONS)
        .chain(crate::openapi_memory_user::user_operations())
}

/// Every path parameter a route may take: its name, description and schema.
pub const PATH_PARAMETERS: &[(&str, &str, &str)] = &[
    (
        "id",
        "The workspace's registry id (GET /api/v1/workspaces).",
        r#"{"type": "integer", "format": "int64"}"#,
    ),
    (
        "qid",
        "The query's id (the request's `id`, or the one its answer carries).",
        r#"{"type": "string", "pattern": "^[A-Za-z0-9._-]{1,128}$"}"#,
    ),
    (
        "run",
        "A run id, as POST .../index, /sync or /rebuild answered it.",
        r#"{"type": "integer", "format": "int64", "minimum": 1}"#,
    ),
];

/// The whole document.
pub fn document() -> Value {
    let mut components = Map::new();
    let mut roots: BTreeMap<String, Value> = loci_api::schema::schemas()
        .into_iter()
        .map(|(name, schema)| (name.to_string(), schema.to_value()))
        .collect();
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut own = |name: &str, schema: schemars::Schema| {
        roots.insert(name.to_string(), schema.to_value());
    };
    own("Health", generator.root_schema_for::<Health>());
    own("Capabilities", generator.root_schema_for::<Capabilities>());
    own(
        "WorkspaceSummaries",
        generator.root_schema_for::<WorkspaceSummaries>(),
    );
    own(
        "CreateWorkspaceRequest",
        generator.root_schema_for::<crate::create::CreateWorkspaceRequest>(),
    );
    own(
        "CreatedWorkspace",
        generator.root_schema_for::<crate::create::CreatedWorkspace>(),
    );
    own(
        "WorkspaceDetail",
        generator.root_schema_for::<loci_api::remote::WorkspaceDetail>(),
    );
    own(
        "RunStarted",
        generator.root_schema_for::<loci_api::runs::RunStarted>(),
    );
    own(
        "RunView",
        generator.root_schema_for::<loci_api::runs::RunView>(),
    );
    own(
        "RebuildRequest",
        generator.root_schema_for::<crate::workspace_routes::RebuildRequest>(),
    );
    own(
        "WebSignIn",
        generator.root_schema_for::<crate::web::WebSignIn>(),
    );
    own(
        "FsRequest",
        generator.root_schema_for::<loci_api::picker::FsRequest>(),
    );
    own(
        "FsListing",
        generator.root_schema_for::<loci_api::picker::FsListing>(),
    );
    own(
        "Repositories",
        generator.root_schema_for::<loci_api::repositories::Repositories>(),
    );
    own(
        "RepositoryLookup",
        generator.root_schema_for::<loci_api::repositories::RepositoryLookup>(),
    );
    crate::openapi_memory::schemas(&mut generator, &mut own);
    if let Some(stats) = roots.get_mut("StatsAnswer") {
        omit_properties(stats, STATS_PATH_FIELDS);
    }
    if let Some(stats) = roots.get_mut("MemoryStats") {
        omit_properties(stats, crate::memory_routes::MEMORY_STATS_PATH_FIELDS);
    }
    roots.insert(
        "OpenApiDocument".into(),
        json!({"type": "object", "description": "An OpenAPI 3.1 document.", "required": ["openapi", "paths"]}),
    );
    for (name, mut schema) in roots {
        hoist(&mut schema, &mut components);
        components.insert(name, schema);
    }
    for schema in components.values_mut() {
        point_refs(schema);
    }

    let mut paths = json!({});
    for o in operations() {
        paths[o.path][o.method] = operation(o);
    }
    // The ids the workspace list answers are what every workspace route takes.
    let links: Map<String, Value> = operations()
        .filter(|o| path_parameters(o.path) == ["id"])
        .map(|o| {
            (
                o.id.to_string(),
                json!({"operationId": o.id, "parameters": {"id": "$response.body#/workspaces/0/id"}}),
            )
        })
        .collect();
    paths["/api/v1/workspaces"]["get"]["responses"]["200"]["links"] = Value::Object(links);
    // A meaning search refuses with 412 before `loci embed` ran or without a model: said
    // on its own, not only under `default`.
    paths["/api/v1/workspaces/{id}/search/meaning"]["post"]["responses"]["412"] = json!({
        "description": "no_vectors (the workspace's code units are not embedded: run `loci embed`) or model_missing (no local model; `signals: text` needs none): the error envelope.",
        "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorEnvelope"}}},
    });
    // A query's answer names the id its cancel takes.
    paths["/api/v1/workspaces/{id}/query"]["post"]["responses"]["200"]["links"] = json!({
        "cancel_query": {"operationId": "cancel_query", "parameters": {"id": "$request.path.id", "qid": "$response.body#/id"}},
    });
    debug_assert!(operations().all(|o| o.path == "/health" || o.path.starts_with(PREFIX)));
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "loci",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "loci's HTTP API: the code graph of each registered workspace. Every route but /health needs the API key (Authorization: Bearer KEY, or X-API-Key: KEY). Errors are the error envelope, with the status of their kind in loci's error table.",
        },
        "jsonSchemaDialect": "https://json-schema.org/draft/2020-12/schema",
        "servers": [{"url": "/"}],
        "security": [{"bearer": []}, {"apiKey": []}],
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {
                "bearer": {"type": "http", "scheme": "bearer", "description": "The API key as a bearer token."},
                "apiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key", "description": "The API key."},
            },
        },
    })
}

fn operation(o: &Operation) -> Value {
    let schema_ref = |name: &str| json!({"$ref": format!("#/components/schemas/{name}")});
    let error = json!({
        "description": "An error: its kind's status in loci's error table, the error envelope as the body.",
        "content": {"application/json": {"schema": schema_ref("ErrorEnvelope")}},
    });
    let mut responses = Map::new();
    responses.insert(
        o.status.to_string(),
        json!({"description": "The answer.", "content": {"application/json": {"schema": schema_ref(o.response)}}}),
    );
    responses.insert("default".into(), error);
    let mut v = json!({
        "operationId": o.id,
        "summary": o.summary,
        "responses": responses,
    });
    if !o.auth {
        v["security"] = json!([]);
    }
    let parameters: Vec<Value> = path_parameters(o.path)
        .into_iter()
        .map(|name| {
            let (_, description, schema) = PATH_PARAMETERS
                .iter()
                .find(|(n, _, _)| *n == name)
                .unwrap_or_else(|| panic!("{}: path parameter {{{name}}} is not in PATH_PARAMETERS", o.path));
            let schema: Value = serde_json::from_str(schema).unwrap_or_default();
            json!({"name": name, "in": "path", "required": true, "description": description, "schema": schema})
        })
        .collect();
    if !parameters.is_empty() {
        v["parameters"] = Value::Array(parameters);
    }
    if let Some((name, description, pattern)) = o.query {
        v["parameters"] = json!([{
            "name": name,
            "in": "query",
            "required": true,
            "description": description,
            "schema": {"type": "string", "pattern": pattern},
        }]);
    }
    if let Some(req) = o.request {
        v["requestBody"] = json!({
            "required": true,
            "content": {"application/json": {"schema": schema_ref(req)}},
        });
    }
    v
}

/// The `{name}`s of a path, in order.
pub fn path_parameters(path: &str) -> Vec<&str> {
    path.split('/')
        .filter_map(|seg| seg.strip_prefix('{')?.strip_suffix('}'))
        .collect()
}

/// Moves a root schema's `$defs` into the components and drops `$schema`.
fn hoist(schema: &mut Value, components: &mut Map<String, Value>) {
    let Some(map) = schema.as_object_mut() else {
        return;
    };
    map.remove("$schema");
    if let Some(Value::Object(defs)) = map.remove("$defs") {
        for (name, mut def) in defs {
            hoist(&mut def, components);
            components.entry(name).or_insert(def);
        }
    }
}

/// `#/$defs/X` → `#/components/schemas/X`, everywhere.
fn point_refs(v: &mut Value) {
    match v {
        Value::Object(map) => {
            for (k, child) in map.iter_mut() {
                if k == "$ref"
                    && let Value::String(r) = child
                    && let Some(name) = r.strip_prefix("#/$defs/")
                {
                    *r = format!("#/components/schemas/{name}");
                } else {
                    point_refs(child);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(point_refs),
        _ => {}
    }
}

/// Removes properties (and their `required` entries) from an object schema.
fn omit_properties(schema: &mut Value, fields: &[&str]) {
    if let Some(props) = schema.get_mut("properties").and_then(Value::as_object_mut) {
        for f in fields {
            props.remove(*f);
        }
    }
    if let Some(required) = schema.get_mut("required").and_then(Value::as_array_mut) {
        required.retain(|r| !fields.iter().any(|f| r == f));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refs(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::Object(map) => {
                for (k, child) in map {
                    if k == "$ref" {
                        out.push(child.as_str().unwrap_or_default().to_string());
                    }
                    refs(child, out);
                }
            }
            Value::Array(items) => items.iter().for_each(|i| refs(i, out)),
            _ => {}
        }
    }

    #[test]
    fn every_ref_of_the_document_names_a_component_and_no_defs_remain() {
        let doc = document();
        let text = doc.to_string();
        assert!(!text.contains("$defs"), "{text}");
        assert!(!text.contains("\"$schema\""));
        let components = doc["components"]["schemas"].as_object().unwrap();
        let mut all = Vec::new();
        refs(&doc, &mut all);
        assert!(all.len() > 20);
        for r in all {
            let name = r
                .strip_prefix("#/components/schemas/")
                .unwrap_or_else(|| panic!("{r} does not point into the components"));
            assert!(components.contains_key(name), "{r} names no component");
        }
        for o in operations() {
            let op = &doc["paths"][o.path][o.method];
            assert_eq!(op["operationId"], o.id);
            assert!(
                op["responses"][o.status.to_string()].is_object()
                    && op["responses"]["default"].is_object()
            );
        }
        // Every path parameter is declared, with its own schema.
        let cancel = &doc["paths"]["/api/v1/workspaces/{id}/query/{qid}"]["delete"];
        let names: Vec<&str> = cancel["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| p["name"].as_str().unwrap())
            .collect();
        assert_eq!(names, ["id", "qid"]);
        assert_eq!(cancel["parameters"][1]["schema"]["type"], "string");
        for o in operations() {
            let declared = doc["paths"][o.path][o.method]["parameters"]
                .as_array()
                .map_or(0, |ps| ps.iter().filter(|p| p["in"] == "path").count());
            assert_eq!(declared, path_parameters(o.path).len(), "{}", o.path);
        }
        // The stats answer carries no absolute path, in the schema as on the wire.
        let stats = &components["StatsAnswer"]["properties"];
        assert!(stats.get("workspace").is_none() && stats.get("index_path").is_none());
        assert!(stats.get("files").is_some());
    }
}
