//! Avro schemas: parsing and validation with Java Avro's rules, the stored text Confluent
//! keeps (Java's `Schema.toString`), Confluent's normal form, and the parsed
//! `apache_avro::Schema` the compatibility rules walk.

mod ast;
pub mod compat;
mod defaults;
mod json;
mod normalize;
mod tags;
mod writer;

use crate::limits::{Budget, Limits, Meter};
use crate::{Dependency, ParseOptions, SchemaError, SchemaFormat, SchemaType, Validation};
use apache_avro::Schema;
use ast::{Body, Node, Parser};
use std::collections::HashMap;

/// A parsed Avro schema and its stored text.
#[derive(Debug, Clone)]
pub struct AvroSchema {
    canonical: String,
    /// The text with every referenced type written in full (`?format=resolved`), when the schema
    /// has references; without them it is the stored text.
    resolved: Option<String>,
    schema: Schema,
    named: HashMap<String, Schema>,
}

fn err(reason: impl Into<String>) -> SchemaError {
    SchemaError::parse(SchemaType::Avro, reason)
}

/// Parses JSON text within `limits`, its values charged to `nodes`.
fn parse_json(text: &str, limits: &Limits, nodes: &mut Meter) -> Result<crate::json_value::Value, SchemaError> {
    crate::json_text::parse(text, SchemaType::Avro, limits, nodes).map_err(|e| match e {
        SchemaError::Parse { reason, .. } => err(reason.replacen("not valid JSON", "Invalid JSON", 1)),
        other => other,
    })
}

/// Parses JSON text the parser wrote itself (already within limits).
fn parse_own_json(text: &str) -> Result<serde_json::Value, SchemaError> {
    serde_json::from_str(text).map_err(|e| err(format!("Invalid JSON: {e}")))
}

impl SchemaFormat for AvroSchema {
    /// Parses and validates `text` with `dependencies` in scope (see [`crate::ParsedSchema::parse`]),
    /// within `options.limits`: nesting depth of each text, JSON values of the text and its
    /// dependencies together against the node budget.
    ///
    /// Dependencies are parsed first, in order, into one namespace of named types (as Confluent
    /// does with one Java `Schema.Parser`); redefining one of their types is an error. Their
    /// top-level named types are written by name only in the stored text; their nested types,
    /// as in Java, are written in full where this schema first uses them. `Validation::Strict`
    /// also checks field defaults (see `defaults`); stored and imported schemas use `Lenient`.
    /// `normalize` stores Confluent's normal form instead of Java's `toString`.
    fn parse_within(text: &str, dependencies: &[Dependency], options: ParseOptions) -> Result<Self, SchemaError> {
        let mut nodes = options.limits.meter(Budget::Nodes);
        let mut parser = Parser::default();
        let mut dep_roots = Vec::with_capacity(dependencies.len());
        for dep in dependencies {
            if dep.schema_type != SchemaType::Avro {
                return Err(err(format!("reference {} is a {} schema, not AVRO", dep.name, dep.schema_type)));
            }
            let value = parse_json(&dep.schema, &options.limits, &mut nodes).map_err(|e| in_reference(&dep.name, e))?;
            let root = parser.parse_top(&value).map_err(|e| in_reference(&dep.name, e))?;
            dep_roots.push(root);
        }
        let own_from = parser.arena.len();
        let mut known = vec![false; own_from];
        for root in &dep_roots {
            if let Node::Named(index) = root
                && let Some(slot) = known.get_mut(*index)
            {
                *slot = true;
            }
        }
        let value = parse_json(text, &options.limits, &mut nodes)?;
        let root = parser.parse_top(&value)?;
        if options.validation == Validation::Strict {
            defaults::validate(&parser.arena, own_from)?;
        }
        known.resize(parser.arena.len(), false);
        let canonical = if options.normalize {
            normalize::write(&parser.arena, &known, &root)
        } else {
            writer::write(&parser.arena, &known, &root, true)
        };
        let resolved = (!dependencies.is_empty())
            .then(|| writer::write(&parser.arena, &vec![false; parser.arena.len()], &root, true));
        let schema = to_apache(&parser, &root)?;
        let mut named = HashMap::new();
        for dep_root in &dep_roots {
            collect_named(&to_apache(&parser, dep_root)?, &mut named);
        }
        collect_named(&schema, &mut named);
        Ok(AvroSchema { canonical, resolved, schema, named })
    }
}

impl AvroSchema {
    /// Whether a record schema has a field `name` (Confluent's `hasTopLevelField`).
    pub fn has_top_level_field(&self, name: &str) -> bool {
        matches!(&self.schema, Schema::Record(record) if record.fields.iter().any(|field| field.name == name))
    }

