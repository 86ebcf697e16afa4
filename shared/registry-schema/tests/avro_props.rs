//! Properties of Avro parsing: never panics on arbitrary JSON, the stored text is a fixed point,
//! and whitespace / key-order variants give the same text and fingerprint.

use proptest::prelude::*;
use registry_schema::avro::AvroSchema;
use registry_schema::{Fingerprint, SchemaFormat, SchemaType, Validation};
use serde_json::{Map, Value};

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i32>().prop_map(Value::from),
        prop_oneof![
            Just("record"),
            Just("enum"),
            Just("fixed"),
            Just("array"),
            Just("map"),
            Just("int"),
            Just("string"),
            Just("null"),
            Just("R"),
            Just("a.b.R"),
            Just("type"),
            Just("name"),
            Just(""),
        ]
        .prop_map(|s| Value::String(s.to_string())),
    ];
    leaf.prop_recursive(6, 64, 6, |inner| {
        let keys = prop_oneof![
            Just("type"),
            Just("name"),
            Just("namespace"),
            Just("fields"),
            Just("symbols"),
            Just("items"),
            Just("values"),
            Just("size"),
            Just("default"),
            Just("aliases"),
            Just("doc"),
            Just("order"),
            Just("x"),
        ];
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..5).prop_map(Value::Array),
            prop::collection::vec((keys, inner), 0..6)
                .prop_map(|kv| Value::Object(kv.into_iter().map(|(k, v)| (k.to_string(), v)).collect::<Map<_, _>>())),
        ]
    })
}

/// Valid schemas built from a small grammar: primitives, arrays, maps, unions, nested records.
fn arb_schema() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::from("int")),
        Just(Value::from("string")),
        Just(serde_json::json!({"type": "long", "logicalType": "timestamp-millis"})),
        Just(serde_json::json!({"type": "double"})),
    ];
    let types = leaf.prop_recursive(4, 24, 4, |inner| {
        prop_oneof![
            inner.clone().prop_map(|t| serde_json::json!({"type": "array", "items": t})),
            inner.clone().prop_map(|t| serde_json::json!({"values": t, "type": "map", "p": 1})),
            inner.clone().prop_map(|t| if t.is_array() { t } else { serde_json::json!(["null", t]) }),
        ]
    });
    (prop::collection::vec(types, 1..6), "[a-z]{1,6}", any::<bool>()).prop_map(|(field_types, ns, descending)| {
        let fields: Vec<Value> = field_types
            .into_iter()
            .enumerate()
            .map(|(i, t)| {
                let mut f = serde_json::json!({"name": format!("f{i}"), "type": t, "doc": "d"});
                if descending {
                    f["order"] = Value::from("descending");
                }
                f
            })
            .collect();
        serde_json::json!({"type": "record", "name": "R", "namespace": ns, "fields": fields, "custom": {"k": [1, 2]}})
    })
}

/// Reverses the key order of every object and pretty-prints: same schema, different text.
fn reordered(value: &Value) -> Value {
    match value {
        Value::Object(map) => Value::Object(map.iter().rev().map(|(k, v)| (k.clone(), reordered(v))).collect()),
        Value::Array(items) => Value::Array(items.iter().map(reordered).collect()),
        other => other.clone(),
    }
}

fn fingerprint(schema: &AvroSchema) -> Fingerprint {
    Fingerprint::of(SchemaType::Avro, schema.canonical_text(), &[], None, None)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn parse_never_panics_on_arbitrary_json(value in arb_json(), strict in any::<bool>(), normalize in any::<bool>()) {
        let validation = if strict { Validation::Strict } else { Validation::Lenient };
        let _ = AvroSchema::parse(&value.to_string(), &[], validation, normalize);
    }

    #[test]
    fn parse_never_panics_on_arbitrary_text(text in "\\PC{0,64}") {
        let _ = AvroSchema::parse(&text, &[], Validation::Strict, false);
    }

    #[test]
    fn stored_text_is_a_fixed_point(value in arb_schema()) {
        let first = AvroSchema::parse(&value.to_string(), &[], Validation::Strict, false);
        prop_assert!(first.is_ok(), "{}: {:?}", value, first.err());
        let first = first.map_err(|e| TestCaseError::fail(e.to_string()))?;
        let second = AvroSchema::parse(first.canonical_text(), &[], Validation::Strict, false)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(first.canonical_text(), second.canonical_text());
    }

    #[test]
    fn accepted_arbitrary_json_round_trips(value in arb_json()) {
        if let Ok(first) = AvroSchema::parse(&value.to_string(), &[], Validation::Lenient, false) {
            let second = AvroSchema::parse(first.canonical_text(), &[], Validation::Lenient, false)
                .map_err(|e| TestCaseError::fail(format!("{} -> {}: {e}", value, first.canonical_text())))?;
            prop_assert_eq!(first.canonical_text(), second.canonical_text());
        }
    }

    #[test]
    fn layout_variants_give_same_text_and_fingerprint(value in arb_schema()) {
        let compact = AvroSchema::parse(&value.to_string(), &[], Validation::Strict, false)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let pretty = serde_json::to_string_pretty(&reordered(&value)).map_err(|e| TestCaseError::fail(e.to_string()))?;
        let variant = AvroSchema::parse(&pretty, &[], Validation::Strict, false)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(compact.canonical_text(), variant.canonical_text());
        prop_assert_eq!(fingerprint(&compact), fingerprint(&variant));
    }

    #[test]
    fn normal_form_ignores_property_order(value in arb_schema()) {
        let a = AvroSchema::parse(&value.to_string(), &[], Validation::Strict, true)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let b = AvroSchema::parse(&reordered(&value).to_string(), &[], Validation::Strict, true)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(a.canonical_text(), b.canonical_text());
    }
}
