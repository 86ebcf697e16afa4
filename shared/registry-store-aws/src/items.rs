//! Item mapping: [`VersionRow`] and the small index items ↔ DynamoDB attribute maps, plus an
//! attribute-reading extension trait. Pure: no I/O.

use crate::errors::AwsError;
use crate::keys::{self, PK, SK};
use aws_sdk_dynamodb::types::AttributeValue;
use registry_core::{Fingerprint, SchemaId, SchemaReference, Subject, Version, VersionRow};
use std::collections::HashMap;
use std::str::FromStr;

/// A DynamoDB item.
pub(crate) type Item = HashMap<String, AttributeValue>;

/// Attribute names, used in items and in condition/update expressions.
pub(crate) mod attr {
    pub const SUBJECT: &str = "subject";
    pub const VERSION: &str = "version";
    pub const ID: &str = "id";
    pub const FINGERPRINT: &str = "fingerprint";
    pub const DELETED: &str = "deleted";
    pub const REFERENCES: &str = "refs";
    pub const REGISTERED_AT: &str = "ts";
    pub const MAX_ID: &str = "max_id";
    /// On a named context's counter: present (`true`) while the context is listed (`GET /contexts`).
    pub const LISTED: &str = "listed";
    pub const LIVE: &str = "live";
    pub const TOTAL: &str = "total";
    pub const VALUE: &str = "value";
    /// On a fingerprint binding: the hex of the guid whose item carries the binding's ID (see `assign`).
    pub const GUID: &str = "guid";
}

/// Typed reads from an item; a missing or mistyped attribute is [`AwsError::Corrupt`].
pub(crate) trait ItemExt {
    fn string(&self, name: &str) -> Result<&str, AwsError>;
    fn number<T: FromStr>(&self, name: &str) -> Result<T, AwsError>;
    fn flag(&self, name: &str) -> Result<bool, AwsError>;
    fn optional_number<T: FromStr>(&self, name: &str) -> Result<Option<T>, AwsError>;
}

impl ItemExt for Item {
    fn string(&self, name: &str) -> Result<&str, AwsError> {
        match self.get(name) {
            Some(AttributeValue::S(value)) => Ok(value),
            _ => Err(corrupt(self, name)),
        }
    }

    fn number<T: FromStr>(&self, name: &str) -> Result<T, AwsError> {
        self.optional_number(name)?.ok_or_else(|| corrupt(self, name))
    }

    fn flag(&self, name: &str) -> Result<bool, AwsError> {
        match self.get(name) {
            Some(AttributeValue::Bool(value)) => Ok(*value),
            _ => Err(corrupt(self, name)),
        }
    }

    fn optional_number<T: FromStr>(&self, name: &str) -> Result<Option<T>, AwsError> {
        match self.get(name) {
            None => Ok(None),
            Some(AttributeValue::N(value)) => value.parse().map(Some).map_err(|_| corrupt(self, name)),
            Some(_) => Err(corrupt(self, name)),
        }
    }
}

fn corrupt(item: &Item, name: &str) -> AwsError {
    let pk = item.get(PK).and_then(|v| v.as_s().ok()).map_or("?", String::as_str);
    let sk = item.get(SK).and_then(|v| v.as_s().ok()).map_or("?", String::as_str);
    AwsError::Corrupt(format!("item {pk}/{sk}: attribute {name} missing or malformed"))
}

/// A string attribute value.
pub(crate) fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

/// A number attribute value.
pub(crate) fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

/// The primary key of an item.
pub(crate) fn key(pk: impl Into<String>, sk: impl Into<String>) -> Item {
    HashMap::from([(PK.to_string(), s(pk)), (SK.to_string(), s(sk))])
}

/// The item of `items` at key (`pk`, `sk`), if it is among them (a BatchGetItem answers its items
/// in no particular order).
pub(crate) fn item_at<'a>(items: &'a [Item], pk: &str, sk: &str) -> Option<&'a Item> {
    items.iter().find(|item| {
        item.get(PK).and_then(|v| v.as_s().ok()).is_some_and(|v| v == pk)
            && item.get(SK).and_then(|v| v.as_s().ok()).is_some_and(|v| v == sk)
    })
}

/// The full item of a version row, keyed `S#<subject>` / `V#<version>`.
pub(crate) fn row_item(row: &VersionRow) -> Result<Item, AwsError> {
    let mut item = key(keys::subject_pk(&row.subject), keys::version_sk(row.version));
    item.insert(attr::SUBJECT.into(), s(row.subject.as_str()));
    item.insert(attr::VERSION.into(), n(row.version.0));
    item.insert(attr::ID.into(), n(row.id.0));
    item.insert(attr::FINGERPRINT.into(), s(row.fingerprint.to_hex()));
    item.insert(attr::DELETED.into(), AttributeValue::Bool(row.deleted));
    item.insert(attr::REGISTERED_AT.into(), n(row.registered_at_ms));
    if !row.references.is_empty() {
        let refs = serde_json::to_string(&row.references)
            .map_err(|e| AwsError::Corrupt(format!("references of {}: {e}", row.subject)))?;
        item.insert(attr::REFERENCES.into(), s(refs));
    }
    Ok(item)
}

