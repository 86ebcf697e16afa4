//! Avro schema JSON → our own tree, following Java Avro 1.11's `Schema.parse` rules (names,
//! namespaces, reserved keys, property order), so the stored text can be written as Java does.

use crate::json_value::{Map, Number, Value};
use crate::{SchemaError, SchemaType};
use std::collections::{HashMap, HashSet};

/// Deepest schema nesting accepted (serde_json already stops at 128 JSON levels).
pub(crate) const MAX_DEPTH: usize = 100;

const PRIMITIVES: [&str; 8] = ["null", "boolean", "int", "long", "float", "double", "bytes", "string"];
const SCHEMA_RESERVED: [&str; 10] =
    ["doc", "fields", "items", "name", "namespace", "size", "symbols", "values", "type", "aliases"];
const FIELD_RESERVED: [&str; 6] = ["default", "doc", "name", "order", "type", "aliases"];

/// Custom properties in input order.
pub(crate) type Props = Vec<(String, Value)>;

/// One schema position. Named types live in the [`Parser`] arena and are referred to by index.
#[derive(Debug, Clone)]
pub(crate) enum Node {
    Primitive { kind: &'static str, props: Props },
    Named(usize),
    Array { items: Box<Node>, props: Props },
    Map { values: Box<Node>, props: Props },
    Union(Vec<Node>),
}

/// A record, enum or fixed definition.
#[derive(Debug, Clone)]
pub(crate) struct NamedDef {
    pub name: String,
    pub space: Option<String>,
    pub doc: Option<String>,
    /// Aliases as (name, namespace), the namespace defaulting to this type's.
    pub aliases: Vec<(String, Option<String>)>,
    pub props: Props,
    pub body: Body,
}

impl NamedDef {
    /// `space.name`, or `name` without a namespace.
    pub fn full_name(&self) -> String {
        full_name(&self.name, self.space.as_deref())
    }
}

/// What kind of named type, with its parts.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    Record { is_error: bool, fields: Vec<Field> },
    Enum { symbols: Vec<String>, default: Option<String> },
    Fixed { size: i64 },
}

/// A record field.
#[derive(Debug, Clone)]
pub(crate) struct Field {
    pub name: String,
    pub node: Node,
    pub doc: Option<String>,
    pub default: Option<Value>,
    /// `descending` or `ignore`; `None` for the default ascending order.
    pub order: Option<String>,
    pub aliases: Vec<String>,
    pub props: Props,
}

pub(crate) fn full_name(name: &str, space: Option<&str>) -> String {
    match space {
        Some(space) => format!("{space}.{name}"),
        None => name.to_string(),
    }
}

fn err(reason: impl Into<String>) -> SchemaError {
    SchemaError::parse(SchemaType::Avro, reason)
}

/// Java's `validateName`: a letter or `_`, then letters, digits or `_`.
pub(crate) fn validate_name(name: &str) -> Result<(), SchemaError> {
    let mut chars = name.chars();
    match chars.next() {
        None => return Err(err("Empty name")),
        Some(c) if !(c.is_alphabetic() || c == '_') => return Err(err(format!("Illegal initial character: {name}"))),
        _ => {}
    }
    if chars.any(|c| !(c.is_alphanumeric() || c == '_')) {
        return Err(err(format!("Illegal character in: {name}")));
    }
    Ok(())
}

/// Splits a possibly qualified name as Java's `Name(name, space)` does; empty namespace = none.
fn split_name(name: &str, space: Option<&str>) -> Result<(String, Option<String>), SchemaError> {
    let (short, space) = match name.rsplit_once('.') {
        Some((space, short)) => (short, Some(space)),
        None => (name, space),
    };
    validate_name(short)?;
    let space = space.filter(|s| !s.is_empty()).map(str::to_string);
    if let Some(space) = &space {
        for part in space.split('.') {
            validate_name(part).map_err(|_| err(format!("Illegal namespace: {space}")))?;
        }
    }
    Ok((short.to_string(), space))
}

fn text<'a>(obj: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    obj.get(key).and_then(Value::as_str)
}

/// Parses schemas into one arena of named types, as one Java `Schema.Parser` does.
#[derive(Debug, Default)]
pub(crate) struct Parser {
    pub arena: Vec<NamedDef>,
    names: HashMap<String, usize>,
    space: Option<String>,
    depth: usize,
}

impl Parser {
    /// The arena index of the type `name` would resolve to from the top level, if defined.
    pub fn lookup_top(&self, name: &str) -> Option<usize> {
        self.names.get(name).copied()
    }

    /// Parses one top-level schema (namespace reset to none).
    pub fn parse_top(&mut self, value: &Value) -> Result<Node, SchemaError> {
        self.space = None;
        self.depth = 0;
        self.parse(value)
    }

    /// Java `Names.get`: primitive, then `name` in the current namespace, then as written.
    fn resolve(&self, name: &str) -> Option<Node> {
        if let Some(kind) = PRIMITIVES.iter().find(|p| **p == name) {
            return Some(Node::Primitive { kind, props: Vec::new() });
        }
        let in_space = if name.contains('.') { name.to_string() } else { full_name(name, self.space.as_deref()) };
        self.names.get(&in_space).or_else(|| self.names.get(name)).map(|i| Node::Named(*i))
    }

