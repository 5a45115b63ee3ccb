//! Answers: an [`ApiError`] becomes its status from the error table and the error
//! envelope as the body; a JSON request body that is too large or malformed becomes a
//! named error in the same envelope (never axum's plain-text rejection).

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use loci_api::{ApiError, ErrorKind};

use crate::state::Shared;

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
fn no_host_paths(mut e: ApiError) -> ApiError {
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

/// A JSON request body whose rejections are loci errors.
pub struct Body<T>(pub T);

impl<T> FromRequest<Shared> for Body<T>
where
    T: serde::de::DeserializeOwned,
{
    type Rejection = HttpError;

    async fn from_request(req: Request, state: &Shared) -> Result<Self, Self::Rejection> {
        let mut value = match axum::Json::<serde_json::Value>::from_request(req, state).await {
            Ok(axum::Json(v)) => v,
            Err(rejection) => return Err(HttpError(rejected(&rejection, state.max_body_bytes))),
        };
        integral_numbers(&mut value);
        serde_json::from_value(value).map(Body).map_err(|e| {
            HttpError(ApiError::new(
                ErrorKind::InvalidInput,
                format!("the request body is not a valid request: {e}"),
            ))
        })
    }
}

/// Writes every number with no fraction as an integer: JSON (and its schemas) do not
/// tell `2.0` from `2`, so neither does an integer field here.
fn integral_numbers(v: &mut serde_json::Value) {
    /// Past 2^53 a float no longer stands for one integer.
    const EXACT: f64 = 9_007_199_254_740_992.0;
    match v {
        serde_json::Value::Number(n) if !n.is_i64() && !n.is_u64() => {
            if let Some(f) = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() <= EXACT) {
                *v = serde_json::Value::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        serde_json::Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// A request body over `api.maxBodyBytes` (`limit`).
pub fn body_too_large(limit: usize) -> ApiError {
    ApiError::new(
        ErrorKind::TooLong,
        format!("the request body is larger than api.maxBodyBytes ({limit} bytes)"),
    )
    .hint("send a smaller body, or raise api.maxBodyBytes (LOCI_API_MAX_BODY_BYTES)")
}

fn rejected(rejection: &JsonRejection, limit: usize) -> ApiError {
    let status = rejection.status();
    if status == StatusCode::PAYLOAD_TOO_LARGE {
        return body_too_large(limit);
    }
    match rejection {
        JsonRejection::MissingJsonContentType(_) => ApiError::new(
            ErrorKind::InvalidInput,
            "the request body must be JSON (Content-Type: application/json)",
        ),
        other => ApiError::new(
            ErrorKind::InvalidInput,
            format!(
                "the request body is not a valid request: {}",
                other.body_text()
            ),
        ),
    }
}
