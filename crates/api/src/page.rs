//! Bounded lists: every list an operation returns has a limit (with a default and a
//! maximum), a total, and a cursor for the next page.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{ApiError, ErrorKind};

/// The largest page any list returns.
pub const MAX_LIMIT: usize = 10_000;

/// Which page of a list to return.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct PageRequest {
    /// Items at most (default: the operation's own; at most 10000).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(range(min = 1, max = 10000))]
    pub limit: Option<usize>,
    /// The `next_cursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schemars(regex(pattern = r"^[0-9]{1,19}$"))]
    pub cursor: Option<String>,
}

impl PageRequest {
    /// The first page of at most `limit` items.
    pub fn first(limit: usize) -> PageRequest {
        PageRequest {
            limit: Some(limit),
            cursor: None,
        }
    }

    /// The checked window: where it starts and how many it holds.
    pub fn window(&self, default_limit: usize) -> Result<Window, ApiError> {
        let limit = self.limit.unwrap_or(default_limit);
        if limit == 0 || limit > MAX_LIMIT {
            return Err(ApiError::new(
                ErrorKind::LimitExceeded,
                format!("limit {limit} is outside 1..={MAX_LIMIT}"),
            )
            .hint(format!(
                "ask for at most {MAX_LIMIT} items and page with the cursor"
            )));
        }
        let offset = match &self.cursor {
            None => 0,
            Some(c) => c.parse::<usize>().map_err(|_| {
                ApiError::new(
                    ErrorKind::InvalidInput,
                    format!("`{c}` is not a cursor this operation returned"),
                )
                .hint("pass the `next_cursor` of the previous page unchanged")
            })?,
        };
        Ok(Window { offset, limit })
    }
}

/// A checked page window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window {
    /// Items skipped.
    pub offset: usize,
    /// Items at most.
    pub limit: usize,
}

impl Window {
    /// How many items to ask a source for so the page and "is there more" are known.
    pub fn wanted(&self) -> usize {
        self.offset.saturating_add(self.limit).saturating_add(1)
    }

    /// The page of `all` (every item up to a source's cap) and its [`PageInfo`];
    /// `exact` says whether `all` is every item there is.
    pub fn slice<T>(&self, mut all: Vec<T>, exact: bool) -> (Vec<T>, PageInfo) {
        let total = all.len();
        let end = self.offset.saturating_add(self.limit).min(total);
        let start = self.offset.min(end);
        let more = end < total || (!exact && end == total && total > 0);
        all.truncate(end);
        let page: Vec<T> = all.drain(start..).collect();
        let info = PageInfo {
            limit: self.limit,
            total: total as u64,
            total_exact: exact,
            truncated: more,
            next_cursor: more.then(|| end.to_string()),
        };
        (page, info)
    }
}

/// Where a page stands in its list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct PageInfo {
    /// The limit applied.
    pub limit: usize,
    /// Items in the whole list (a lower bound when `total_exact` is false).
    pub total: u64,
    /// Whether `total` is exact.
    pub total_exact: bool,
    /// Whether more items follow this page.
    pub truncated: bool,
    /// Pass it as `cursor` for the next page.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_walk_a_list_once_in_order() {
        let all: Vec<u32> = (0..25).collect();
        let mut seen = Vec::new();
        let mut req = PageRequest::first(10);
        loop {
            let w = req.window(100).unwrap();
            let (page, info) = w.slice(all.clone(), true);
            assert_eq!(info.total, 25);
            seen.extend(page);
            match info.next_cursor {
                Some(c) => req.cursor = Some(c),
                None => break,
            }
        }
        assert_eq!(seen, all);
    }

    #[test]
    fn an_absurd_limit_is_a_named_error_not_an_empty_answer() {
        let e = PageRequest::first(usize::MAX).window(100).unwrap_err();
        assert_eq!(e.kind, ErrorKind::LimitExceeded);
        assert!(e.message.contains("10000"), "{}", e.message);
        assert_eq!(
            PageRequest::first(0).window(100).unwrap_err().kind,
            ErrorKind::LimitExceeded
        );
    }

    #[test]
    fn a_forged_cursor_is_invalid_input() {
        let req = PageRequest {
            limit: None,
            cursor: Some("abc".into()),
        };
        assert_eq!(req.window(5).unwrap_err().kind, ErrorKind::InvalidInput);
    }

    #[test]
    fn an_inexact_source_says_more_may_follow() {
        let w = PageRequest::first(3).window(3).unwrap();
        let (page, info) = w.slice(vec![1, 2, 3], false);
        assert_eq!(page, [1, 2, 3]);
        assert!(info.truncated && !info.total_exact);
    }
}
