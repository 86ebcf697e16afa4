//! The registry table's DynamoDB stream records (`NEW_AND_OLD_IMAGES`, as Lambda delivers them and
//! as `GetRecords` answers them) read as what changed for an exporter: a version of a subject
//! (registered, soft-deleted, restored, hard-deleted) or a config (a subject's, or the global one,
//! which every exported subject inherits). Every other item of the table (counters, bindings,
//! edges, usage markers, exporters' own items) changes nothing an exporter copies.
//!
//! Pure: no I/O. The key layout is `registry_store_aws::keys`' (its docs draw the table).

use registry_store_aws::keys::{PK, SK, VERSION_SK_PREFIX};
use serde_json::Value;

/// Partition of config items (`CONFIG` / `GLOBAL` or `S#<subject>`), as the store writes them.
pub const CONFIG_PK: &str = "CONFIG";
/// Sort key of the global config inside [`CONFIG_PK`].
pub const GLOBAL_SK: &str = "GLOBAL";
/// Prefix of a subject's partition, and of a subject config's sort key.
pub const SUBJECT_PREFIX: &str = "S#";
/// The attribute of a version row that says it is soft-deleted.
const DELETED: &str = "deleted";

/// One stream record: its sequence number (what a partial batch failure names) and the change.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamRecord {
    pub sequence_number: String,
    /// `None`: an item that changes nothing an exporter copies.
    pub change: Option<Change>,
}

/// What a record changed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Change {
    /// Version `version` of `subject`.
    Version { subject: String, version: i32, kind: VersionChange },
    /// The config of `subject`; `None`: the global config.
    Config { subject: Option<String> },
}

/// How a version row changed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VersionChange {
    /// A new row (registered, or imported).
    Registered,
    /// `deleted` went from false to true.
    SoftDeleted,
    /// `deleted` went from true to false (an IMPORT over a soft-deleted version).
    Restored,
    /// Rewritten without a change of `deleted` (its references, a revision).
    Rewritten,
    /// The row is gone (a permanent delete).
    HardDeleted,
}

impl Change {
    /// The subject it concerns; `None` for the global config (it concerns every subject).
    pub fn subject(&self) -> Option<&str> {
        match self {
            Change::Version { subject, .. } => Some(subject),
            Change::Config { subject } => subject.as_deref(),
        }
    }

    /// Whether an exporter copying the subjects `matches` says yes to must push this change.
    /// Subjects of named contexts (`:.ctx:name`) are never exported.
    pub fn concerns(&self, matches: impl Fn(&str) -> bool) -> bool {
        match self.subject() {
            None => true,
            Some(subject) => !subject.starts_with(':') && matches(subject),
        }
    }
}

/// A record that is not a DynamoDB stream record of the registry table.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MalformedRecord {
    /// The record's sequence number, or `?` when it has none.
    pub sequence_number: String,
    pub reason: String,
}

impl std::fmt::Display for MalformedRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "stream record {}: {}", self.sequence_number, self.reason)
    }
}

impl std::error::Error for MalformedRecord {}

/// The records of a stream batch (`{"Records": [...]}`), in stream order. A record whose keys or
/// images cannot be read is an error naming it, never skipped.
pub fn parse_batch(event: &Value) -> Result<Vec<StreamRecord>, MalformedRecord> {
    let records = event.get("Records").and_then(Value::as_array).ok_or_else(|| MalformedRecord {
        sequence_number: "?".to_owned(),
        reason: "the event has no Records list".to_owned(),
    })?;
    records.iter().map(parse_record).collect()
}

/// One record (`{"eventName", "dynamodb": {"Keys", "NewImage", "OldImage", "SequenceNumber"}}`).
pub fn parse_record(record: &Value) -> Result<StreamRecord, MalformedRecord> {
    let dynamodb = record.get("dynamodb");
    let sequence_number = dynamodb
        .and_then(|d| d.get("SequenceNumber"))
        .and_then(Value::as_str)
        .ok_or_else(|| MalformedRecord {
            sequence_number: "?".to_owned(),
            reason: "no dynamodb.SequenceNumber".to_owned(),
        })?
        .to_owned();
    let malformed = |reason: String| MalformedRecord { sequence_number: sequence_number.clone(), reason };
    let keys = dynamodb.and_then(|d| d.get("Keys")).ok_or_else(|| malformed("no dynamodb.Keys".to_owned()))?;
    let pk = string_attribute(keys, PK).ok_or_else(|| malformed(format!("key {PK} is not a string")))?;
    let sk = string_attribute(keys, SK).ok_or_else(|| malformed(format!("key {SK} is not a string")))?;
    let event = record.get("eventName").and_then(Value::as_str).unwrap_or_default();
    let image = |name: &str| dynamodb.and_then(|d| d.get(name));
    let change = match (pk.strip_prefix(SUBJECT_PREFIX), sk.strip_prefix(VERSION_SK_PREFIX)) {
        (Some(subject), Some(version)) => {
            let version = version.parse::<i32>().map_err(|_| malformed(format!("version key {sk} is not a number")))?;
            let deleted = |name: &str| image(name).map(deleted_flag).transpose();
            let (old, new) = (deleted("OldImage").map_err(&malformed)?, deleted("NewImage").map_err(&malformed)?);
            let kind = version_change(event, old, new).map_err(malformed)?;
            Some(Change::Version { subject: subject.to_owned(), version, kind })
        }
        _ if pk == CONFIG_PK => match sk.strip_prefix(SUBJECT_PREFIX) {
            Some(subject) => Some(Change::Config { subject: Some(subject.to_owned()) }),
            None if sk == GLOBAL_SK => Some(Change::Config { subject: None }),
            None => return Err(malformed(format!("config key {sk} is neither {GLOBAL_SK} nor a subject's"))),
        },
        _ => None,
    };
    Ok(StreamRecord { sequence_number, change })
}

