//! Column ↔ domain value mapping: fingerprints as 32-byte blobs, references and data-contract
//! parts as compact JSON text, scopes as text keys. Anything that does not decode is `Corrupt`.

use crate::error::{LocalError, LocalResult};
use crate::schema::GLOBAL_SCOPE;
use registry_core::{
    ConfigRecord, Fingerprint, Mode, SchemaBody, SchemaId, SchemaReference, Scope, Subject, Version, VersionRow,
};
use rusqlite::Row;

/// The columns [`version_row`] reads, in order, for `SELECT {VERSION_COLUMNS} FROM versions`.
pub(crate) const VERSION_COLUMNS: &str = "subject, version, id, fingerprint, deleted, refs, registered_at";

/// The same columns qualified with the `v` alias, for joins.
pub(crate) const VERSION_COLUMNS_V: &str =
    "v.subject, v.version, v.id, v.fingerprint, v.deleted, v.refs, v.registered_at";

/// The text key of a scope.
pub(crate) fn scope_key(scope: &Scope) -> &str {
    match scope {
        Scope::Global => GLOBAL_SCOPE,
        Scope::Subject(subject) => subject.as_str(),
    }
}

/// A fingerprint read back from a blob column.
pub(crate) fn fingerprint(bytes: Vec<u8>) -> LocalResult<Fingerprint> {
    let array: [u8; 32] = bytes
        .try_into()
        .map_err(|bytes: Vec<u8>| LocalError::Corrupt(format!("fingerprint has {} bytes, not 32", bytes.len())))?;
    Ok(Fingerprint(array))
}

/// References as stored: `NULL` when there are none.
pub(crate) fn references_text(references: &[SchemaReference]) -> LocalResult<Option<String>> {
    if references.is_empty() {
        return Ok(None);
    }
    serde_json::to_string(references).map(Some).map_err(|e| LocalError::Corrupt(e.to_string()))
}

/// References decoded from their column (`NULL` means none).
pub(crate) fn references(text: Option<String>) -> LocalResult<Vec<SchemaReference>> {
    match text {
        None => Ok(Vec::new()),
        Some(text) => serde_json::from_str(&text).map_err(|e| LocalError::Corrupt(format!("references: {e}"))),
    }
}

fn json_value(text: Option<String>, what: &str) -> LocalResult<Option<serde_json::Value>> {
    text.map(|t| serde_json::from_str(&t).map_err(|e| LocalError::Corrupt(format!("{what}: {e}")))).transpose()
}

/// The raw columns of a `bodies` row, as written by [`body_columns`].
pub(crate) type BodyColumns = (String, String, Option<String>, Option<String>, Option<String>);

/// `body` split into (schema_type, schema, refs, metadata, rule_set) columns.
pub(crate) fn body_columns(body: &SchemaBody) -> LocalResult<BodyColumns> {
    Ok((
        body.schema_type.as_str().to_string(),
        body.schema.clone(),
        references_text(&body.references)?,
        body.metadata.as_ref().map(|m| m.to_string()),
        body.rule_set.as_ref().map(|r| r.to_string()),
    ))
}

/// A body rebuilt from its columns.
pub(crate) fn body(columns: BodyColumns) -> LocalResult<SchemaBody> {
    let (schema_type, schema, refs, metadata, rule_set) = columns;
    Ok(SchemaBody {
        schema_type: schema_type.parse().map_err(|_| LocalError::Corrupt(format!("schema type {schema_type:?}")))?,
        schema,
        references: references(refs)?,
        metadata: json_value(metadata, "metadata")?,
        rule_set: json_value(rule_set, "rule set")?,
    })
}

/// The raw columns of a `versions` row, in [`VERSION_COLUMNS`] order.
pub(crate) type RawVersionRow = (String, i64, i64, Vec<u8>, bool, Option<String>, i64);

/// Reads the [`VERSION_COLUMNS`] of `row` without interpreting them (decoding happens outside
/// rusqlite's callback so failures are classified as `Corrupt`).
pub(crate) fn raw_version_row(row: &Row<'_>) -> rusqlite::Result<RawVersionRow> {
    Ok((row.get(0)?, row.get(1)?, row.get(2)?, row.get(3)?, row.get(4)?, row.get(5)?, row.get(6)?))
}

/// A [`VersionRow`] decoded from its raw columns.
pub(crate) fn version_row(raw: RawVersionRow) -> LocalResult<VersionRow> {
    let (subject, version, id, fp, deleted, refs, registered_at_ms) = raw;
    Ok(VersionRow {
        subject: Subject::new(subject).map_err(|e| LocalError::Corrupt(e.to_string()))?,
        version: Version(narrow(version, "version")?),
        id: SchemaId(narrow(id, "id")?),
        fingerprint: fingerprint(fp)?,
        deleted,
        references: references(refs)?,
        registered_at_ms,
    })
}

/// An `i64` column narrowed to the `i32` the domain uses.
pub(crate) fn narrow(value: i64, what: &str) -> LocalResult<i32> {
    i32::try_from(value).map_err(|_| LocalError::Corrupt(format!("{what} {value} is out of range")))
}

/// A stored config decoded.
pub(crate) fn config(text: &str) -> LocalResult<ConfigRecord> {
    serde_json::from_str(text).map_err(|e| LocalError::Corrupt(format!("config: {e}")))
}

/// A config encoded for storage.
pub(crate) fn config_text(config: &ConfigRecord) -> LocalResult<String> {
    serde_json::to_string(config).map_err(|e| LocalError::Corrupt(format!("config: {e}")))
}

/// A stored mode decoded.
pub(crate) fn mode(text: &str) -> LocalResult<Mode> {
    text.parse().map_err(|_| LocalError::Corrupt(format!("mode {text:?}")))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use registry_core::SchemaType;

    #[test]
    fn bodies_round_trip_through_columns() {
        let original = SchemaBody {
            schema_type: SchemaType::Json,
            schema: "{\"type\":\"object\"}".into(),
            references: vec![SchemaReference { name: "a.json".into(), subject: "a".into(), version: 2 }],
            metadata: Some(serde_json::json!({"properties": {"owner": "x"}})),
            rule_set: None,
        };
        assert_eq!(body(body_columns(&original).unwrap()).unwrap(), original);
    }

    #[test]
    fn bad_columns_are_corrupt() {
        assert!(matches!(fingerprint(vec![1, 2, 3]), Err(LocalError::Corrupt(_))));
        assert!(matches!(narrow(i64::from(i32::MAX) + 1, "id"), Err(LocalError::Corrupt(_))));
        assert!(matches!(mode("WRITEONLY"), Err(LocalError::Corrupt(_))));
        let raw = ("".to_string(), 1, 1, vec![0; 32], false, None, 0);
        assert!(matches!(version_row(raw), Err(LocalError::Corrupt(_))));
    }
}
