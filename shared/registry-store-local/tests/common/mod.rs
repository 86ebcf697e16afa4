//! Shared fixtures for the integration tests: bodies, rows and a store in a temp directory.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use registry_core::{SchemaBody, SchemaId, SchemaReference, SchemaType, Subject, Version, VersionRow};
use registry_store_local::LocalStore;
use tempfile::TempDir;

pub fn store() -> (TempDir, LocalStore) {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::open(dir.path()).unwrap();
    (dir, store)
}

pub fn body(n: usize) -> SchemaBody {
    SchemaBody {
        schema_type: SchemaType::Avro,
        schema: format!("{{\"type\":\"record\",\"name\":\"R{n}\",\"fields\":[]}}"),
        references: Vec::new(),
        metadata: None,
        rule_set: None,
    }
}

pub fn subject(name: &str) -> Subject {
    Subject::new(name).unwrap()
}

pub fn row(subject_name: &str, version: i32, id: i32, n: usize) -> VersionRow {
    VersionRow {
        subject: subject(subject_name),
        version: Version(version),
        id: SchemaId(id),
        fingerprint: body(n).fingerprint(),
        deleted: false,
        references: Vec::new(),
        registered_at_ms: 1_700_000_000_000 + i64::from(version),
    }
}

pub fn reference(subject_name: &str, version: i32) -> SchemaReference {
    SchemaReference { name: format!("{subject_name}.avsc"), subject: subject_name.into(), version }
}
