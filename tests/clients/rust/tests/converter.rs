//! schema_registry_converter (async) through the registry: Avro and JSON Schema encode with
//! auto-registration and with the latest version, decode by the wire ID, and refusals.

use apache_avro::types::Value as AvroValue;
use client_tests::{settings, unique_topic, wire_id};
use schema_registry_converter::async_impl::avro::{AvroDecoder, AvroEncoder};
use schema_registry_converter::async_impl::json::{JsonDecoder, JsonEncoder};
use schema_registry_converter::async_impl::schema_registry::get_schema_by_subject;
use schema_registry_converter::error::SRCError;
use schema_registry_converter::schema_registry_common::{SchemaType, SubjectNameStrategy, SuppliedSchema};
use serde_json::json;

const HEARTBEAT_V1: &str = r#"{"type":"record","name":"Heartbeat","namespace":"ops.events","fields":[
    {"name":"beat","type":"long"},
    {"name":"host","type":"string"},
    {"name":"status","type":{"type":"enum","name":"Status","symbols":["UP","DOWN"]}}]}"#;
const HEARTBEAT_V2: &str = r#"{"type":"record","name":"Heartbeat","namespace":"ops.events","fields":[
    {"name":"beat","type":"long"},
    {"name":"host","type":"string"},
    {"name":"status","type":{"type":"enum","name":"Status","symbols":["UP","DOWN"]}},
    {"name":"zone","type":"string","default":"eu-west-1"}]}"#;
const HEARTBEAT_V3_INCOMPATIBLE: &str = r#"{"type":"record","name":"Heartbeat","namespace":"ops.events","fields":[
    {"name":"beat","type":"long"},
    {"name":"host","type":"string"},
    {"name":"status","type":{"type":"enum","name":"Status","symbols":["UP","DOWN"]}},
    {"name":"zone","type":"string","default":"eu-west-1"},
    {"name":"rack","type":"int"}]}"#;

fn with_schema(topic: &str, schema_type: SchemaType, schema: &str) -> SubjectNameStrategy {
    SubjectNameStrategy::TopicNameStrategyWithSchema(
        topic.to_string(),
        false,
        SuppliedSchema::new(None, schema_type, schema.to_string()),
    )
}

fn latest(topic: &str) -> SubjectNameStrategy {
    SubjectNameStrategy::TopicNameStrategy(topic.to_string(), false)
}

fn heartbeat(beat: i64) -> Vec<(&'static str, AvroValue)> {
    vec![
        ("beat", AvroValue::Long(beat)),
        ("host", AvroValue::String("node-1".to_string())),
        ("status", AvroValue::Enum(0, "UP".to_string())),
    ]
}

/// Heartbeat `values` encoded as `strategy` says by an encoder of their own: the encoder caches the
/// schema per subject, so each schema version gets a fresh one.
async fn encode_heartbeat(
    values: Vec<(&'static str, AvroValue)>,
    strategy: SubjectNameStrategy,
) -> Result<Vec<u8>, SRCError> {
    AvroEncoder::new(settings()).encode(values, strategy).await
}

fn record_field<'a>(value: &'a AvroValue, name: &str) -> Option<&'a AvroValue> {
    match value {
        AvroValue::Record(fields) => fields.iter().find(|(field, _)| field == name).map(|(_, value)| value),
        _ => None,
    }
}

#[tokio::test]
async fn avro_auto_register_encode_then_decode_by_id() {
    let topic = unique_topic("heartbeats");
    let bytes = encode_heartbeat(heartbeat(7), with_schema(&topic, SchemaType::Avro, HEARTBEAT_V1))
        .await
        .unwrap_or_else(|error| panic!("encode: {error:?}"));

    let registered = get_schema_by_subject(&settings(), &latest(&topic)).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(wire_id(&bytes), Some(registered.id), "the prefix carries the registry's ID");
    assert_eq!(registered.version, Some(1));

    let decoded = AvroDecoder::new(settings()).decode(Some(&bytes)).await.unwrap_or_else(|e| panic!("decode: {e:?}"));
    assert_eq!(decoded.name.map(|name| name.fullname(None)), Some("ops.events.Heartbeat".to_string()));
    assert_eq!(record_field(&decoded.value, "beat"), Some(&AvroValue::Long(7)));
    assert_eq!(record_field(&decoded.value, "host"), Some(&AvroValue::String("node-1".to_string())));
    assert_eq!(record_field(&decoded.value, "status"), Some(&AvroValue::Enum(0, "UP".to_string())));
}

