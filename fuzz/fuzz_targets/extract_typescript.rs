//! Extracts the input as TypeScript: must finish, within bounds, without a panic.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| loci_fuzz::extract(loci_index::Lang::TypeScript, data));
