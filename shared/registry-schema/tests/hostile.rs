//! Hostile input: every class of super-linear schema ("bomb") either gets its correct answer with work
//! linear in its size, or stops at a budget with [`SchemaError::BudgetExceeded`] / [`SchemaError::TooDeep`].
//! Work is asserted in counted units (pairs compared, findings copied, statements), never in time.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use registry_schema::compat::{self, Checked, CompatibilityLevel};
use registry_schema::limits::PROTOBUF_STATEMENT_NODES;
use registry_schema::{Budget, Limits, ParsedSchema, SchemaError, SchemaType, Validation, bombs};

/// Budgets wide enough that only the budget under test can stop a case.
const WIDE: Limits = Limits { max_depth: 100, max_nodes: 10_000_000, max_work: u64::MAX };

fn parse(schema_type: SchemaType, text: &str, limits: &Limits) -> Result<ParsedSchema, SchemaError> {
    ParsedSchema::parse_within(schema_type, text, &[], Validation::Strict, false, limits)
}

fn parsed(schema_type: SchemaType, text: &str) -> ParsedSchema {
    parse(schema_type, text, &WIDE).unwrap_or_else(|e| panic!("{e}: {text:.200}"))
}

/// FULL check of `new` against `old` within `limits`.
fn full(schema_type: SchemaType, (old, new): &(String, String), limits: &Limits) -> Result<Checked, SchemaError> {
    let (old, new) = (parsed(schema_type, old), parsed(schema_type, new));
    compat::check_within(CompatibilityLevel::Full, &new, &[&old], limits)
}

/// The kinds of incompatibility a FULL check of `pair` finds, and the work units it spent.
fn kinds_and_work(schema_type: SchemaType, pair: &(String, String)) -> (Vec<String>, u64) {
    let checked = full(schema_type, pair, &Limits::default()).unwrap();
    (checked.incompatibilities.iter().map(|i| i.kind.as_str().to_string()).collect(), checked.work)
}

/// FULL check of a schema against itself: the answer must be "compatible".
fn itself(schema_type: SchemaType, text: &str) -> Checked {
    let schema = parsed(schema_type, text);
    let checked = compat::check_within(CompatibilityLevel::Full, &schema, &[&schema], &WIDE).unwrap();
    assert!(checked.incompatibilities.is_empty(), "{:?}", checked.incompatibilities.first());
    checked
}

fn over(budget: Budget, limit: u64) -> SchemaError {
    SchemaError::BudgetExceeded { budget, limit }
}

#[test]
fn an_avro_dag_of_depth_22_stops_at_the_work_budget() {
    // Each record uses the next twice: 2^23 findings if copied without bound; the process used to abort.
    let pair = bombs::avro_dag(22);
    assert!(pair.0.len() < 3_000, "a small body: {} bytes", pair.0.len());
    assert_eq!(full(SchemaType::Avro, &pair, &Limits::default()).err(), Some(over(Budget::Work, 200_000)));
}

#[test]
fn an_avro_dag_is_checked_in_work_linear_in_its_depth() {
    let at = |depth| itself(SchemaType::Avro, &bombs::avro_dag(depth).0).work;
    let (ten, twenty) = (at(10), at(20));
    assert!(twenty <= 2 * ten + 10, "depth 10: {ten} units, depth 20: {twenty} units");
    // With a change at the bottom every path reports it (Java's memo repeats findings): 2^(d+1) of them.
    let found = full(SchemaType::Avro, &bombs::avro_dag(8), &WIDE).unwrap();
    assert_eq!(found.incompatibilities.len(), 2 * 2usize.pow(8), "2^8 paths, both directions");
}

#[test]
fn a_json_schema_ref_dag_stops_at_the_work_budget_and_is_linear_when_unchanged() {
    let pair = bombs::json_ref_dag(22);
    assert_eq!(full(SchemaType::Json, &pair, &Limits::default()).err(), Some(over(Budget::Work, 200_000)));
    let at = |depth| itself(SchemaType::Json, &bombs::json_ref_dag(depth).0).work;
    let (ten, twenty) = (at(10), at(20));
    assert!(twenty <= 2 * ten + 10, "depth 10: {ten} units, depth 20: {twenty} units");
}

