//! Answers: an [`ApiError`] becomes its status from the error table and the error
//! envelope as the body, with no host path in it.

use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use loci_api::{ApiError, ErrorKind};

/// An [`ApiError`] as an HTTP answer.
#[derive(Debug)]
pub struct HttpError(pub ApiError);

impl From<ApiError> for HttpError {
    fn from(e: ApiError) -> Self {
        HttpError(e)
    }
}

impl IntoResponse for HttpError {
    fn into_response(self) -> Response {
        let status =
            StatusCode::from_u16(self.0.http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
        (status, axum::Json(no_host_paths(self.0).envelope())).into_response()
    }
}

/// No absolute path crosses the network, even one no handler knew to redact (a
/// symlink's target, a file beside an index kept outside its root): every quoted
/// absolute path of the error, and every unquoted one of this machine, becomes
/// `<path>`.
pub(crate) fn no_host_paths(mut e: ApiError) -> ApiError {
    fn scrub(text: &str) -> String {
        use loci_api::remote::{scrub_host_paths, scrub_quoted_paths};
        scrub_host_paths(&scrub_quoted_paths(text))
    }
    fn walk(v: &mut serde_json::Value) {
        match v {
            serde_json::Value::String(text) => *text = scrub(text),
            serde_json::Value::Array(items) => items.iter_mut().for_each(walk),
            serde_json::Value::Object(map) => map.values_mut().for_each(walk),
            _ => {}
        }
    }
    e.message = scrub(&e.message);
    e.hint = e.hint.as_deref().map(scrub);
    if let Some(d) = e.detail.as_mut() {
        walk(d);
    }
    e
}

/// A handler's result.
pub type Reply<T> = Result<axum::Json<T>, HttpError>;

/// A request body over `api.maxBodyBytes` (`limit`).
pub fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        ErrorKind::TooLong,
        format!("the request body is larger than api.maxBodyBytes ({limit} bytes)"),
    )
    .hint("send a smaller body, or raise api.maxBodyBytes (LOCI_API_MAX_BODY_BYTES)")
}