    fn parse(&mut self, value: &Value) -> Result<Node, SchemaError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(SchemaError::TooDeep { limit: MAX_DEPTH });
        }
        let result = match value {
            Value::String(name) => self.resolve(name).ok_or_else(|| unresolved(name)),
            Value::Object(obj) => self.parse_object(obj),
            Value::Array(branches) => self.parse_union(branches),
            other => Err(err(format!("Schema not yet supported: {other}"))),
        };
        self.depth -= 1;
        result
    }

    fn parse_union(&mut self, branches: &[Value]) -> Result<Node, SchemaError> {
        let mut nodes = Vec::with_capacity(branches.len());
        let mut seen: HashSet<String> = HashSet::with_capacity(branches.len());
        for branch in branches {
            let node = self.parse(branch)?;
            let key = match &node {
                Node::Union(_) => return Err(err("Nested union: unions may not immediately contain other unions")),
                Node::Primitive { kind, .. } => (*kind).to_string(),
                Node::Array { .. } => "array".to_string(),
                Node::Map { .. } => "map".to_string(),
                Node::Named(i) => self.arena[*i].full_name(),
            };
            if !seen.insert(key.clone()) {
                return Err(err(format!("Duplicate in union: {key}")));
            }
            nodes.push(node);
        }
        Ok(Node::Union(nodes))
    }

    fn parse_object(&mut self, obj: &Map<String, Value>) -> Result<Node, SchemaError> {
        let type_name = text(obj, "type").ok_or_else(|| err(format!("No type: {}", Value::Object(obj.clone()))))?;
        let props = |reserved: &[&str]| -> Props {
            obj.iter().filter(|(k, _)| !reserved.contains(&k.as_str())).map(|(k, v)| (k.clone(), v.clone())).collect()
        };
        if let Some(kind) = PRIMITIVES.iter().find(|p| **p == type_name) {
            return Ok(Node::Primitive { kind, props: props(&SCHEMA_RESERVED) });
        }
        match type_name {
            "record" | "error" | "enum" | "fixed" => self.parse_named(obj, type_name),
            "array" => {
                let items = obj.get("items").ok_or_else(|| err("Array has no items type"))?;
                let items = self.parse(items)?;
                Ok(Node::Array { items: Box::new(items), props: props(&SCHEMA_RESERVED) })
            }
            "map" => {
                let values = obj.get("values").ok_or_else(|| err("Map has no values type"))?;
                let values = self.parse(values)?;
                Ok(Node::Map { values: Box::new(values), props: props(&SCHEMA_RESERVED) })
            }
            other => match self.resolve(other) {
                Some(node @ Node::Named(_)) => Ok(node),
                _ if split_name(other, None).is_ok() => Err(unresolved(other)),
                _ => Err(err(format!("Type not supported: {other}"))),
            },
        }
    }

    fn parse_named(&mut self, obj: &Map<String, Value>, type_name: &str) -> Result<Node, SchemaError> {
        let raw_name = text(obj, "name").ok_or_else(|| err(format!("No name in schema of type {type_name}")))?;
        let space = text(obj, "namespace").map(str::to_string).or_else(|| self.space.clone());
        let (name, space) = split_name(raw_name, space.as_deref())?;
        let full = full_name(&name, space.as_deref());
        if PRIMITIVES.contains(&full.as_str()) {
            return Err(err(format!("Schemas may not be named after primitives: {full}")));
        }
        if self.names.contains_key(&full) {
            return Err(err(format!("Can't redefine: {full}")));
        }
        let aliases = parse_alias_list(obj)?
            .into_iter()
            .map(|alias| split_name(&alias, space.as_deref()))
            .collect::<Result<Vec<_>, _>>()?;
        let aliases = dedupe(aliases);
        let doc = text(obj, "doc").map(str::to_string);
        let index = self.arena.len();
        let placeholder = Body::Fixed { size: 0 };
        self.arena.push(NamedDef { name, space: space.clone(), doc, aliases, props: Vec::new(), body: placeholder });
        self.names.insert(full.clone(), index);
        let saved = std::mem::replace(&mut self.space, space);
        let body = match type_name {
            "enum" => parse_enum(obj, &full),
            "fixed" => parse_fixed(obj, &full),
            _ => self.parse_fields(obj, &full).map(|fields| Body::Record { is_error: type_name == "error", fields }),
        };
        self.space = saved;
        let reserved: &[&str] = if type_name == "enum" { &["default"] } else { &[] };
        let props = obj
            .iter()
            .filter(|(k, _)| !SCHEMA_RESERVED.contains(&k.as_str()) && !reserved.contains(&k.as_str()))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        let def = &mut self.arena[index];
        def.body = body?;
        def.props = props;
        Ok(Node::Named(index))
    }

    fn parse_fields(&mut self, obj: &Map<String, Value>, record: &str) -> Result<Vec<Field>, SchemaError> {
        let list = obj
            .get("fields")
            .and_then(Value::as_array)
            .ok_or_else(|| err(format!("Record has no fields: {record}")))?;
        let mut fields: Vec<Field> = Vec::with_capacity(list.len());
        let mut names: HashSet<&str> = HashSet::with_capacity(list.len());
        let empty = Map::new();
        for field in list {
            let field = field.as_object().unwrap_or(&empty);
            let name = text(field, "name").ok_or_else(|| err(format!("No field name in record {record}")))?;
            validate_name(name)?;
            if !names.insert(name) {
                return Err(err(format!("Duplicate field {name} in record {record}")));
            }
            let type_value =
                field.get("type").ok_or_else(|| err(format!("No field type: field {name} of {record}")))?;
            let node = self.parse(type_value)?;
            let order = match field.get("order") {
                None => None,
                Some(Value::String(order)) => match order.to_ascii_lowercase().as_str() {
                    "ascending" => None,
                    o @ ("descending" | "ignore") => Some(o.to_string()),
                    _ => return Err(err(format!("Invalid order {order} for field {name} of {record}"))),
                },
                Some(other) => return Err(err(format!("Invalid order {other} for field {name} of {record}"))),
            };
            let default = match field.get("default") {
                Some(Value::String(s)) if self.is_floating(&node) => Some(
                    java_double_value(s)
                        .ok_or_else(|| err(format!("Invalid default for field {name}: \"{s}\" is not a number")))?,
                ),
                other => other.cloned(),
            };
            let props = field
                .iter()
                .filter(|(k, _)| !FIELD_RESERVED.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            fields.push(Field {
                name: name.to_string(),
                node,
                doc: text(field, "doc").map(str::to_string),
                default,
                order,
                aliases: dedupe(parse_alias_list(field)?),
                props,
            });
        }
        Ok(fields)
    }

    fn is_floating(&self, node: &Node) -> bool {
        matches!(node, Node::Primitive { kind: "float" | "double", .. })
    }
}

