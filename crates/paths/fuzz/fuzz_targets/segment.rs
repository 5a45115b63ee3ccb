//! Fuzzes the segment validator: it never panics, and whatever it accepts
//! is relative, made of normal components, free of NUL, control characters
//! and backslashes, NFC, within the limits, and byte for byte the input.

#![no_main]

use libfuzzer_sys::fuzz_target;
use loci_paths::{
    MAX_COMPONENT_BYTES, MAX_SEGMENT_BYTES, SEGMENT_ERROR_KINDS, Segment, WorkspaceName,
};

fuzz_target!(|data: &[u8]| {
    let Ok(raw) = std::str::from_utf8(data) else {
        use std::os::unix::ffi::OsStrExt;
        let path = std::path::Path::new(std::ffi::OsStr::from_bytes(data));
        if let Err(e) = Segment::from_path(path) {
            assert!(SEGMENT_ERROR_KINDS.contains(&e.kind()));
        }
        return;
    };
    match Segment::parse(raw) {
        Ok(segment) => {
            assert_eq!(segment.as_str(), raw);
            assert!(!raw.is_empty() && raw.len() <= MAX_SEGMENT_BYTES);
            assert!(!raw.starts_with('/'));
            assert!(!raw.chars().any(|c| c == '\\' || c.is_control()));
            for component in segment.components() {
                assert!(!component.is_empty() && component != "." && component != "..");
                assert!(component.len() <= MAX_COMPONENT_BYTES);
            }
            let path = segment.as_path();
            assert!(path.is_relative());
            assert!(
                path.components()
                    .all(|c| matches!(c, std::path::Component::Normal(_)))
            );
        }
        Err(e) => {
            assert!(SEGMENT_ERROR_KINDS.contains(&e.kind()));
            assert!(!e.to_string().is_empty());
        }
    }
    if let Ok(name) = WorkspaceName::parse(raw) {
        assert_eq!(Segment::parse(name.as_str()).map(|s| s.depth()), Ok(1));
    }
});
