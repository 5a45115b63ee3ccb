//! Extracts the input as Cpp: must finish, within bounds, without a panic.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| loci_fuzz::extract(loci_index::Lang::Cpp, data));