fn unresolved(name: &str) -> SchemaError {
    SchemaError::UnresolvedReference { name: name.to_string() }
}

fn dedupe<T: Eq + std::hash::Hash + Clone>(items: Vec<T>) -> Vec<T> {
    let mut seen = HashSet::with_capacity(items.len());
    items.into_iter().filter(|item| seen.insert(item.clone())).collect()
}

fn parse_alias_list(obj: &Map<String, Value>) -> Result<Vec<String>, SchemaError> {
    match obj.get("aliases") {
        None => Ok(Vec::new()),
        Some(Value::Array(items)) => items
            .iter()
            .map(|a| a.as_str().map(str::to_string).ok_or_else(|| err(format!("alias not a string: {a}"))))
            .collect(),
        Some(other) => Err(err(format!("aliases not an array: {other}"))),
    }
}

fn parse_enum(obj: &Map<String, Value>, full: &str) -> Result<Body, SchemaError> {
    let list =
        obj.get("symbols").and_then(Value::as_array).ok_or_else(|| err(format!("Enum has no symbols: {full}")))?;
    let mut symbols: Vec<String> = Vec::with_capacity(list.len());
    let mut seen: HashSet<&str> = HashSet::with_capacity(list.len());
    for symbol in list {
        let symbol = symbol.as_str().ok_or_else(|| err(format!("Enum symbol not a string in {full}: {symbol}")))?;
        validate_name(symbol)?;
        if !seen.insert(symbol) {
            return Err(err(format!("Duplicate enum symbol: {symbol}")));
        }
        symbols.push(symbol.to_string());
    }
    let default = text(obj, "default").map(str::to_string);
    if let Some(default) = &default
        && !seen.contains(default.as_str())
    {
        return Err(err(format!("The Enum Default: {default} is not in the enum symbol set: {symbols:?}")));
    }
    Ok(Body::Enum { symbols, default })
}

fn parse_fixed(obj: &Map<String, Value>, full: &str) -> Result<Body, SchemaError> {
    match obj.get("size").and_then(Value::as_i64) {
        Some(size) if (0..=i64::from(i32::MAX)).contains(&size) => Ok(Body::Fixed { size }),
        _ => Err(err(format!("Invalid or no size: fixed {full}"))),
    }
}

/// Java `Double.valueOf` on a float/double field's string default ("NaN", "1.5", "1e3"...).
/// Non-finite values stay strings: Jackson writes them quoted.
fn java_double_value(s: &str) -> Option<Value> {
    let t = s.trim();
    match t {
        "NaN" | "+NaN" | "-NaN" => return Some(Value::String("NaN".into())),
        "Infinity" | "+Infinity" => return Some(Value::String("Infinity".into())),
        "-Infinity" => return Some(Value::String("-Infinity".into())),
        _ => {}
    }
    let t = t.strip_suffix(['d', 'D', 'f', 'F']).unwrap_or(t);
    if t.is_empty() || !t.chars().all(|c| c.is_ascii_digit() || matches!(c, '.' | 'e' | 'E' | '+' | '-')) {
        return None;
    }
    let f: f64 = t.parse().ok()?;
    Number::from_f64(f).map(Value::Number)
}
