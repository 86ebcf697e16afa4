//! Plain HTTP request → Lambda Function URL event (payload format 2.0), as AWS builds it for a
//! function behind a Function URL: the path and query string exactly as sent (a `%2F` stays
//! encoded), header names lower-cased with repeated values joined by commas, cookies moved out of
//! the headers, and a body that is text for textual content types and base64 otherwise.

use axum::http::request::Parts;
use base64::Engine;
use serde_json::{Map, Value, json};
use std::time::{SystemTime, UNIX_EPOCH};

/// The Function URL's host part (`<url-id>.lambda-url.<region>.on.aws`), as AWS names it.
const URL_ID: &str = "registrylambdaemulator";

/// The event for one request. `request_id` becomes `requestContext.requestId`; `source_ip` the
/// caller's address.
pub fn function_url_event(parts: &Parts, body: &[u8], request_id: &str, source_ip: &str) -> Value {
    let path = parts.uri.path();
    let query = parts.uri.query().unwrap_or("");
    let mut headers = Map::new();
    let mut cookies = Vec::new();
    for (name, value) in &parts.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        if name == axum::http::header::COOKIE {
            cookies.extend(value.split(';').map(|c| c.trim().to_string()).filter(|c| !c.is_empty()));
            continue;
        }
        match headers.get_mut(name.as_str()) {
            Some(Value::String(joined)) => {
                joined.push(',');
                joined.push_str(&value);
            }
            _ => {
                headers.insert(name.as_str().to_string(), Value::String(value));
            }
        }
    }
    let user_agent = headers.get("user-agent").cloned().unwrap_or(Value::Null);
    let now = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default();
    let mut event = json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": path,
        "rawQueryString": query,
        "headers": headers,
        "requestContext": {
            "accountId": "anonymous",
            "apiId": URL_ID,
            "domainName": format!("{URL_ID}.lambda-url.us-east-1.on.aws"),
            "domainPrefix": URL_ID,
            "http": {
                "method": parts.method.as_str(),
                "path": path,
                "protocol": "HTTP/1.1",
                "sourceIp": source_ip,
                "userAgent": user_agent,
            },
            "requestId": request_id,
            "routeKey": "$default",
            "stage": "$default",
            "time": access_log_time(now.as_secs()),
            "timeEpoch": now.as_millis() as u64,
        },
        "isBase64Encoded": false,
    });
    if !query.is_empty() {
        event["queryStringParameters"] = query_parameters(query);
    }
    if !cookies.is_empty() {
        event["cookies"] = json!(cookies);
    }
    if !body.is_empty() {
        let content_type = parts.headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok());
        match std::str::from_utf8(body) {
            Ok(text) if content_type.is_some_and(is_textual) => event["body"] = json!(text),
            _ => {
                event["body"] = json!(base64::engine::general_purpose::STANDARD.encode(body));
                event["isBase64Encoded"] = json!(true);
            }
        }
    }
    event
}

/// Content types a Function URL passes as text rather than base64.
fn is_textual(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim().to_ascii_lowercase();
    essence.starts_with("text/")
        || essence.ends_with("/json")
        || essence.ends_with("+json")
        || essence.ends_with("/xml")
        || essence.ends_with("+xml")
        || essence == "application/javascript"
        || essence == "application/x-www-form-urlencoded"
}

/// `queryStringParameters`: decoded names and values, repeated names joined by commas.
fn query_parameters(query: &str) -> Value {
    let mut parameters = Map::new();
    for pair in query.split('&').filter(|pair| !pair.is_empty()) {
        let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
        let decode = |part: &str| {
            let part = part.replace('+', " ");
            percent_encoding::percent_decode_str(&part).decode_utf8_lossy().into_owned()
        };
        let (name, value) = (decode(name), decode(value));
        match parameters.get_mut(&name) {
            Some(Value::String(joined)) => {
                joined.push(',');
                joined.push_str(&value);
            }
            _ => {
                parameters.insert(name, Value::String(value));
            }
        }
    }
    Value::Object(parameters)
}

/// `12/Mar/2026:19:03:58 +0000` for `secs` since the Unix epoch (UTC).
fn access_log_time(secs: u64) -> String {
    const MONTHS: [&str; 12] = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];
    let (days, rest) = ((secs / 86_400) as i64, secs % 86_400);
    let (year, month, day) = registry_core::registry::civil_date(days);
    let name = MONTHS[(month - 1) as usize];
    format!("{day:02}/{name}/{year}:{:02}:{:02}:{:02} +0000", rest / 3600, rest / 60 % 60, rest % 60)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::http::Request;

    fn parts(request: Request<()>) -> Parts {
        request.into_parts().0
    }

    #[test]
    fn path_and_query_stay_as_sent() {
        let request = Request::post("/subjects/pkg1%2Fmsg1.proto/versions?normalize=true&x=a%20b&x=c")
            .header("content-type", "application/vnd.schemaregistry.v1+json")
            .header("accept", "a")
            .header("Accept", "b")
            .header("cookie", "k=v; l=w")
            .body(())
            .unwrap_or_else(|e| panic!("{e}"));
        let event = function_url_event(&parts(request), br#"{"schema":"\"int\""}"#, "r-1", "127.0.0.1");
        assert_eq!(event["rawPath"], "/subjects/pkg1%2Fmsg1.proto/versions");
        assert_eq!(event["requestContext"]["http"]["path"], "/subjects/pkg1%2Fmsg1.proto/versions");
        assert_eq!(event["rawQueryString"], "normalize=true&x=a%20b&x=c");
        assert_eq!(event["queryStringParameters"], json!({"normalize": "true", "x": "a b,c"}));
        assert_eq!(event["headers"]["accept"], "a,b");
        assert_eq!(event["cookies"], json!(["k=v", "l=w"]));
        assert!(event["headers"].get("cookie").is_none());
        assert_eq!(event["body"], r#"{"schema":"\"int\""}"#);
        assert_eq!(event["isBase64Encoded"], false);
        assert_eq!(event["requestContext"]["requestId"], "r-1");
    }

    #[test]
    fn a_body_without_a_textual_content_type_is_base64() {
        let request = Request::post("/subjects/s").body(()).unwrap_or_else(|e| panic!("{e}"));
        let event = function_url_event(&parts(request), b"{}", "r-2", "127.0.0.1");
        assert_eq!(event["body"], "e30=");
        assert_eq!(event["isBase64Encoded"], true);
    }

    #[test]
    fn the_request_time_is_in_access_log_format() {
        assert_eq!(access_log_time(1_773_342_238), "12/Mar/2026:19:03:58 +0000");
        assert_eq!(access_log_time(951_782_400), "29/Feb/2000:00:00:00 +0000");
    }
}
