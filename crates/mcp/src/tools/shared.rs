//! The arguments every tool takes besides its own (`max_chars`), and every list tool
//! (`limit`, `cursor`): declared once, added to each tool's input schema by
//! [`input_schema`](super::input_schema).
#![allow(
    dead_code,
    reason = "schema only: the tools read arguments through Args"
)]

use schemars::JsonSchema;

use super::wire::Number;

/// The budget.
#[derive(JsonSchema)]
pub(crate) struct BudgetArg {
    /// budget in chars (default 20000)
    max_chars: Option<Number>,
}

/// The page and the budget.
#[derive(JsonSchema)]
pub(crate) struct PageArgs {
    /// page size (default 100)
    limit: Option<Number>,
    /// a page.next_cursor
    cursor: Option<String>,
    #[serde(flatten)]
    budget: BudgetArg,
}