#[tokio::test]
async fn avro_encode_with_the_latest_version_and_evolve() {
    let topic = unique_topic("heartbeats");
    let v1 = encode_heartbeat(heartbeat(1), with_schema(&topic, SchemaType::Avro, HEARTBEAT_V1))
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let mut v2_values = heartbeat(2);
    v2_values.push(("zone", AvroValue::String("us-east-1".to_string())));
    let v2 = encode_heartbeat(v2_values, with_schema(&topic, SchemaType::Avro, HEARTBEAT_V2))
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_ne!(wire_id(&v1), wire_id(&v2));

    // No schema supplied: a fresh encoder uses the subject's latest version (v2).
    let mut values = heartbeat(3);
    values.push(("zone", AvroValue::String("ap-south-1".to_string())));
    let by_latest = encode_heartbeat(values, latest(&topic)).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(wire_id(&by_latest), wire_id(&v2));

    let decoder = AvroDecoder::new(settings());
    let old = decoder.decode(Some(&v1)).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(record_field(&old.value, "zone"), None, "v1 bytes decode with their own writer schema");
    let new = decoder.decode(Some(&by_latest)).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(record_field(&new.value, "zone"), Some(&AvroValue::String("ap-south-1".to_string())));

    let mut v3_values = heartbeat(4);
    v3_values.push(("zone", AvroValue::String("x".to_string())));
    v3_values.push(("rack", AvroValue::Int(2)));
    let refused = encode_heartbeat(v3_values, with_schema(&topic, SchemaType::Avro, HEARTBEAT_V3_INCOMPATIBLE)).await;
    let error = refused.err().unwrap_or_else(|| panic!("an incompatible v3 must be refused"));
    let detail = format!("{error:?}");
    assert!(detail.contains("409"), "the registry's 409 reaches the client: {detail}");
}

#[tokio::test]
async fn avro_decode_of_an_unknown_id_fails() {
    let bytes = [0u8, 0x7f, 0xff, 0xff, 0xf0, 2];
    assert!(AvroDecoder::new(settings()).decode(Some(&bytes)).await.is_err());
}

const ORDER_SCHEMA: &str = r#"{
  "$schema": "http://json-schema.org/draft-07/schema#",
  "title": "Order",
  "type": "object",
  "properties": {
    "id": {"type": "string"},
    "amount": {"type": "number"},
    "lines": {"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}}
  },
  "required": ["id", "amount"],
  "additionalProperties": false
}"#;

#[tokio::test]
async fn json_auto_register_encode_then_decode_by_id() {
    let topic = unique_topic("orders");
    let order = json!({"id": "o-1", "amount": 9.5, "lines": [{"sku": "x"}]});
    let bytes = JsonEncoder::new(settings())
        .encode(&order, with_schema(&topic, SchemaType::Json, ORDER_SCHEMA))
        .await
        .unwrap_or_else(|e| panic!("encode: {e:?}"));

    let registered = get_schema_by_subject(&settings(), &latest(&topic)).await.unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(wire_id(&bytes), Some(registered.id));
    assert_eq!(registered.schema_type, SchemaType::Json);

    let decoded = JsonDecoder::new(settings()).decode(Some(&bytes)).await.unwrap_or_else(|e| panic!("decode: {e:?}"));
    let decoded = decoded.unwrap_or_else(|| panic!("a framed payload decodes to a value"));
    assert_eq!(decoded.value, order);

    let by_latest = JsonEncoder::new(settings())
        .encode(&json!({"id": "o-2", "amount": 1}), latest(&topic))
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    assert_eq!(wire_id(&by_latest), Some(registered.id));
}

#[tokio::test]
async fn json_value_that_breaks_the_registered_schema_is_refused() {
    let topic = unique_topic("orders");
    let encoder = JsonEncoder::new(settings());
    let missing_amount =
        encoder.encode(&json!({"id": "o-3"}), with_schema(&topic, SchemaType::Json, ORDER_SCHEMA)).await;
    assert!(missing_amount.is_err(), "the schema from the registry validates the value");
    let unknown_field = encoder.encode(&json!({"id": "o-4", "amount": 2, "x": true}), latest(&topic)).await;
    assert!(unknown_field.is_err());
}
