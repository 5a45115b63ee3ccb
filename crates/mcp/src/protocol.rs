//! JSON-RPC's own error codes for requests whose parameters are malformed, before the
//! SDK sees them: rmcp reads a `tools/call` whose `arguments` is not an object as an
//! unknown method (-32601), and drops a request whose `params` is not an object with an
//! id-less error. Both transports screen each request here first, so a bad request of
//! a method loci serves gets invalid params (-32602) with its own id.

use serde_json::{Value, json};

/// JSON-RPC's invalid-params code.
pub const INVALID_PARAMS: i64 = -32602;
/// JSON-RPC's invalid-request code.
pub const INVALID_REQUEST: i64 = -32600;
/// JSON-RPC's parse-error code.
pub const PARSE_ERROR: i64 = -32700;

/// The request methods this server serves (bad params of any other method are the
/// SDK's to answer: method not found).
pub const SERVED_METHODS: &[&str] = &["initialize", "ping", "tools/list", "tools/call"];

/// The error answer to `message` when it is a request of a served method with
/// malformed params; `None` to hand it on.
pub fn screen(message: &Value) -> Option<Value> {
    let obj = message.as_object()?;
    let id = obj
        .get("id")
        .filter(|id| id.is_string() || id.is_number())?;
    let method = obj.get("method")?.as_str()?;
    if !SERVED_METHODS.contains(&method) {
        return None;
    }
    let params = obj.get("params").filter(|p| !p.is_null());
    let problem = match (method, params) {
        (_, Some(p)) if !p.is_object() => Some("`params` must be an object"),
        ("tools/call", None) => Some("`params` must name the tool: {\"name\", \"arguments\"}"),
        ("tools/call", Some(p)) => match (p.get("name"), p.get("arguments")) {
            (Some(Value::String(_)), None | Some(Value::Null | Value::Object(_))) => None,
            (Some(Value::String(_)), Some(_)) => Some("`arguments` must be an object"),
            _ => Some("`name` must be the tool's name, a string"),
        },
        _ => None,
    }?;
    Some(error(
        id.clone(),
        INVALID_PARAMS,
        format!("invalid params of {method}: {problem}"),
    ))
}

/// A JSON-RPC error answer.
pub fn error(id: Value, code: i64, message: impl Into<String>) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message.into()}})
}

/// The id of a message that may be a request, for an error answer (`null` if none).
pub fn id_of(message: &Value) -> Value {
    message
        .get("id")
        .filter(|id| id.is_string() || id.is_number())
        .cloned()
        .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, params: Value) -> Value {
        json!({"jsonrpc": "2.0", "id": 3, "method": method, "params": params})
    }

    #[test]
    fn malformed_params_of_served_methods_are_invalid_params_with_their_id() {
        for bad in [
            req("tools/call", json!({"name": "find", "arguments": "x"})),
            req("tools/call", json!({"name": "find", "arguments": [1]})),
            req("tools/call", json!({"arguments": {}})),
            req("tools/call", json!({"name": 5})),
            req("tools/call", json!([1, 2])),
            req("tools/list", json!("x")),
            json!({"jsonrpc": "2.0", "id": "a", "method": "tools/call"}),
        ] {
            let answer = screen(&bad).unwrap_or_else(|| panic!("{bad} passed"));
            assert_eq!(answer["error"]["code"], INVALID_PARAMS, "{bad}");
            assert_eq!(answer["id"], bad["id"]);
        }
        for fine in [
            req(
                "tools/call",
                json!({"name": "find", "arguments": {"pattern": "x"}}),
            ),
            req("tools/call", json!({"name": "status"})),
            req("tools/list", json!({})),
            req("resources/list", json!([1])),
            json!({"jsonrpc": "2.0", "method": "notifications/initialized", "params": [1]}),
        ] {
            assert_eq!(screen(&fine), None, "{fine}");
        }
    }
}
