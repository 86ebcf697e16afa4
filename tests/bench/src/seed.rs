//! Seeding: fills a fresh data directory with `n` subjects straight through
//! `LocalStore::insert_unchecked` (no HTTP), one distinct Avro schema and one version per subject.

use registry_core::{Fingerprint, SchemaBody, SchemaId, SchemaType, Subject, Version, VersionRow};
use registry_schema::{ParsedSchema, Validation};
use registry_store_local::LocalStore;
use std::path::Path;

/// Rows written per `insert_unchecked` call, so seeding keeps its own memory bounded.
const CHUNK: usize = 50_000;

/// The posted text of subject `n`'s schema (what a client sends to register or look it up).
pub fn posted_schema(n: usize) -> String {
    format!(
        r#"{{"type":"record","name":"Bench{n}","fields":[{{"name":"id","type":"long"}},{{"name":"name","type":"string"}}]}}"#
    )
}

/// The name of subject `n` (zero-padded so the listing order is the numeric order).
pub fn subject_name(n: usize) -> String {
    format!("bench-{n:08}-value")
}

/// The stored (canonical) text the registry keeps for `posted_schema(n)`, derived from one parse
/// of a template and checked against a real parse for a few `n`.
struct Canonical {
    template: String,
}

const MARK: &str = "Bench0";

impl Canonical {
    fn new() -> Result<Self, String> {
        let template = canonical_by_parse(0)?;
        let canonical = Canonical { template };
        for n in [1, 7, 12_345, 999_999] {
            if canonical.text(n) != canonical_by_parse(n)? {
                return Err(format!("canonical text template does not match a parse of schema {n}"));
            }
        }
        Ok(canonical)
    }

    fn text(&self, n: usize) -> String {
        self.template.replace(MARK, &format!("Bench{n}"))
    }
}

fn canonical_by_parse(n: usize) -> Result<String, String> {
    let parsed = ParsedSchema::parse(SchemaType::Avro, &posted_schema(n), &[], Validation::Strict, false)
        .map_err(|error| format!("bench schema does not parse: {error}"))?;
    Ok(parsed.canonical_text().to_string())
}

/// Creates `dir` and seeds it with subjects `0..n` (subject `k` has version 1 = schema ID `k + 1`).
pub async fn seed(dir: &Path, n: usize) -> Result<(), String> {
    let store = LocalStore::open(dir).map_err(|error| format!("open {}: {error}", dir.display()))?;
    let canonical = Canonical::new()?;
    let mut start = 0;
    while start < n {
        let end = (start + CHUNK).min(n);
        let mut bodies: Vec<(Fingerprint, SchemaBody)> = Vec::with_capacity(end - start);
        let mut rows = Vec::with_capacity(end - start);
        for k in start..end {
            let body = SchemaBody {
                schema_type: SchemaType::Avro,
                schema: canonical.text(k),
                references: Vec::new(),
                metadata: None,
                rule_set: None,
            };
            let fingerprint = body.fingerprint();
            let subject = Subject::new(subject_name(k)).map_err(|error| error.to_string())?;
            let id = i32::try_from(k + 1).map_err(|_| "too many subjects".to_string())?;
            rows.push(VersionRow {
                subject,
                version: Version(1),
                id: SchemaId(id),
                fingerprint,
                deleted: false,
                references: Vec::new(),
                registered_at_ms: 0,
            });
            bodies.push((fingerprint, body));
        }
        store.insert_unchecked(&bodies, &rows).await.map_err(|error| format!("seeding: {error}"))?;
        start = end;
    }
    Ok(())
}