/// The change of a version row from the record's event name and the `deleted` flags of its old
/// and new images (`NEW_AND_OLD_IMAGES`; either may be absent for INSERT and REMOVE).
fn version_change(event: &str, old: Option<bool>, new: Option<bool>) -> Result<VersionChange, String> {
    Ok(match (event, old, new) {
        ("INSERT", _, Some(true)) => VersionChange::SoftDeleted,
        ("INSERT", _, _) => VersionChange::Registered,
        ("REMOVE", _, _) => VersionChange::HardDeleted,
        ("MODIFY", Some(false), Some(true)) => VersionChange::SoftDeleted,
        ("MODIFY", Some(true), Some(false)) => VersionChange::Restored,
        ("MODIFY", _, _) => VersionChange::Rewritten,
        (other, _, _) => return Err(format!("event name {other:?} is not INSERT, MODIFY or REMOVE")),
    })
}

/// A string attribute (`{"S": "..."}`) of a DynamoDB JSON map.
fn string_attribute<'a>(map: &'a Value, name: &str) -> Option<&'a str> {
    map.get(name)?.get("S")?.as_str()
}

/// The row's `deleted` flag (`{"BOOL": true}`); a row without one is live.
fn deleted_flag(image: &Value) -> Result<bool, String> {
    match image.get(DELETED) {
        None => Ok(false),
        Some(value) => value.get("BOOL").and_then(Value::as_bool).ok_or_else(|| format!("{DELETED} is not a BOOL")),
    }
}

