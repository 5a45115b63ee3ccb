//! The integration tests of this crate, in one binary: one link instead of one per
//! file, which keeps builds and CI fast and small. Each file is a module; shared
//! helpers are the support modules below.

mod common;

mod adversarial;
mod adversarial_files;
mod changed_files;
mod content_definitions;
mod cpp_receivers;
mod ctags_recall;
mod exact_paths;
mod extract_fixtures;
mod extract_scaling;
mod file_budget;
mod fuzz_regressions;
mod go_bare_calls;
mod header_lang;
mod incremental;
mod incremental_java_packages;
mod incremental_kotlin_objects;
mod incremental_macros;
mod incremental_modules;
mod incremental_rust_inline;
mod java_receivers;
mod js_literal_receivers;
mod macro_items;
mod name_only_impact;
mod overload_selectors;
mod overloads;
mod python_self_calls;
mod recursive_callers;
mod resolve_fixtures;
mod rust_foreign_receivers;
mod rust_pointer_receivers;
mod rust_use_cycles;
mod search_index;
mod search_regex;
mod search_text_files;
mod selectors;
mod sweep_short;
mod traverse_enough;
mod unresolved_uses;
