//! Migration 2: a memory's last LLM extraction (`extract::Extraction` as JSON; NULL when
//! none was asked), so a failed one is visible and retried, never silently lost.

/// `user_version` 1 → 2.
pub(crate) const V2: &str = r#"
ALTER TABLE memories ADD COLUMN extraction TEXT;
"#;
