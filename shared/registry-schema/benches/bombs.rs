//! Each class of hostile schema against its budget (release): the time to the answer (a correct one when
//! the input fits, 42201 when it does not) and, printed once per case, the work units counted.

use criterion::{Criterion, black_box, criterion_group, criterion_main};
use registry_schema::compat::{self, CompatibilityLevel};
use registry_schema::{Limits, ParsedSchema, SchemaType, Validation, bombs};

/// Parses and checks `new` against `old` (FULL) within the default budgets; the outcome for the log line.
fn check(schema_type: SchemaType, (old, new): &(String, String)) -> String {
    let limits = Limits::default();
    let parse = |text: &str| ParsedSchema::parse_within(schema_type, text, &[], Validation::Strict, false, &limits);
    match (parse(old), parse(new)) {
        (Ok(old), Ok(new)) => match compat::check_within(CompatibilityLevel::Full, &new, &[&old], &limits) {
            Ok(checked) => format!("{} findings, {} work units", checked.incompatibilities.len(), checked.work),
            Err(error) => error.to_string(),
        },
        (Err(error), _) | (_, Err(error)) => error.to_string(),
    }
}

fn benches(c: &mut Criterion) {
    let cases: [(&str, SchemaType, (String, String)); 11] = [
        ("avro_dag/22", SchemaType::Avro, bombs::avro_dag(22)),
        ("avro_union/5000", SchemaType::Avro, bombs::avro_wide_union(5_000)),
        ("avro_enum/60000", SchemaType::Avro, bombs::avro_wide_enum(60_000)),
        ("avro_enum/100000", SchemaType::Avro, bombs::avro_wide_enum(100_000)),
        ("json_ref_dag/22", SchemaType::Json, bombs::json_ref_dag(22)),
        ("json_one_of/300", SchemaType::Json, bombs::json_wide_one_of(300)),
        ("json_enum/90000", SchemaType::Json, bombs::json_wide_enum(90_000)),
        ("json_long_integer_const", SchemaType::Json, bombs::json_long_integer_const()),
        ("protobuf_messages/10000", SchemaType::Protobuf, bombs::protobuf_mutual_messages(10_000)),
        ("protobuf_fields/40000", SchemaType::Protobuf, bombs::protobuf_wide_message(40_000)),
        ("protobuf_fields/20000", SchemaType::Protobuf, bombs::protobuf_wide_message(20_000)),
    ];
    let mut group = c.benchmark_group("bombs");
    group.sample_size(10);
    for (name, schema_type, pair) in &cases {
        println!("bombs/{name}: {}", check(*schema_type, pair));
        group.bench_function(*name, |b| b.iter(|| check(*schema_type, black_box(pair))));
    }
    group.finish();
}

criterion_group!(bombs_group, benches);
criterion_main!(bombs_group);
