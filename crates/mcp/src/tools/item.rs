//! The compact form of a definition in every list that shows one (`find`, `symbol`):
//! one type, serialized into the answer and described in the output schema.

use loci_api::vocab::index::{Lang, SymbolInfo, SymbolKind};
use schemars::JsonSchema;
use serde::Serialize;

/// Characters of a signature shown in a list.
pub(crate) const SIGNATURE_CHARS: usize = 160;

/// A definition in a list.
#[derive(Debug, Serialize, JsonSchema)]
pub(crate) struct SymbolItem {
    pub name: String,
    pub qualified_name: String,
    // Strings in the output schemas: the input schemas list the values once, and every
    // output repeating them would cost each client's context more than it tells.
    #[schemars(with = "String")]
    pub kind: SymbolKind,
    #[schemars(with = "String")]
    pub lang: Lang,
    pub path: String,
    pub line: u32,
    pub end_line: u32,
    pub signature: String,
}

impl SymbolItem {
    /// The item of `s`, its signature clipped.
    pub(crate) fn of(s: &SymbolInfo) -> SymbolItem {
        SymbolItem {
            name: s.name.clone(),
            qualified_name: s.qualified_name.clone(),
            kind: s.kind,
            lang: s.lang,
            path: s.path.clone(),
            line: s.line,
            end_line: s.end_line,
            signature: crate::budget::clip(&s.signature, SIGNATURE_CHARS),
        }
    }
}

#[cfg(test)]
mod tests {
    use loci_api::vocab::index::{Lang, SymbolInfo, SymbolKind};
    use serde_json::json;

    use super::SymbolItem;

    #[test]
    fn an_item_is_the_compact_form_its_schema_describes() {
        let s = SymbolInfo {
            id: 7,
            name: "parse".into(),
            qualified_name: "cfg::parse".into(),
            kind: SymbolKind::TypeAlias,
            path: "src/cfg.rs".into(),
            line: 3,
            end_line: 9,
            signature: "x".repeat(400),
            lang: Lang::JavaScript,
            doc: Some("not in a list".into()),
        };
        let item = crate::tools::symbol_item(&s);
        assert_eq!(
            item,
            json!({
                "name": "parse", "qualified_name": "cfg::parse", "kind": "type_alias",
                "lang": "javascript", "path": "src/cfg.rs", "line": 3, "end_line": 9,
                "signature": crate::budget::clip(&s.signature, super::SIGNATURE_CHARS),
            })
        );
        let schema = crate::tools::output_of::<SymbolItem>();
        let props = schema["properties"].as_object().unwrap();
        let fields = item.as_object().unwrap();
        assert!(fields.keys().all(|k| props.contains_key(k)), "{schema}");
        for r in schema["required"].as_array().unwrap() {
            assert!(fields.contains_key(r.as_str().unwrap()), "{r} missing");
        }
    }
}
