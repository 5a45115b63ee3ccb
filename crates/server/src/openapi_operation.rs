//! One documented route of the OpenAPI document, and its usual defaults: below the
//! document and the files that list the memory operations.

/// One documented route.
#[derive(Debug, Clone, Copy)]
pub struct Operation {
    /// `get`, `post` or `delete`.
    pub method: &'static str,
    /// The path, with `{id}` for a workspace's registry id and `{qid}` for a query's
    /// id (see [`PATH_PARAMETERS`]).
    pub path: &'static str,
    /// The operationId.
    pub id: &'static str,
    /// One line on what it does.
    pub summary: &'static str,
    /// The request body's schema, if it takes one.
    pub request: Option<&'static str>,
    /// The 200 answer's schema.
    pub response: &'static str,
    /// Whether the API key is required.
    pub auth: bool,
    /// The success status (200, or 202 for a run started in the background).
    pub status: u16,
    /// A required string query parameter, if it takes one: its name, description and
    /// the pattern its value must match.
    pub query: Option<(&'static str, &'static str, &'static str)>,
}

/// An operation with the usual defaults: the key required, 200, no query parameter.
pub(crate) const fn op(
    method: &'static str,
    path: &'static str,
    id: &'static str,
    summary: &'static str,
    request: Option<&'static str>,
    response: &'static str,
) -> Operation {
    Operation {
        method,
        path,
        id,
        summary,
        request,
        response,
        auth: true,
        status: 200,
        query: None,
    }
}
