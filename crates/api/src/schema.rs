//! The JSON Schemas of every request and response, generated from the types
//! themselves: the HTTP OpenAPI document and the MCP tool schemas are built from these,
//! never written by hand.

use std::collections::BTreeMap;

use schemars::{JsonSchema, Schema, SchemaGenerator, generate::SchemaSettings};

use crate::changes::{ChangesAnswer, ChangesRequest};
use crate::error::ErrorEnvelope;
use crate::graph::{
    FindRequest, OutlinePage, OutlineRequest, RefsPage, RefsRequest, SearchPage, SearchRequest,
    StatsAnswer, SymbolRequest, SymbolsPage, TraversalPage, TraversalRequest,
};
use crate::meaning::{MeaningPage, MeaningRequest};
use crate::sql::{QueryAnswer, QueryRequest};
use crate::sql_service::{CancelAnswer, QueriesInFlight, SqlAnswer, SqlRequest};

/// Every named schema, draft 2020-12 (what OpenAPI 3.1 and MCP use).
pub fn schemas() -> BTreeMap<&'static str, Schema> {
    let mut generator = SchemaGenerator::new(SchemaSettings::draft2020_12());
    let mut out = BTreeMap::new();
    fn add<T: JsonSchema>(
        g: &mut SchemaGenerator,
        out: &mut BTreeMap<&'static str, Schema>,
        name: &'static str,
    ) {
        out.insert(name, g.root_schema_for::<T>());
    }
    add::<FindRequest>(&mut generator, &mut out, "FindRequest");
    add::<SymbolRequest>(&mut generator, &mut out, "SymbolRequest");
    add::<RefsRequest>(&mut generator, &mut out, "RefsRequest");
    add::<TraversalRequest>(&mut generator, &mut out, "TraversalRequest");
    add::<OutlineRequest>(&mut generator, &mut out, "OutlineRequest");
    add::<SearchRequest>(&mut generator, &mut out, "SearchRequest");
    add::<QueryRequest>(&mut generator, &mut out, "QueryRequest");
    add::<ChangesRequest>(&mut generator, &mut out, "ChangesRequest");
    add::<ChangesAnswer>(&mut generator, &mut out, "ChangesAnswer");
    add::<SymbolsPage>(&mut generator, &mut out, "SymbolsPage");
    add::<RefsPage>(&mut generator, &mut out, "RefsPage");
    add::<TraversalPage>(&mut generator, &mut out, "TraversalPage");
    add::<OutlinePage>(&mut generator, &mut out, "OutlinePage");
    add::<SearchPage>(&mut generator, &mut out, "SearchPage");
    add::<MeaningRequest>(&mut generator, &mut out, "MeaningRequest");
    add::<MeaningPage>(&mut generator, &mut out, "MeaningPage");
    add::<StatsAnswer>(&mut generator, &mut out, "StatsAnswer");
    add::<QueryAnswer>(&mut generator, &mut out, "QueryAnswer");
    add::<ErrorEnvelope>(&mut generator, &mut out, "ErrorEnvelope");
    add::<SqlRequest>(&mut generator, &mut out, "SqlRequest");
    add::<SqlAnswer>(&mut generator, &mut out, "SqlAnswer");
    add::<CancelAnswer>(&mut generator, &mut out, "CancelAnswer");
    add::<QueriesInFlight>(&mut generator, &mut out, "QueriesInFlight");
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn every_schema_is_an_object_schema_with_a_title() {
        let all = super::schemas();
        assert!(all.len() >= 14);
        for (name, schema) in &all {
            let v = schema.as_value();
            assert_eq!(v["type"], "object", "{name}: {v}");
            assert!(v.get("properties").is_some(), "{name} has no properties");
        }
        // Vocabularies are enums in the schema, not free strings.
        let find = all["FindRequest"].as_value().to_string();
        assert!(
            find.contains("\"type_alias\"") && find.contains("\"javascript\""),
            "{find}"
        );
        let page = all["TraversalPage"].as_value().to_string();
        assert!(
            page.contains("\"CALLS\"") && page.contains("\"exact\""),
            "{page}"
        );
    }
}