#[test]
fn a_reordered_union_of_5000_fixed_types_is_matched_by_name() {
    let checked = full(SchemaType::Avro, &bombs::avro_wide_union(5_000), &Limits::default()).unwrap();
    assert!(checked.incompatibilities.is_empty());
    // Pairwise matching compared 25,000,000 pairs; by name each branch is looked up once per direction.
    assert!(checked.work <= 10 * 5_000, "{} units", checked.work);
}

#[test]
fn an_enum_of_60000_symbols_is_checked_by_hash() {
    let (kinds, work) = kinds_and_work(SchemaType::Avro, &bombs::avro_wide_enum(60_000));
    assert_eq!(kinds, ["MISSING_ENUM_SYMBOLS"], "the new enum lacks S0");
    assert!(work <= 10, "symbols are looked up by hash, not charged pairwise: {work} units");
}

#[test]
fn a_json_enum_of_90000_values_is_compared_by_value_in_linear_time() {
    let (kinds, work) = kinds_and_work(SchemaType::Json, &bombs::json_wide_enum(90_000));
    assert_eq!(kinds, ["ENUM_ARRAY_NARROWED"], "7.0 is 7; only 0 is missing");
    assert!(work <= 10, "values are looked up by key, not charged pairwise: {work} units");
}

#[test]
fn integers_beyond_an_f64_are_different_schemas() {
    let (old, new) = bombs::json_long_integer_const();
    assert_ne!(parsed(SchemaType::Json, &old).canonical_text(), parsed(SchemaType::Json, &new).canonical_text());
    let checked = full(SchemaType::Json, &(old, new), &Limits::default()).unwrap();
    assert!(!checked.incompatibilities.is_empty(), "a different const is a change");
}

#[test]
fn a_wide_one_of_stops_at_the_work_budget() {
    let limits = Limits { max_work: 20_000, ..Limits::default() };
    assert_eq!(full(SchemaType::Json, &bombs::json_wide_one_of(300), &limits).err(), Some(over(Budget::Work, 20_000)));
    let small = full(SchemaType::Json, &bombs::json_wide_one_of(20), &WIDE).unwrap();
    assert!(!small.incompatibilities.is_empty());
}

#[test]
fn protobuf_files_of_40000_statements_are_refused_before_the_compiler_runs() {
    // Each statement weighs eight nodes (its parse and link cost next to a JSON value): 10,000 mutually
    // referencing messages (three fields each) and one message of 40,000 fields are both refused in one
    // scan of the text under the default budget, instead of peaking at 200-280 MB in the compiler.
    let limits = Limits::default();
    let (mutual, _) = bombs::protobuf_mutual_messages(10_000);
    assert_eq!(parse(SchemaType::Protobuf, &mutual, &limits).err(), Some(over(Budget::Nodes, 100_000)));
    let (wide, _) = bombs::protobuf_wide_message(40_000);
    assert_eq!(parse(SchemaType::Protobuf, &wide, &limits).err(), Some(over(Budget::Nodes, 100_000)));
    // The largest message that fits: `syntax`, `package`, the block and 12,497 fields are 12,500 statements.
    let (largest, _) = bombs::protobuf_wide_message(12_497);
    assert!(parse(SchemaType::Protobuf, &largest, &limits).is_ok());
    let (one_more, _) = bombs::protobuf_wide_message(12_498);
    assert_eq!(parse(SchemaType::Protobuf, &one_more, &limits).err(), Some(over(Budget::Nodes, 100_000)));
}

#[test]
fn a_large_real_world_shaped_protobuf_file_is_accepted_and_checked() {
    // 1,000 messages of eight fields (8,000 fields; nine in the new text), 100 enums and 500 rpcs:
    // 11,404 statements (12,404 in the new text, 99,232 nodes).
    let pair = bombs::protobuf_large_api(1_000);
    let limits = Limits::default();
    let old = parse(SchemaType::Protobuf, &pair.0, &limits).unwrap_or_else(|e| panic!("{e}"));
    let new = parse(SchemaType::Protobuf, &pair.1, &limits).unwrap_or_else(|e| panic!("{e}"));
    let checked = compat::check_within(CompatibilityLevel::Full, &new, &[&old], &limits).unwrap();
    assert!(checked.incompatibilities.is_empty(), "{:?}", checked.incompatibilities.first());
    assert!(old.canonical_text().contains("message Resource999 {"));
}

