//! Property-based hostile input: random graphs of named types (Avro record DAGs with unions, enums,
//! arrays and maps; JSON Schema `$ref` graphs with cycles and `oneOf`; Protobuf messages referring to
//! each other, with oneofs, maps and enums), each paired with a changed copy. For every graph and every
//! budget, a parse either succeeds or stops at the node budget, and a compatibility check either gives
//! the answer it gives without a budget, in the same counted work, never more than the budget, or stops
//! with 42201 naming the work budget because the unbudgeted check needs more. Work is counted, not timed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use proptest::prelude::*;
use registry_schema::compat::{self, Checked, CompatibilityLevel};
use registry_schema::{Budget, Limits, ParsedSchema, SchemaError, SchemaType, Validation};

/// Budgets wide enough that nothing but the budget under test stops a case.
const WIDE: Limits = Limits { max_depth: 100, max_nodes: 10_000_000, max_work: u64::MAX };

/// What one field of a generated type is: the target indexes are reduced modulo the number of types
/// the format may refer to from there.
#[derive(Debug, Clone)]
enum FieldKind {
    /// A number, or a string where the changed copy turns it (`changed`).
    Scalar,
    Ref(usize),
    Optional(usize),
    List(usize),
    Map(usize),
    /// An enum of this many symbols; the changed copy drops the last one.
    Enum(usize),
    OneOf(Vec<usize>),
}

/// A field and whether the changed copy changes it.
type Field = (FieldKind, bool);

/// Types, each a list of fields.
type Graph = Vec<Vec<Field>>;

fn field_kind() -> impl Strategy<Value = FieldKind> {
    prop_oneof![
        3 => Just(FieldKind::Scalar),
        3 => any::<usize>().prop_map(FieldKind::Ref),
        1 => any::<usize>().prop_map(FieldKind::Optional),
        1 => any::<usize>().prop_map(FieldKind::List),
        1 => any::<usize>().prop_map(FieldKind::Map),
        1 => (1usize..6).prop_map(FieldKind::Enum),
        1 => prop::collection::vec(any::<usize>(), 1..4).prop_map(FieldKind::OneOf),
    ]
}

fn graph() -> impl Strategy<Value = Graph> {
    prop::collection::vec(prop::collection::vec((field_kind(), prop::bool::weighted(0.2)), 1..6), 1..12)
}

/// The fields of one type in the copy being rendered: index, kind, and whether this copy changes it.
fn fields_of(fields: &[Field], changed: bool) -> impl Iterator<Item = (usize, &FieldKind, bool)> {
    fields.iter().enumerate().map(move |(f, (kind, change))| (f, kind, changed && *change))
}

/// Symbols an enum of `symbols` has in the copy: the changed one drops the last (keeping one).
fn enum_symbols(symbols: usize, change: bool) -> usize {
    if change { symbols.saturating_sub(1).max(1) } else { symbols }
}

