//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below.

mod common;
#[allow(dead_code, reason = "the cli tests use its `git` only")]
#[path = "../../git/tests/support.rs"]
mod git_support;
mod lifecycle_support;
mod mcp_support;
#[path = "../../memory/tests/pg_cluster.rs"]
mod pg_cluster;
#[path = "../../memory/tests/pg_tls_cluster.rs"]
mod pg_tls_cluster;
mod probe_support;
mod serve_support;
mod tiny_model_support;

mod bad_input;
mod changes;
mod checkout_follow;
mod crash_safety;
mod doc_examples;
mod exact_paths;
mod exit_contract;
mod extractor_versions;
mod first_steps;
mod gate_api_probe;
mod import_circles;
mod index_file_guards;
mod layers;
mod lifecycle_commands;
mod lifecycle_gate;
mod lifecycle_maintenance;
mod lifecycle_resume;
mod manifest_drift;
mod mcp_answers;
mod mcp_clients;
mod mcp_footprint;
mod mcp_memory_llm;
mod mcp_protocol_edges;
mod mcp_served_roots;
mod mcp_served_sessions;
mod mcp_sessions;
mod meaning;
mod meaning_doors;
mod meaning_watch;
mod memory;
mod memory_background;
mod memory_extract;
mod memory_merge;
mod memory_team;
mod memory_team_nodes;
mod memory_tls;
mod memory_user_remote;
mod memory_vectors;
mod models;
mod module_config_drift;
mod progress_bar;
mod queries;
mod query;
mod query_limits;
mod query_schema_doc;
mod query_worker;
mod serve_clone_reach;
mod serve_http;
mod serve_keys;
mod serve_keys_reload;
mod serve_lifecycle;
mod serve_memory;
mod serve_memory_llm;
mod serve_projects;
mod serve_query;
mod serve_reach;
mod serve_reads;
mod serve_repositories;
mod serve_runs;
mod serve_web;
mod serve_web_live;
mod serve_workspaces;
mod service_layer;
mod startup_order;
mod watch_idle;
mod web_browser;
mod workspace;