/// Parses a version row item.
pub(crate) fn row_from_item(item: &Item) -> Result<VersionRow, AwsError> {
    let subject =
        Subject::new(item.string(attr::SUBJECT)?).map_err(|e| AwsError::Corrupt(format!("row subject: {e}")))?;
    let fingerprint = item.string(attr::FINGERPRINT)?;
    let fingerprint = Fingerprint::from_str(fingerprint).map_err(|e| AwsError::Corrupt(format!("row: {e}")))?;
    let references: Vec<SchemaReference> = match item.get(attr::REFERENCES) {
        None => Vec::new(),
        Some(_) => serde_json::from_str(item.string(attr::REFERENCES)?)
            .map_err(|e| AwsError::Corrupt(format!("row references of {subject}: {e}")))?,
    };
    Ok(VersionRow {
        version: Version(item.number(attr::VERSION)?),
        id: SchemaId(item.number(attr::ID)?),
        fingerprint,
        deleted: item.flag(attr::DELETED)?,
        references,
        registered_at_ms: item.number(attr::REGISTERED_AT)?,
        subject,
    })
}

/// An edge item in partition `pk` pointing at the row (subject, version).
pub(crate) fn edge_item(pk: String, subject: &Subject, version: Version) -> Item {
    let mut item = key(pk, keys::edge_sk(subject, version));
    item.insert(attr::SUBJECT.into(), s(subject.as_str()));
    item.insert(attr::VERSION.into(), n(version.0));
    item
}

/// The (subject, version) an edge item points at.
pub(crate) fn edge_target(item: &Item) -> Result<(Subject, Version), AwsError> {
    let subject =
        Subject::new(item.string(attr::SUBJECT)?).map_err(|e| AwsError::Corrupt(format!("edge subject: {e}")))?;
    Ok((subject, Version(item.number(attr::VERSION)?)))
}

/// Parses a fingerprint attribute.
pub(crate) fn fingerprint_of(item: &Item) -> Result<Fingerprint, AwsError> {
    Fingerprint::from_str(item.string(attr::FINGERPRINT)?).map_err(|e| AwsError::Corrupt(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;
    use registry_core::SchemaType;

    fn row(references: Vec<SchemaReference>) -> VersionRow {
        VersionRow {
            subject: Subject::new("orders-value").unwrap_or_else(|e| panic!("{e}")),
            version: Version(3),
            id: SchemaId(42),
            fingerprint: Fingerprint::of(SchemaType::Avro, "\"int\"", &references, None, None),
            deleted: true,
            references,
            registered_at_ms: 1_700_000_000_123,
        }
    }

    #[test]
    fn rows_round_trip_with_and_without_references() {
        let with = row(vec![SchemaReference { name: "a.b".into(), subject: "b".into(), version: 2 }]);
        for original in [row(Vec::new()), with] {
            let item = row_item(&original).unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(item.string(PK).ok(), Some("S#orders-value"));
            assert_eq!(item.string(SK).ok(), Some("V#0000000003"));
            assert_eq!(row_from_item(&item).ok(), Some(original));
        }
    }

    #[test]
    fn malformed_items_are_corrupt_not_panics() {
        let mut item = row_item(&row(Vec::new())).unwrap_or_else(|e| panic!("{e}"));
        item.insert(attr::ID.into(), s("forty-two"));
        assert!(matches!(row_from_item(&item), Err(AwsError::Corrupt(_))));
        let mut item = row_item(&row(Vec::new())).unwrap_or_else(|e| panic!("{e}"));
        item.insert(attr::FINGERPRINT.into(), s("abc"));
        assert!(matches!(row_from_item(&item), Err(AwsError::Corrupt(_))));
        item.remove(attr::FINGERPRINT);
        assert!(matches!(row_from_item(&item), Err(AwsError::Corrupt(_))));
    }

    #[test]
    fn edges_point_back_at_their_row() {
        let subject = Subject::new("a#b").unwrap_or_else(|e| panic!("{e}"));
        let item = edge_item(keys::id_pk(&registry_core::Context::DEFAULT, SchemaId(1)), &subject, Version(9));
        assert_eq!(edge_target(&item).ok(), Some((subject, Version(9))));
    }
}
