//! Indexes (extracts, stores, resolves) a small workspace written from the input.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| loci_fuzz::resolve(data));
