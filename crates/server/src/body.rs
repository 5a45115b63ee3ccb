//! The JSON request body: a body that is too large or malformed becomes a named error
//! in the error envelope (never axum's plain-text rejection), and integral numbers are
//! integers whatever their spelling.

use axum::extract::rejection::JsonRejection;
use axum::extract::{FromRequest, Request};
use axum::http::StatusCode;
use loci_api::{ApiError, ErrorKind};

use crate::reply::{HttpError, body_too_large};
use crate::state::Shared;

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
