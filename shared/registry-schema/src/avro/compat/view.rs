//! How the compatibility walk sees a schema: logical types stripped to their underlying Avro type (as
//! Java's `Schema.getType()`), `Schema::Ref` resolved through the named types in scope, and the identity of
//! a node for the memo of (reader, writer) pairs.

use super::checker::Aborted;
use apache_avro::Schema;
use apache_avro::schema::{EnumSchema, FixedSchema, InnerDecimalSchema, RecordSchema, UuidSchema};
use std::collections::HashMap;

/// A schema's type with logical types stripped, as Java's `Schema.getType()` sees it.
#[derive(Clone, Copy)]
pub(super) enum View<'s> {
    Null,
    Boolean,
    Int,
    Long,
    Float,
    Double,
    Bytes,
    String,
    Array(&'s Schema),
    Map(&'s Schema),
    Union(&'s [Schema]),
    Record(&'s RecordSchema),
    Enum(&'s EnumSchema),
    Fixed(&'s FixedSchema),
}

impl View<'_> {
    /// Java's `Schema.Type` name.
    pub(super) fn type_name(self) -> &'static str {
        match self {
            View::Null => "NULL",
            View::Boolean => "BOOLEAN",
            View::Int => "INT",
            View::Long => "LONG",
            View::Float => "FLOAT",
            View::Double => "DOUBLE",
            View::Bytes => "BYTES",
            View::String => "STRING",
            View::Array(_) => "ARRAY",
            View::Map(_) => "MAP",
            View::Union(_) => "UNION",
            View::Record(_) => "RECORD",
            View::Enum(_) => "ENUM",
            View::Fixed(_) => "FIXED",
        }
    }

    pub(super) fn same_type(self, other: View<'_>) -> bool {
        self.type_name() == other.type_name()
    }
}

/// Identity of a schema node for the memo: named types by (namespace, name), as Java shares one object
/// per name, everything else by address.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub(super) enum NodeId<'a> {
    Named(Option<&'a str>, &'a str),
    Node(usize),
}

pub(super) fn resolve<'s>(mut schema: &'s Schema, names: &'s HashMap<String, Schema>) -> Result<&'s Schema, Aborted> {
    for _ in 0..8 {
        match schema {
            Schema::Ref { name } => {
                let full = name.fullname(None);
                schema = names.get(&full).ok_or_else(|| Aborted(format!("unresolved named type {full}")))?;
            }
            _ => return Ok(schema),
        }
    }
    Err(Aborted("named type refers to itself".to_string()))
}

pub(super) fn view(schema: &Schema) -> Result<View<'_>, Aborted> {
    Ok(match schema {
        Schema::Null => View::Null,
        Schema::Boolean => View::Boolean,
        Schema::Int | Schema::Date | Schema::TimeMillis => View::Int,
        Schema::Long
        | Schema::TimeMicros
        | Schema::TimestampMillis
        | Schema::TimestampMicros
        | Schema::TimestampNanos
        | Schema::LocalTimestampMillis
        | Schema::LocalTimestampMicros
        | Schema::LocalTimestampNanos => View::Long,
        Schema::Float => View::Float,
        Schema::Double => View::Double,
        Schema::Bytes | Schema::BigDecimal | Schema::Uuid(UuidSchema::Bytes) => View::Bytes,
        Schema::Decimal(decimal) => match &decimal.inner {
            InnerDecimalSchema::Bytes => View::Bytes,
            InnerDecimalSchema::Fixed(fixed) => View::Fixed(fixed),
        },
        Schema::String | Schema::Uuid(UuidSchema::String) => View::String,
        Schema::Uuid(UuidSchema::Fixed(fixed)) | Schema::Duration(fixed) | Schema::Fixed(fixed) => View::Fixed(fixed),
        Schema::Array(array) => View::Array(&array.items),
        Schema::Map(map) => View::Map(&map.types),
        Schema::Union(union) => View::Union(union.variants()),
        Schema::Record(record) => View::Record(record),
        Schema::Enum(enumeration) => View::Enum(enumeration),
        Schema::Ref { name } => return Err(Aborted(format!("unresolved named type {}", name.fullname(None)))),
    })
}

pub(super) fn node_id<'a>(schema: &'a Schema, view: View<'a>) -> NodeId<'a> {
    match view {
        View::Record(record) => NodeId::Named(record.name.namespace(), record.name.name()),
        View::Enum(enumeration) => NodeId::Named(enumeration.name.namespace(), enumeration.name.name()),
        View::Fixed(fixed) => NodeId::Named(fixed.name.namespace(), fixed.name.name()),
        _ => NodeId::Node(std::ptr::from_ref(schema) as usize),
    }
}
