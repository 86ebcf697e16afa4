//! The schema graph the diff walks: JSON Schema documents shaped as Everit's `SchemaLoader` shapes them.
//!
//! Everit (Confluent's JSON Schema library) turns `{"type":"string","enum":[..]}` into a synthetic `allOf` of a
//! string schema and an enum schema, a type array into an `anyOf` of one schema per type, and keyword-only
//! objects (`{"properties":{}}`) into typeless object/array/number/string schemas. `$ref`s become edges to the
//! schema they point at, inside the document or into a reference (dependency); unresolvable ones are empty.

use super::super::Draft;
use crate::json_value::Value;

/// Index of a schema node in a [`Graph`]; identity, as Confluent compares schema objects by identity.
pub type NodeId = usize;

/// How a combined schema's subschemas combine.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Criterion {
    AllOf,
    AnyOf,
    OneOf,
}

impl Criterion {
    /// The keyword, as Everit's `ValidationCriterion.toString()` (used in JSON paths).
    pub fn as_str(self) -> &'static str {
        match self {
            Criterion::AllOf => "allOf",
            Criterion::AnyOf => "anyOf",
            Criterion::OneOf => "oneOf",
        }
    }
}

/// `title`, `description`, `default` and the id keyword of a schema (absent for synthetic parts).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Common {
    pub id: Option<Value>,
    pub title: Option<Value>,
    pub description: Option<Value>,
    pub default: Option<Value>,
    /// Kafka Connect's `connect.type` annotation (`bytes` on the JSON converter's decimals).
    pub connect_type: Option<Value>,
}

/// String keywords the diff compares.
#[derive(Debug, Clone, Default)]
pub struct StringRules {
    pub min_length: Option<f64>,
    pub max_length: Option<f64>,
    pub pattern: Option<String>,
}

/// Number keywords the diff compares; `integer` sets `requires_integer`.
#[derive(Debug, Clone, Default)]
pub struct NumberRules {
    pub requires_integer: bool,
    pub minimum: Option<f64>,
    pub maximum: Option<f64>,
    pub exclusive_minimum: Option<f64>,
    pub exclusive_maximum: Option<f64>,
    /// As written, compared as an exact decimal.
    pub multiple_of: Option<crate::json_value::Number>,
}

/// Object keywords. `properties` keep document order; the diff applies Java's iteration order itself.
#[derive(Debug, Clone, Default)]
pub struct ObjectRules {
    pub properties: Vec<(String, NodeId)>,
    pub required: Vec<String>,
    pub permits_additional: bool,
    pub additional: Option<NodeId>,
    pub pattern_properties: Vec<(String, NodeId)>,
    pub property_dependencies: Vec<(String, Vec<String>)>,
    pub schema_dependencies: Vec<(String, NodeId)>,
    pub min_properties: Option<f64>,
    pub max_properties: Option<f64>,
    pub unevaluated: Option<NodeId>,
}

/// Array keywords: `all_items` for list validation, `item_schemas` for tuples (`items` array or `prefixItems`).
#[derive(Debug, Clone, Default)]
pub struct ArrayRules {
    pub all_items: Option<NodeId>,
    pub item_schemas: Vec<NodeId>,
    pub permits_additional: bool,
    pub additional: Option<NodeId>,
    pub unevaluated: Option<NodeId>,
    pub min_items: Option<f64>,
    pub max_items: Option<f64>,
    pub unique_items: bool,
    pub min_contains: Option<f64>,
    pub max_contains: Option<f64>,
}

/// The Everit schema class of a node; two nodes of different kinds are a type change.
#[derive(Debug, Clone)]
pub enum Kind {
    Empty,
    True,
    False,
    Null,
    Boolean,
    String(StringRules),
    Number(NumberRules),
    Enum(Vec<Value>),
    Const(Value),
    Combined { criterion: Criterion, subschemas: Vec<NodeId> },
    Not(NodeId),
    Object(Box<ObjectRules>),
    Array(Box<ArrayRules>),
    Ref(NodeId),
}

impl Kind {
    /// Whether both kinds are the same Everit class.
    pub fn same_class(&self, other: &Kind) -> bool {
        std::mem::discriminant(self) == std::mem::discriminant(other)
    }

    /// Everit's `instanceof EmptySchema` (`true` is a `TrueSchema`, a subclass).
    pub fn is_empty_schema(&self) -> bool {
        matches!(self, Kind::Empty | Kind::True)
    }
}

/// One schema: its class and keywords, plus where it came from (for duplicate detection in combined schemas).
#[derive(Debug, Clone)]
pub struct Node {
    pub common: Common,
    pub kind: Kind,
    /// Document index, JSON pointer, and which Everit part of that object this node is (0 = the whole).
    pub origin: (usize, String, usize),
}

/// A loaded document with the references it uses, as one graph of nodes.
#[derive(Debug, Clone)]
pub struct Graph {
    nodes: Vec<Node>,
    documents: Vec<Value>,
    root: NodeId,
}

impl Graph {
    /// Loads `document` (of `draft`) with `dependencies` (reference name, parsed document) in scope.
    pub fn load(document: &Value, draft: Draft, dependencies: &[(String, Value)]) -> Graph {
        let mut documents = vec![document.clone()];
        documents.extend(dependencies.iter().map(|(_, doc)| doc.clone()));
        let names: Vec<&str> = dependencies.iter().map(|(name, _)| name.as_str()).collect();
        let (nodes, root) = super::load::load(&documents, &names, draft);
        Graph { nodes, documents, root }
    }

    /// The root schema.
    pub fn root(&self) -> NodeId {
        self.root
    }

    /// The node `id`.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id]
    }

    /// Follows `$ref` edges to the schema they point at (a reference cycle ends where it started).
    pub fn resolve(&self, mut id: NodeId) -> NodeId {
        for _ in 0..self.nodes.len() {
            match self.nodes[id].kind {
                Kind::Ref(target) => id = target,
                _ => return id,
            }
        }
        id
    }

    /// A key equal for structurally identical schemas (Confluent dedupes combined subschemas by content).
    pub fn content_key(&self, id: NodeId) -> String {
        let (doc, pointer, part) = &self.nodes[id].origin;
        let text = self.documents.get(*doc).and_then(|d| d.pointer(pointer)).map(Value::to_string).unwrap_or_default();
        format!("{part}:{text}")
    }
}