/// Avro: a top-level union defining `R{n-1}` down to `R0`, so a record refers by name only to itself and
/// to the records after it (defined before it): a DAG with self-loops, shared subtrees everywhere.
fn avro(graph: &Graph, changed: bool) -> String {
    let n = graph.len();
    let mut records = Vec::new();
    for (i, fields) in graph.iter().enumerate().rev() {
        let target = |raw: &usize| format!("\"R{}\"", i + raw % (n - i));
        let rendered: Vec<String> = fields_of(fields, changed)
            .map(|(f, kind, change)| {
                let ty = match kind {
                    FieldKind::Scalar => (if change { "\"string\"" } else { "\"int\"" }).to_string(),
                    FieldKind::Ref(raw) => target(raw),
                    FieldKind::Optional(raw) if change => format!("[{},\"null\"]", target(raw)),
                    FieldKind::Optional(raw) => format!("[\"null\",{}]", target(raw)),
                    FieldKind::List(raw) => format!(r#"{{"type":"array","items":{}}}"#, target(raw)),
                    FieldKind::Map(raw) => format!(r#"{{"type":"map","values":{}}}"#, target(raw)),
                    FieldKind::Enum(symbols) => {
                        let count = enum_symbols(*symbols, change);
                        let list: Vec<String> = (0..count).map(|s| format!("\"S{s}\"")).collect();
                        format!(r#"{{"type":"enum","name":"E{i}_{f}","symbols":[{}]}}"#, list.join(","))
                    }
                    FieldKind::OneOf(raws) => {
                        let mut names: Vec<String> = raws.iter().map(target).collect();
                        names.sort();
                        names.dedup();
                        if change {
                            names.reverse();
                        }
                        format!("[\"null\",{}]", names.join(","))
                    }
                };
                format!(r#"{{"name":"f{f}","type":{ty}}}"#)
            })
            .collect();
        records.push(format!(r#"{{"type":"record","name":"R{i}","fields":[{}]}}"#, rendered.join(",")));
    }
    format!("[{}]", records.join(","))
}

/// JSON Schema: definitions `d0 .. d{n-1}` whose properties refer to any definition (cycles included).
fn json(graph: &Graph, changed: bool) -> String {
    let n = graph.len();
    let target = |raw: &usize| format!(r##"{{"$ref":"#/definitions/d{}"}}"##, raw % n);
    let definitions: Vec<String> = graph
        .iter()
        .enumerate()
        .map(|(i, fields)| {
            let properties: Vec<String> = fields_of(fields, changed)
                .map(|(f, kind, change)| {
                    let schema = match kind {
                        FieldKind::Scalar => format!(r#"{{"type":"{}"}}"#, if change { "string" } else { "integer" }),
                        FieldKind::Ref(raw) => target(raw),
                        FieldKind::Optional(raw) => format!(r#"{{"oneOf":[{{"type":"null"}},{}]}}"#, target(raw)),
                        FieldKind::List(raw) => format!(r#"{{"type":"array","items":{}}}"#, target(raw)),
                        FieldKind::Map(raw) => format!(r#"{{"type":"object","additionalProperties":{}}}"#, target(raw)),
                        FieldKind::Enum(symbols) => {
                            let count = enum_symbols(*symbols, change);
                            format!(
                                r#"{{"enum":[{}]}}"#,
                                (0..count).map(|s| s.to_string()).collect::<Vec<_>>().join(",")
                            )
                        }
                        FieldKind::OneOf(raws) => {
                            let mut branches: Vec<String> = raws.iter().map(target).collect();
                            if change {
                                branches.reverse();
                            }
                            format!(r#"{{"oneOf":[{}]}}"#, branches.join(","))
                        }
                    };
                    format!(r#""f{f}":{schema}"#)
                })
                .collect();
            format!(r#""d{i}":{{"type":"object","properties":{{{}}}}}"#, properties.join(","))
        })
        .collect();
    format!(r##"{{"$ref":"#/definitions/d0","definitions":{{{}}}}}"##, definitions.join(","))
}

/// Protobuf: messages `M0 .. M{n-1}` whose fields refer to any message (mutual references included).
fn protobuf(graph: &Graph, changed: bool) -> String {
    let n = graph.len();
    let mut text = String::from("syntax = \"proto3\";\npackage generated;\n");
    for (i, fields) in graph.iter().enumerate() {
        let target = |raw: &usize| format!("M{}", raw % n);
        let mut body = String::new();
        let mut number = 0;
        let mut next = || {
            number += 1;
            number
        };
        for (f, kind, change) in fields_of(fields, changed) {
            match kind {
                FieldKind::Scalar => {
                    body.push_str(&format!("  {} f{f} = {};\n", if change { "string" } else { "int32" }, next()))
                }
                FieldKind::Ref(raw) => body.push_str(&format!("  {} f{f} = {};\n", target(raw), next())),
                FieldKind::Optional(raw) => body.push_str(&format!("  optional {} f{f} = {};\n", target(raw), next())),
                FieldKind::List(raw) => body.push_str(&format!("  repeated {} f{f} = {};\n", target(raw), next())),
                FieldKind::Map(raw) => body.push_str(&format!("  map<string, {}> f{f} = {};\n", target(raw), next())),
                FieldKind::Enum(symbols) => {
                    let count = enum_symbols(*symbols, change);
                    let values: Vec<String> = (0..count).map(|s| format!("E{i}_{f}_V{s} = {s};")).collect();
                    body.push_str(&format!("  enum E{f} {{ {} }}\n  E{f} f{f} = {};\n", values.join(" "), next()));
                }
                FieldKind::OneOf(raws) => {
                    let mut branches: Vec<String> = raws.iter().map(target).collect();
                    if change {
                        branches.reverse();
                    }
                    let members: Vec<String> =
                        branches.iter().enumerate().map(|(b, ty)| format!("{ty} f{f}_{b} = {};", next())).collect();
                    body.push_str(&format!("  oneof f{f} {{ {} }}\n", members.join(" ")));
                }
            }
        }
        text.push_str(&format!("message M{i} {{\n{body}}}\n"));
    }
    text
}

fn render(schema_type: SchemaType, graph: &Graph, changed: bool) -> String {
    match schema_type {
        SchemaType::Avro => avro(graph, changed),
        SchemaType::Json => json(graph, changed),
        SchemaType::Protobuf => protobuf(graph, changed),
    }
}

fn parse(schema_type: SchemaType, text: &str, limits: &Limits) -> Result<ParsedSchema, SchemaError> {
    ParsedSchema::parse_within(schema_type, text, &[], Validation::Lenient, false, limits)
}

fn check(new: &ParsedSchema, old: &ParsedSchema, limits: &Limits) -> Result<Checked, SchemaError> {
    compat::check_within(CompatibilityLevel::Full, new, &[old], limits)
}

fn any_type() -> impl Strategy<Value = SchemaType> {
    prop_oneof![Just(SchemaType::Avro), Just(SchemaType::Json), Just(SchemaType::Protobuf)]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 96, ..ProptestConfig::default() })]

    #[test]
    fn generated_graphs_parse_or_stop_at_the_node_budget(
        schema_type in any_type(), graph in graph(), max_nodes in 1u64..400,
    ) {
        let text = render(schema_type, &graph, false);
        let unbudgeted = parse(schema_type, &text, &WIDE);
        prop_assert!(unbudgeted.is_ok(), "{:?}\n{}", unbudgeted.err(), text);
        match parse(schema_type, &text, &Limits { max_nodes, ..WIDE }) {
            Ok(_) => {}
            Err(error) => {
                prop_assert_eq!(&error, &SchemaError::BudgetExceeded { budget: Budget::Nodes, limit: max_nodes });
                prop_assert!(error.to_string().contains("REGISTRY_SCHEMA_MAX_NODES"));
            }
        }
    }

    #[test]
    fn generated_graphs_are_compatible_with_themselves(schema_type in any_type(), graph in graph()) {
        let text = render(schema_type, &graph, false);
        let schema = parse(schema_type, &text, &WIDE).unwrap();
        let checked = check(&schema, &schema, &WIDE).unwrap();
        prop_assert!(checked.incompatibilities.is_empty(), "{:?}\n{}", checked.incompatibilities.first(), text);
    }

    #[test]
    fn a_budget_never_changes_the_answer_only_stops_it(
        schema_type in any_type(), graph in graph(), max_work in 1u64..300,
    ) {
        let (old, new) = (render(schema_type, &graph, false), render(schema_type, &graph, true));
        let (old, new) = (parse(schema_type, &old, &WIDE).unwrap(), parse(schema_type, &new, &WIDE).unwrap());
        let unbudgeted = check(&new, &old, &WIDE).unwrap();
        match check(&new, &old, &Limits { max_work, ..WIDE }) {
            Ok(checked) => {
                prop_assert!(checked.work <= max_work, "{} units over a budget of {}", checked.work, max_work);
                prop_assert_eq!(checked.work, unbudgeted.work);
                prop_assert_eq!(checked.incompatibilities, unbudgeted.incompatibilities);
            }
            Err(error) => {
                prop_assert_eq!(&error, &SchemaError::BudgetExceeded { budget: Budget::Work, limit: max_work });
                prop_assert!(error.to_string().contains("REGISTRY_SCHEMA_MAX_WORK"));
                prop_assert!(unbudgeted.work > max_work, "stopped at {} though the check needs {}", max_work, unbudgeted.work);
            }
        }
    }
}