#[test]
fn protobuf_messages_and_fields_are_checked_in_linear_work() {
    let messages = |n| full(SchemaType::Protobuf, &bombs::protobuf_mutual_messages(n), &WIDE).unwrap().work;
    let (hundred, four_hundred) = (messages(100), messages(400));
    assert!(four_hundred <= 5 * hundred, "100 messages: {hundred} units, 400: {four_hundred}");
    let fields = |n| full(SchemaType::Protobuf, &bombs::protobuf_wide_message(n), &WIDE).unwrap().work;
    let (small, large) = (fields(500), fields(2_000));
    assert!(large <= 5 * small, "500 fields: {small} units, 2,000: {large}");
}

#[test]
fn the_budget_message_names_the_budget_and_its_variable() {
    let message = over(Budget::Nodes, 10).to_string();
    assert!(message.contains("schema node budget of 10") && message.contains("REGISTRY_SCHEMA_MAX_NODES"));
    assert!(message.contains("a Protobuf statement or block 8"), "what a Protobuf statement weighs: {message}");
    let message = SchemaError::TooDeep { limit: 5 }.to_string();
    assert!(message.contains("REGISTRY_SCHEMA_MAX_DEPTH"), "{message}");
}

/// A schema of `schema_type` nested `depth` levels deep.
fn nested(schema_type: SchemaType, depth: usize) -> String {
    match schema_type {
        SchemaType::Avro => {
            let mut text = r#""int""#.to_string();
            for _ in 0..depth {
                text = format!(r#"{{"type":"array","items":{text}}}"#);
            }
            text
        }
        SchemaType::Json => {
            let mut text = r#"{"type":"integer"}"#.to_string();
            for _ in 0..depth {
                text = format!(r#"{{"type":"array","items":{text}}}"#);
            }
            text
        }
        SchemaType::Protobuf => {
            let mut body = String::from("int32 x = 1;");
            for level in (0..depth).rev() {
                body = format!("message M{level} {{ {body} }}");
            }
            format!("syntax = \"proto3\";\n{body}\n")
        }
    }
}

fn any_type() -> impl Strategy<Value = SchemaType> {
    prop_oneof![Just(SchemaType::Avro), Just(SchemaType::Json), Just(SchemaType::Protobuf)]
}

/// The boundary the property below reaches only by chance: nesting exactly at the limit parses,
/// one level more is too deep.
#[test]
fn nesting_at_the_depth_limit_parses_and_one_more_level_does_not() {
    for (schema_type, levels_per_depth) in [(SchemaType::Avro, 0), (SchemaType::Json, 1), (SchemaType::Protobuf, 0)] {
        let limit = 20;
        let at_limit = nested(schema_type, limit - levels_per_depth);
        let limits = Limits { max_depth: limit, ..WIDE };
        assert!(parse(schema_type, &at_limit, &limits).is_ok(), "{schema_type} at the limit");
        let deeper = nested(schema_type, limit + 1 - levels_per_depth);
        assert_eq!(parse(schema_type, &deeper, &limits).err(), Some(SchemaError::TooDeep { limit }), "{schema_type}");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn deep_schemas_parse_or_stop_at_the_depth_budget(schema_type in any_type(), depth in 1usize..200, limit in 1usize..100) {
        let limits = Limits { max_depth: limit, ..WIDE };
        let outcome = parse(schema_type, &nested(schema_type, depth), &limits);
        // Nesting levels of the text: one object (Protobuf: one block) per level, and JSON Schema's
        // innermost `{"type":"integer"}` is one more (Avro's innermost `"int"` is a string).
        let levels = if schema_type == SchemaType::Json { depth + 1 } else { depth };
        let effective = if schema_type == SchemaType::Protobuf { limit.min(64) } else { limit };
        match outcome {
            Err(SchemaError::TooDeep { limit }) => prop_assert!(levels > effective && limit == effective),
            // protox's own guard on nested messages (32 levels) answers first for Protobuf.
            Err(SchemaError::Parse { schema_type: SchemaType::Protobuf, reason }) => {
                prop_assert!(levels >= 32 && reason.contains("recursion limit"), "{}", reason)
            }
            other => prop_assert!(levels <= effective && other.is_ok(), "{:?}", other.err()),
        }
    }

    #[test]
    fn protobuf_statements_are_counted_exactly(messages in 1usize..200, max_nodes in 1u64..1_000) {
        let (text, _) = bombs::protobuf_mutual_messages(messages);
        // `syntax` and `package`, then per message its block and three fields.
        let statements = (2 + 4 * messages as u64) * PROTOBUF_STATEMENT_NODES;
        let outcome = parse(SchemaType::Protobuf, &text, &Limits { max_nodes, ..WIDE });
        if statements > max_nodes {
            prop_assert_eq!(outcome.err(), Some(over(Budget::Nodes, max_nodes)));
        } else {
            prop_assert!(outcome.is_ok(), "{:?}", outcome.err());
        }
    }

    #[test]
    fn json_values_of_wide_schemas_are_counted_against_the_node_budget(symbols in 1usize..3_000, max_nodes in 1u64..6_000) {
        let (avro, _) = bombs::avro_wide_enum(symbols);
        // The object, its three values and the symbols.
        let values = 4 + symbols as u64;
        let outcome = parse(SchemaType::Avro, &avro, &Limits { max_nodes, ..WIDE });
        prop_assert_eq!(outcome.is_ok(), values <= max_nodes, "{:?}", outcome.err());
    }

    #[test]
    fn dags_in_both_json_formats_cost_work_linear_in_depth(depth in 1usize..30) {
        for schema_type in [SchemaType::Avro, SchemaType::Json] {
            let text = if schema_type == SchemaType::Avro { bombs::avro_dag(depth).0 } else { bombs::json_ref_dag(depth).0 };
            let work = itself(schema_type, &text).work;
            prop_assert!(work <= 40 * (depth as u64 + 1), "{} depth {}: {} units", schema_type, depth, work);
        }
    }

    #[test]
    fn a_changed_dag_answers_in_full_or_stops_at_the_budget(depth in 1usize..24, max_work in 1u64..50_000) {
        let limits = Limits { max_work, ..Limits::default() };
        for schema_type in [SchemaType::Avro, SchemaType::Json] {
            let pair = if schema_type == SchemaType::Avro { bombs::avro_dag(depth) } else { bombs::json_ref_dag(depth) };
            match full(schema_type, &pair, &limits) {
                Ok(checked) => {
                    prop_assert!(checked.work <= max_work);
                    prop_assert!(!checked.incompatibilities.is_empty());
                }
                Err(error) => prop_assert_eq!(error, over(Budget::Work, max_work)),
            }
        }
    }

    #[test]
    fn unions_and_enums_cost_work_linear_in_their_width(width in 2usize..1_500) {
        let union = full(SchemaType::Avro, &bombs::avro_wide_union(width), &WIDE).unwrap();
        prop_assert!(union.incompatibilities.is_empty());
        prop_assert!(union.work <= 10 * width as u64 + 20, "union of {}: {} units", width, union.work);
        let enumeration = full(SchemaType::Avro, &bombs::avro_wide_enum(width), &WIDE).unwrap();
        prop_assert_eq!(enumeration.incompatibilities.len(), 1);
        prop_assert!(enumeration.work <= 10, "enum of {}: {} units", width, enumeration.work);
    }

    #[test]
    fn one_of_pairs_are_bounded_by_the_square_of_the_branches(branches in 1usize..40) {
        let checked = full(SchemaType::Json, &bombs::json_wide_one_of(branches), &WIDE).unwrap();
        let n = branches as u64;
        prop_assert!(checked.work <= 2 * (4 * n * n + 4 * n + 4), "{} branches: {} units", branches, checked.work);
    }
}
