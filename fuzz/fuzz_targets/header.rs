//! The language decisions made from a file's bytes: a `#!` line and the `.h` rule.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| loci_fuzz::header(data));
