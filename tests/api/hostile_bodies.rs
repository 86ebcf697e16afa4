//! Malformed request bodies on every endpoint that reads one: each JSON shape other than an object
//! (a struct in array form included), unparseable JSON, invalid UTF-8, fields of the wrong type and
//! nesting bombs get 400 with Confluent's error body, never a 5xx, and change nothing stored.

use api_tests::Harness;
use api_tests::client::{V1_JSON, avro};
use api_tests::schemas::user_v1;
use reqwest::Method;
use serde_json::{Value, json};

/// What a request body is read as: the register/lookup/compatibility body, `PUT /config`, `PUT /mode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Entity {
    Register,
    Config,
    Mode,
}

impl Entity {
    /// Confluent's name of the request entity, which its 400 message names.
    fn name(self) -> &'static str {
        match self {
            Entity::Register => "RegisterSchemaRequest",
            Entity::Config => "ConfigUpdateRequest",
            Entity::Mode => "ModeUpdateRequest",
        }
    }
}

/// Every endpoint that takes a body, with the entity it reads.
const ENDPOINTS: [(Method, &str, Entity); 8] = [
    (Method::POST, "/subjects/held/versions", Entity::Register),
    (Method::POST, "/subjects/held", Entity::Register),
    (Method::POST, "/compatibility/subjects/held/versions", Entity::Register),
    (Method::POST, "/compatibility/subjects/held/versions/latest", Entity::Register),
    (Method::PUT, "/config", Entity::Config),
    (Method::PUT, "/config/held", Entity::Config),
    (Method::PUT, "/mode", Entity::Mode),
    (Method::PUT, "/mode/held", Entity::Mode),
];

/// `depth` nested arrays: `[[[...]]]`.
fn nested_arrays(depth: usize) -> String {
    format!("{}{}", "[".repeat(depth), "]".repeat(depth))
}

