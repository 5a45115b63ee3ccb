//! The lower crates' names a front end needs beyond the operations (the types it
//! prints, the hooks of its process), re-exported here so that a front end depends on
//! `loci_api` alone and never reaches past it into the floors below.

/// The code graph's vocabulary and the index run's progress.
pub mod index {
    pub use loci_index::graph::{SymbolInfo, Unresolved, UnresolvedReason};
    pub use loci_index::vocab::{Confidence, EdgeKind};
    pub use loci_index::{IndexState, Lang, NoProgress, Progress, SymbolKind, WriteWork};
}

/// The lifecycle: configuration, state, the session-start gate and the watcher.
pub mod lifecycle {
    pub use loci_lifecycle::gate::GateRequest;
    pub use loci_lifecycle::maintenance::default_budget;
    pub use loci_lifecycle::progress::{ProgressLines, lines_requested};
    pub use loci_lifecycle::watch::WatchEvent;
    pub use loci_lifecycle::{Config, Notice, State, Status};
}

/// Memory's model and what recall answers.
pub mod memory {
    pub use loci_memory::code::CheckedLink;
    pub use loci_memory::extract::{Extraction, ExtractionState};
    pub use loci_memory::model::MAX_BODY_BYTES;
    pub use loci_memory::recall::{RecallAnswer, Vectors, VectorsState, Why};
    pub use loci_memory::{Edit, EntityInput, LinkState, MemoryType, NewMemory, RelationshipInput};
    pub use loci_memory::{EntityInfo, NAME_PATTERN};
    pub use loci_memory::{StoreDescription, StoreKind, VectorSearch};
}

/// The roots loci owns.
pub mod paths {
    pub use loci_paths::{Locator, RootKind, Roots, open_file_beneath};
}

/// Read-only SQL: its values, its duration syntax and the worker's entry point.
pub mod query {
    pub use loci_query::{Value, parse_duration, run_worker};
}

/// Where an index lives and the registry's entries.
pub mod store {
    pub use loci_store::FileStamp;
    pub use loci_store::index_path_for;
    pub use loci_store::registry::WorkspaceEntry;
    pub use loci_store::registry::default_registry_path;
}

/// The process's children: the supervisor and the signal teardown.
pub mod process {
    pub use loci_supervisor::{
        AUTO_WATCH_VAR, Supervisor, on_shutdown_signal, own_executable, teardown_all_children,
    };
}

/// Workspace creation.
pub mod workspace {
    pub use loci_workspace::{Action, CreateRequest, Created, PROJECT_ID_PATTERN};
}

/// The embedding model.
pub mod embed {
    pub use loci_embed::ModelStatus;
}
