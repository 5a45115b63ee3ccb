//! The arguments every tool takes besides its own (`max_chars`), and every list tool
//! (`limit`, `cursor`): declared once, added to each tool's input schema by
//! [`input_schema`](super::input_schema) and parsed from each call by the server
//! (the budget) and the list tools (the page).

use schemars::JsonSchema;
use serde::Deserialize;

use super::wire::Number;

/// The budget.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct BudgetArg {
    /// budget in chars (default 20000)
    pub max_chars: Option<Number>,
}

/// The page.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct PageArgs {
    /// page size (default 100)
    pub limit: Option<Number>,
    /// a page.next_cursor
    pub cursor: Option<String>,
}
