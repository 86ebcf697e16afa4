//! Avro hot paths on a 200-field record: parse + stored text + fingerprint, and a compatibility check.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use registry_schema::compat::{self, CompatibilityLevel};
use registry_schema::{Fingerprint, ParsedSchema, SchemaType, Validation};
use serde_json::{Value, json};

/// A record with `fields` fields cycling through the common shapes: primitives, nullable unions, an
/// enum, arrays, maps, a logical type and a small nested record (each named type defined once).
fn record(fields: usize, extra_defaulted_field: bool) -> String {
    let mut list: Vec<Value> = (0..fields)
        .map(|i| {
            let name = format!("field_{i}");
            match i % 10 {
                0 => json!({"name": name, "type": "int"}),
                1 => json!({"name": name, "type": "long", "doc": "a counter"}),
                2 => json!({"name": name, "type": "string"}),
                3 => json!({"name": name, "type": ["null", "string"], "default": null}),
                4 => {
                    json!({"name": name, "type": {"type": "enum", "name": format!("E{i}"), "symbols": ["A", "B", "C"]}})
                }
                5 => json!({"name": name, "type": {"type": "array", "items": "double"}}),
                6 => json!({"name": name, "type": {"type": "map", "values": "long"}}),
                7 => json!({"name": name, "type": {"type": "long", "logicalType": "timestamp-millis"}}),
                8 => json!({"name": name, "type": {"type": "record", "name": format!("Inner{i}"), "fields": [
                    {"name": "x", "type": "int"}, {"name": "y", "type": ["null", "bytes"], "default": null}]}}),
                _ => json!({"name": name, "type": "boolean", "default": false}),
            }
        })
        .collect();
    if extra_defaulted_field {
        list.push(json!({"name": "added", "type": "string", "default": ""}));
    }
    json!({"type": "record", "name": "Wide", "namespace": "bench.avro", "fields": list}).to_string()
}

fn parse(text: &str) -> ParsedSchema {
    match ParsedSchema::parse(SchemaType::Avro, text, &[], Validation::Strict, false) {
        Ok(schema) => schema,
        Err(e) => panic!("benchmark schema does not parse: {e}"),
    }
}

fn benches(c: &mut Criterion) {
    let old_text = record(200, false);
    let new_text = record(200, true);

    c.bench_function("avro/parse+stored_text+fingerprint/200_fields", |b| {
        b.iter(|| {
            let parsed = parse(black_box(&old_text));
            Fingerprint::of(SchemaType::Avro, parsed.canonical_text(), &[], None, None)
        })
    });

    let (old, new) = (parse(&old_text), parse(&new_text));
    c.bench_function("avro/compat_backward/200_fields", |b| {
        b.iter(|| compat::check(CompatibilityLevel::Backward, black_box(&new), &[black_box(&old)]))
    });
    c.bench_function("avro/compat_full/200_fields", |b| {
        b.iter(|| compat::check(CompatibilityLevel::Full, black_box(&new), &[black_box(&old)]))
    });
}

criterion_group!(avro, benches);
criterion_main!(avro);
