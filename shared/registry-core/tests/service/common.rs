//! Helpers shared by the service tests.

use registry_core::{
    CompatibilityLevel, ConfigRecord, MemoryStore, NewSchema, RegisterOptions, Registry, RegistryError,
    RegistrySettings, SchemaRecord, Scope, Subject, Version, VersionSelector,
};
use std::sync::Arc;

/// A registry over a fresh in-memory store.
pub fn registry() -> Registry {
    Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default())
}

/// An Avro schema as posted.
pub fn avro(text: &str) -> NewSchema {
    NewSchema { schema: Some(text.to_string()), ..NewSchema::default() }
}

/// A canonical Avro record `name` with `fields` given as (name, type) pairs.
pub fn rec(name: &str, fields: &[(&str, &str)]) -> String {
    let fields: Vec<String> = fields.iter().map(|(f, t)| format!(r#"{{"name":"{f}","type":"{t}"}}"#)).collect();
    format!(r#"{{"type":"record","name":"{name}","fields":[{}]}}"#, fields.join(","))
}

/// A canonical Avro record with string fields; `defaulted` ones carry `"default":""`.
pub fn rec_defaults(name: &str, plain: &[&str], defaulted: &[&str]) -> String {
    let mut fields: Vec<String> = plain.iter().map(|f| format!(r#"{{"name":"{f}","type":"string"}}"#)).collect();
    fields.extend(defaulted.iter().map(|f| format!(r#"{{"name":"{f}","type":"string","default":""}}"#)));
    format!(r#"{{"type":"record","name":"{name}","fields":[{}]}}"#, fields.join(","))
}

/// A registry whose subject `s` (compatibility NONE) has one version per name in `names`, in order:
/// records of one `int` field `a`.
pub async fn registry_with_versions(names: &[&str]) -> Registry {
    let r = registry();
    set_level(&r, "s", CompatibilityLevel::None).await;
    for name in names {
        reg(&r, "s", &rec(name, &[("a", "int")])).await;
    }
    r
}

/// Registers `text` under `subject`, panicking on failure.
pub async fn reg(r: &Registry, subject: &str, text: &str) -> SchemaRecord {
    r.register(subject, avro(text), RegisterOptions::default())
        .await
        .unwrap_or_else(|e| panic!("register {subject}: {e}"))
}

/// Registers and expects an error.
pub async fn reg_err(r: &Registry, subject: &str, schema: NewSchema) -> RegistryError {
    match r.register(subject, schema, RegisterOptions::default()).await {
        Ok(record) => panic!("register {subject} should fail, got v{} id {}", record.version, record.id),
        Err(e) => e,
    }
}

/// Sets a subject's compatibility level.
pub async fn set_level(r: &Registry, subject: &str, level: CompatibilityLevel) {
    let config = ConfigRecord { compatibility_level: Some(level), normalize: None, ..ConfigRecord::default() };
    r.set_config(&scope(subject), config).await.unwrap_or_else(|e| panic!("set_config: {e}"));
}

/// The subject scope.
pub fn scope(subject: &str) -> Scope {
    Scope::Subject(Subject::new(subject).unwrap_or_else(|e| panic!("{e}")))
}

/// Version selector `n`.
pub fn v(n: i32) -> VersionSelector {
    VersionSelector::Number(Version(n))
}

/// Version numbers as plain ints.
pub fn nums(versions: &[Version]) -> Vec<i32> {
    versions.iter().map(|v| v.0).collect()
}

/// The `Ok` value, or a panic naming the error.
pub fn ok<T>(result: Result<T, RegistryError>) -> T {
    result.unwrap_or_else(|e| panic!("unexpected error: {e}"))
}

/// The error, or a panic.
pub fn err<T: std::fmt::Debug>(result: Result<T, RegistryError>) -> RegistryError {
    match result {
        Ok(value) => panic!("expected an error, got {value:?}"),
        Err(e) => e,
    }
}