/// The partial batch answer Lambda reads with `ReportBatchItemFailures`: the first record not
/// handled, so the shard is retried from it and never past it (Lambda checkpoints at the lowest
/// sequence number reported); empty when the whole batch is done.
pub fn batch_response(first_failed: Option<&str>) -> Value {
    let failures: Vec<Value> =
        first_failed.map(|sequence| serde_json::json!({ "itemIdentifier": sequence })).into_iter().collect();
    serde_json::json!({ "batchItemFailures": failures })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(event: &str, pk: &str, sk: &str, old: Option<Value>, new: Option<Value>, sequence: &str) -> Value {
        let mut dynamodb = json!({
            "Keys": { "pk": { "S": pk }, "sk": { "S": sk } },
            "SequenceNumber": sequence,
            "StreamViewType": "NEW_AND_OLD_IMAGES",
        });
        if let Some(old) = old {
            dynamodb["OldImage"] = old;
        }
        if let Some(new) = new {
            dynamodb["NewImage"] = new;
        }
        json!({ "eventID": "e", "eventName": event, "eventSource": "aws:dynamodb", "dynamodb": dynamodb })
    }

    fn row(deleted: bool) -> Value {
        json!({ "pk": { "S": "S#orders-value" }, "sk": { "S": "V#0000000002" }, "id": { "N": "7" }, "deleted": { "BOOL": deleted } })
    }

    fn parsed(value: &Value) -> Option<Change> {
        parse_record(value).unwrap_or_else(|e| panic!("{e}")).change
    }

    fn version(kind: VersionChange) -> Option<Change> {
        Some(Change::Version { subject: "orders-value".into(), version: 2, kind })
    }

    #[test]
    fn version_rows_read_as_registrations_deletes_and_restores() {
        let insert = record("INSERT", "S#orders-value", "V#0000000002", None, Some(row(false)), "1");
        assert_eq!(parsed(&insert), version(VersionChange::Registered));
        let imported_deleted = record("INSERT", "S#orders-value", "V#0000000002", None, Some(row(true)), "1");
        assert_eq!(parsed(&imported_deleted), version(VersionChange::SoftDeleted));
        let soft = record("MODIFY", "S#orders-value", "V#0000000002", Some(row(false)), Some(row(true)), "2");
        assert_eq!(parsed(&soft), version(VersionChange::SoftDeleted));
        let restored = record("MODIFY", "S#orders-value", "V#0000000002", Some(row(true)), Some(row(false)), "3");
        assert_eq!(parsed(&restored), version(VersionChange::Restored));
        let same = record("MODIFY", "S#orders-value", "V#0000000002", Some(row(true)), Some(row(true)), "4");
        assert_eq!(parsed(&same), version(VersionChange::Rewritten));
        let hard = record("REMOVE", "S#orders-value", "V#0000000002", Some(row(true)), None, "5");
        assert_eq!(parsed(&hard), version(VersionChange::HardDeleted));
    }

    #[test]
    fn subjects_keep_separators_and_contexts() {
        let change = parsed(&record("INSERT", "S#:.team-a:a#b", "V#0000000010", None, Some(row(false)), "1"));
        assert_eq!(
            change,
            Some(Change::Version { subject: ":.team-a:a#b".into(), version: 10, kind: VersionChange::Registered })
        );
        // A named context's subject is never exported, whatever the patterns.
        assert!(change.is_some_and(|change| !change.concerns(|_| true)));
    }

    #[test]
    fn configs_read_as_the_subjects_or_the_global_one() {
        let value = json!({ "value": { "S": "{\"compatibilityLevel\":\"FULL\"}" } });
        let subject = record("MODIFY", "CONFIG", "S#orders-value", None, Some(value.clone()), "1");
        assert_eq!(parsed(&subject), Some(Change::Config { subject: Some("orders-value".into()) }));
        let global = record("INSERT", "CONFIG", "GLOBAL", None, Some(value), "2");
        let global = parsed(&global);
        assert_eq!(global, Some(Change::Config { subject: None }));
        // The global config concerns every exporter, whatever its subjects.
        assert!(global.is_some_and(|change| change.concerns(|_| false)));
        let removed = record("REMOVE", "CONFIG", "S#orders-value", None, None, "3");
        assert_eq!(parsed(&removed), Some(Change::Config { subject: Some("orders-value".into()) }));
    }

    #[test]
    fn other_items_change_nothing_exported() {
        for (pk, sk) in [
            ("COUNTER", "ID"),
            ("FP#00ff", "ID"),
            ("ID#0000000007", "FP"),
            ("ID#0000000007", "R#orders-value\u{1}0000000002"),
            ("SUBJECTS", "orders-value"),
            ("S#orders-value", "USED"),
            ("S#orders-value", "FP#00ff"),
            ("MODE", "GLOBAL"),
            ("EXPORTER", "orders"),
        ] {
            let value = record("MODIFY", pk, sk, None, None, "9");
            assert_eq!(parsed(&value), None, "{pk} / {sk}");
        }
    }

    #[test]
    fn unreadable_records_are_errors_naming_them() {
        let no_sequence = json!({ "eventName": "INSERT", "dynamodb": { "Keys": {} } });
        assert_eq!(parse_record(&no_sequence).map_err(|e| e.sequence_number), Err("?".to_owned()));
        let numeric_key = json!({ "eventName": "INSERT", "dynamodb": { "SequenceNumber": "12", "Keys": { "pk": { "N": "1" }, "sk": { "S": "x" } } } });
        assert_eq!(parse_record(&numeric_key).map_err(|e| e.sequence_number), Err("12".to_owned()));
        let bad_version = record("INSERT", "S#orders-value", "V#two", None, Some(row(false)), "13");
        assert!(parse_record(&bad_version).is_err());
        let bad_flag = record("INSERT", "S#a", "V#0000000001", None, Some(json!({ "deleted": { "S": "yes" } })), "14");
        assert!(parse_record(&bad_flag).is_err());
        let bad_event = record("UPSERT", "S#a", "V#0000000001", None, Some(row(false)), "15");
        assert!(parse_record(&bad_event).is_err());
        let bad_config = record("INSERT", "CONFIG", "somewhere", None, None, "16");
        assert!(parse_record(&bad_config).is_err());
        assert!(parse_batch(&json!({ "records": [] })).is_err());
    }

    #[test]
    fn a_batch_keeps_stream_order_and_fails_on_any_unreadable_record() {
        let good = record("INSERT", "S#a", "V#0000000001", None, Some(row(false)), "100");
        let other = record("INSERT", "COUNTER", "ID", None, None, "101");
        let batch = parse_batch(&json!({ "Records": [good.clone(), other.clone()] })).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(batch.iter().map(|r| r.sequence_number.as_str()).collect::<Vec<_>>(), ["100", "101"]);
        let bad = json!({ "eventName": "INSERT", "dynamodb": { "SequenceNumber": "102" } });
        assert_eq!(
            parse_batch(&json!({ "Records": [good, bad, other] })).map_err(|e| e.sequence_number),
            Err("102".into())
        );
    }

    #[test]
    fn the_batch_answer_names_the_first_failed_record_or_none() {
        assert_eq!(batch_response(None), json!({ "batchItemFailures": [] }));
        assert_eq!(batch_response(Some("42")), json!({ "batchItemFailures": [{ "itemIdentifier": "42" }] }));
    }
}