/// Bodies that are JSON but not an object, with the shape Jackson names in its message (`null`, like an
/// empty body, is a missing request: 422, see `confluent_answers`).
fn non_objects(entity: Entity) -> Vec<(Vec<u8>, &'static str)> {
    // The entity's fields in declaration order: what serde would read a struct from, given an array.
    let in_field_order = match entity {
        Entity::Register => json!([user_v1(), "AVRO", [], null, null, 100, 1]).to_string(),
        Entity::Config => json!(["NONE", false]).to_string(),
        Entity::Mode => json!(["IMPORT"]).to_string(),
    };
    [
        (in_field_order, "Array value (token `JsonToken.START_ARRAY`)"),
        ("[]".to_string(), "Array value (token `JsonToken.START_ARRAY`)"),
        (nested_arrays(100_000), "Array value (token `JsonToken.START_ARRAY`)"),
        (r#""READONLY""#.to_string(), "String value (token `JsonToken.VALUE_STRING`)"),
        ("42".to_string(), "Integer value (token `JsonToken.VALUE_NUMBER_INT`)"),
        (format!("1{}", "0".repeat(10_000)), "Integer value (token `JsonToken.VALUE_NUMBER_INT`)"),
        ("-1.5e400".to_string(), "Floating-point value (token `JsonToken.VALUE_NUMBER_FLOAT`)"),
        (" true".to_string(), "Boolean value (token `JsonToken.VALUE_TRUE`)"),
        ("false".to_string(), "Boolean value (token `JsonToken.VALUE_FALSE`)"),
    ]
    .into_iter()
    .map(|(body, shape)| (body.into_bytes(), shape))
    .collect()
}

/// Bodies that are not JSON at all, or an object that does not read as the entity.
fn malformed(entity: Entity) -> Vec<Vec<u8>> {
    let schema = json!(user_v1());
    let mut bodies: Vec<Vec<u8>> = vec![
        b"{".to_vec(),
        b"{\"schema\": \"".to_vec(),
        b"{\"mode\": \"IMPORT\"".to_vec(),
        b"{\"compatibility\":\"NONE\"} trailing".to_vec(),
        b"{'schema': 'x'}".to_vec(),
        b"{\"schema\": \"\xff\xfe\", \"compatibility\": \"\xc3\x28\", \"mode\": \"\xed\xa0\x80\"}".to_vec(),
        format!(r#"{{"schema": {0}, "compatibility": {0}, "mode": {0}}}"#, nested_arrays(100_000)).into_bytes(),
    ];
    let wrong_types = match entity {
        Entity::Register => vec![
            json!({"schema": 5}),
            json!({"schema": schema, "references": {"name": "a"}}),
            json!({"schema": schema, "references": [["a.avsc", "held", 1]]}),
            json!({"schema": schema, "references": [{"name": "a.avsc", "subject": "held", "version": "1"}]}),
            json!({"schema": schema, "version": "1"}),
            json!({"schema": schema, "id": "7"}),
            json!({"schema": schema, "id": 99_999_999_999_i64}),
            json!({"schema": schema, "metadata": ["owner"]}),
            json!({"schema": schema, "ruleSet": "none"}),
            json!({"schema": schema, "schemaType": ["AVRO"]}),
        ],
        Entity::Config => vec![
            json!({"compatibility": 5}),
            json!({"compatibility": ["NONE"]}),
            json!({"compatibility": "NONE", "normalize": "yes"}),
        ],
        Entity::Mode => {
            vec![json!({"mode": 5}), json!({"mode": {"mode": "IMPORT"}}), json!({"mode": [1]})]
        }
    };
    bodies.extend(wrong_types.iter().map(|body| body.to_string().into_bytes()));
    if entity == Entity::Config {
        // The data-contract keys hold any JSON; nesting beyond the parser's depth is still refused.
        bodies.push(format!(r#"{{"defaultMetadata": {}}}"#, nested_arrays(100_000)).into_bytes());
    }
    bodies
}

/// Everything a body could have changed: versions, the stored schema, config and mode, global and
/// per subject, and the subject list.
async fn stored_state(h: &Harness, id: i64) -> Vec<(String, u16, String)> {
    let mut state = Vec::new();
    for path in [
        "/subjects".to_string(),
        "/subjects/held/versions".to_string(),
        "/subjects/held/versions/latest".to_string(),
        format!("/schemas/ids/{id}"),
        "/config".to_string(),
        "/config/held".to_string(),
        "/mode".to_string(),
        "/mode/held".to_string(),
    ] {
        let response = h.get(&path).await;
        state.push((path, response.status, response.text));
    }
    state
}

/// The 400 every case expects: Confluent's error body in the v1 media type.
fn assert_bad_request(response: &api_tests::client::Response, context: &str) -> String {
    assert_eq!(response.status, 400, "{context}: {}", response.text);
    let body: Value = response.json();
    assert_eq!(body["error_code"], json!(400), "{context}: {}", response.text);
    assert_eq!(response.content_type.as_deref(), Some(V1_JSON), "{context}");
    let message = body["message"].as_str().unwrap_or_default().to_string();
    assert!(!message.is_empty(), "{context}: empty message");
    message
}

async fn every_body_of_the_wrong_shape_is_400_and_changes_nothing(h: &Harness) {
    let id = h.register("held", &user_v1()).await;
    h.set_config(Some("held"), "FULL").await.ok_json(200);
    let before = stored_state(h, id).await;
    for (method, path, entity) in ENDPOINTS {
        for (body, shape) in non_objects(entity) {
            let context = format!("{method} {path} {:?}", String::from_utf8_lossy(&body[..body.len().min(40)]));
            let response = h.send(method.clone(), path, Some(body), Some(V1_JSON)).await;
            let message = assert_bad_request(&response, &context);
            assert_eq!(
                message,
                format!("Cannot deserialize value of type `{}` from {shape}", entity.name()),
                "{context}"
            );
        }
        for body in malformed(entity) {
            let context = format!("{method} {path} {:?}", String::from_utf8_lossy(&body[..body.len().min(60)]));
            let response = h.send(method.clone(), path, Some(body), Some(V1_JSON)).await;
            assert_bad_request(&response, &context);
        }
    }
    assert_eq!(stored_state(h, id).await, before, "no malformed body changed what is stored");
    // The same endpoints still take their well-formed bodies.
    h.post("/compatibility/subjects/held/versions/latest", &avro(&user_v1())).await.ok_json(200);
    h.put("/mode/held", &json!({"mode": "READWRITE"})).await.ok_json(200);
}

api_tests::api_cases!(every_body_of_the_wrong_shape_is_400_and_changes_nothing);