    /// The stored text.
    pub fn canonical_text(&self) -> &str {
        &self.canonical
    }

    /// The text Java Avro's `Schema.toString()` writes, Confluent's `?format=resolved`: the types
    /// of the references written in full where first used, instead of by name.
    pub fn resolved_text(&self) -> &str {
        self.resolved.as_deref().unwrap_or(&self.canonical)
    }

    /// The parsed schema. Named types used a second time (or defined in a dependency) appear as
    /// `Schema::Ref`; resolve them with [`AvroSchema::named_types`].
    pub fn schema(&self) -> &Schema {
        &self.schema
    }

    /// Every named type in scope, by full name (`a.b.R`): those defined in this schema and in its
    /// dependencies, so that every `Schema::Ref` reachable from [`AvroSchema::schema`] resolves.
    pub fn named_types(&self) -> &HashMap<String, Schema> {
        &self.named
    }
}

fn in_reference(name: &str, error: SchemaError) -> SchemaError {
    match error {
        SchemaError::Parse { reason, .. } => err(format!("reference {name}: {reason}")),
        other => other,
    }
}

/// Builds the apache-avro schema of `root` from a self-contained rendering (dependency types
/// inlined) without defaults, then copies our defaults in: apache-avro's own default checks
/// differ from Java's, and lenient schemas may carry defaults Java would reject. If apache-avro
/// refuses a logical type Java would ignore, the logical types are dropped and it is retried.
fn to_apache(parser: &Parser, root: &Node) -> Result<Schema, SchemaError> {
    let text = writer::write(&parser.arena, &vec![false; parser.arena.len()], root, false);
    let mut schema = match Schema::parse_str(&text) {
        Ok(schema) => schema,
        Err(first) => {
            let mut value = parse_own_json(&text)?;
            strip_logical_types(&mut value);
            Schema::parse(&value).map_err(|_| err(first.to_string()))?
        }
    };
    patch_defaults(parser, &mut schema);
    Ok(schema)
}

fn strip_logical_types(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Object(map) => {
            map.shift_remove("logicalType");
            map.values_mut().for_each(strip_logical_types);
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(strip_logical_types),
        _ => {}
    }
}

/// Sets each record field's `default` from our tree (matched by record full name and field name).
fn patch_defaults(parser: &Parser, schema: &mut Schema) {
    match schema {
        Schema::Record(record) => {
            let def = parser.lookup_top(&record.name.fullname(None)).and_then(|i| parser.arena.get(i));
            let ours: HashMap<&str, &ast::Field> = match def.map(|d| &d.body) {
                Some(Body::Record { fields, .. }) => fields.iter().map(|f| (f.name.as_str(), f)).collect(),
                _ => HashMap::new(),
            };
            for field in &mut record.fields {
                if def.is_some_and(|d| matches!(d.body, Body::Record { .. })) {
                    field.default =
                        ours.get(field.name.as_str()).and_then(|f| f.default.as_ref()).map(|d| d.to_serde());
                }
                patch_defaults(parser, &mut field.schema);
            }
        }
        Schema::Array(array) => patch_defaults(parser, &mut array.items),
        Schema::Map(map) => patch_defaults(parser, &mut map.types),
        Schema::Union(union) => {
            let mut branches = union.variants().to_vec();
            branches.iter_mut().for_each(|b| patch_defaults(parser, b));
            if let Ok(patched) = apache_avro::schema::UnionSchema::new(branches) {
                *union = patched;
            }
        }
        _ => {}
    }
}

/// Adds every record, enum and fixed definition reachable from `schema` to `out`.
fn collect_named(schema: &Schema, out: &mut HashMap<String, Schema>) {
    match schema {
        Schema::Record(r) => {
            out.insert(r.name.fullname(None), schema.clone());
            for field in &r.fields {
                collect_named(&field.schema, out);
            }
        }
        Schema::Enum(e) => {
            out.insert(e.name.fullname(None), schema.clone());
        }
        Schema::Fixed(f) | Schema::Duration(f) => {
            out.insert(f.name.fullname(None), schema.clone());
        }
        Schema::Decimal(d) => {
            if let apache_avro::schema::InnerDecimalSchema::Fixed(f) = &d.inner {
                out.insert(f.name.fullname(None), schema.clone());
            }
        }
        Schema::Uuid(apache_avro::schema::UuidSchema::Fixed(f)) => {
            out.insert(f.name.fullname(None), schema.clone());
        }
        Schema::Array(a) => collect_named(&a.items, out),
        Schema::Map(m) => collect_named(&m.types, out),
        Schema::Union(u) => {
            for branch in u.variants() {
                collect_named(branch, out);
            }
        }
        _ => {}
    }
}
