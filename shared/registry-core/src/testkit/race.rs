//! RACE section: many tokio tasks register through one [`Registry`] at once; afterwards IDs are
//! unique per schema, the same schema has one ID everywhere, and versions are dense per subject.
//! Two store-level races check the conditional writes under them directly (`allocate_id`,
//! `create_version`).

use super::StoreTestExt;
use super::{row, stored_body, unique_name, unique_subject};
use crate::model::{ConfigRecord, SchemaId, SchemaRecord, Scope, Subject};
use crate::registry::{NewSchema, RegisterOptions, Registry, RegistrySettings};
use crate::store::{Store, StoreError};
use registry_schema::CompatibilityLevel;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

fn schema_text(tag: &str) -> String {
    let name: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    format!(r#"{{"type":"record","name":"Race_{name}","fields":[{{"name":"f","type":"string"}}]}}"#)
}

fn new_schema(text: &str) -> NewSchema {
    NewSchema { schema: Some(text.to_string()), ..NewSchema::default() }
}

/// Sets level NONE on `subject` so unrelated schemas may follow each other.
async fn allow_anything(store: &dyn Store, subject: &Subject) {
    let none = ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::None),
        normalize: None,
        ..ConfigRecord::default()
    };
    store.put_config(&Scope::Subject(subject.clone()), &none).await.expect("put_config");
}

async fn register_all(registry: &Registry, jobs: Vec<(Subject, String)>) -> Vec<(Subject, String, SchemaRecord)> {
    let tasks: Vec<_> = jobs
        .into_iter()
        .map(|(subject, text)| {
            let registry = registry.clone();
            tokio::spawn(async move {
                let record = registry
                    .register(subject.as_str(), new_schema(&text), RegisterOptions::default())
                    .await
                    .unwrap_or_else(|e| panic!("race: register {subject} failed: {e}"));
                (subject, text, record)
            })
        })
        .collect();
    let mut results = Vec::with_capacity(tasks.len());
    for task in tasks {
        results.push(task.await.expect("race task panicked"));
    }
    results
}

async fn assert_dense(store: &dyn Store, subject: &Subject, expected: usize) {
    let rows = store.versions(subject).await.expect("versions");
    let numbers: Vec<i32> = rows.iter().map(|r| r.version.0).collect();
    let dense: Vec<i32> = (1..=expected as i32).collect();
    assert_eq!(numbers, dense, "race: versions of {subject} must be dense");
    assert!(rows.iter().all(|r| !r.deleted), "race: no row is deleted");
}

/// One ID per schema text, distinct texts never share one; every returned record matches its row.
async fn assert_ids_consistent(store: &dyn Store, results: &[(Subject, String, SchemaRecord)]) -> usize {
    let mut by_text: BTreeMap<&str, SchemaId> = BTreeMap::new();
    for (subject, text, record) in results {
        let first = *by_text.entry(text.as_str()).or_insert(record.id);
        assert_eq!(first, record.id, "race: the same schema got two ids");
        assert_eq!(&record.subject, subject, "race: record names its subject");
        let stored = store.get_version(subject, record.version).await.expect("get_version");
        let stored = stored.unwrap_or_else(|| panic!("race: {subject} v{} missing", record.version));
        assert_eq!(stored.id, record.id, "race: the returned id is the stored one");
    }
    let distinct: BTreeSet<SchemaId> = by_text.values().copied().collect();
    assert_eq!(distinct.len(), by_text.len(), "race: different schemas must get different ids");
    distinct.len()
}

/// `tasks` registrations of one schema into one subject: one ID, one version.
pub async fn race_same_schema_one_subject(store: Arc<dyn Store>, tasks: usize) {
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let subject = unique_subject("race-same");
    let text = schema_text(&unique_name("race-same"));
    let results = register_all(&registry, (0..tasks).map(|_| (subject.clone(), text.clone())).collect()).await;
    assert_ids_consistent(store.as_ref(), &results).await;
    assert!(results.iter().all(|(_, _, r)| r.version.0 == 1), "race: every caller sees version 1");
    assert_dense(store.as_ref(), &subject, 1).await;
}

/// One schema into `tasks` subjects at once: one ID everywhere, version 1 in each subject.
pub async fn race_same_schema_many_subjects(store: Arc<dyn Store>, tasks: usize) {
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let text = schema_text(&unique_name("race-shared"));
    let jobs: Vec<_> = (0..tasks).map(|_| (unique_subject("race-shared"), text.clone())).collect();
    let results = register_all(&registry, jobs).await;
    assert_eq!(assert_ids_consistent(store.as_ref(), &results).await, 1);
    for (subject, _, _) in &results {
        assert_dense(store.as_ref(), subject, 1).await;
    }
}

/// `tasks` different schemas into one subject: distinct IDs, versions exactly 1..=tasks.
pub async fn race_different_schemas_one_subject(store: Arc<dyn Store>, tasks: usize) {
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let subject = unique_subject("race-many");
    allow_anything(store.as_ref(), &subject).await;
    let jobs: Vec<_> = (0..tasks).map(|i| (subject.clone(), schema_text(&unique_name(&format!("m{i}"))))).collect();
    let results = register_all(&registry, jobs).await;
    assert_eq!(assert_ids_consistent(store.as_ref(), &results).await, tasks);
    let versions: BTreeSet<i32> = results.iter().map(|(_, _, r)| r.version.0).collect();
    assert_eq!(versions.len(), tasks, "race: each registration got its own version");
    assert_dense(store.as_ref(), &subject, tasks).await;
}

/// `tasks` tasks each register `schemas` schemas into one shared subject and into their own
/// subject, in rotated order: per schema one ID, and dense versions everywhere.
pub async fn race_mixed(store: Arc<dyn Store>, tasks: usize, schemas: usize) {
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let shared = unique_subject("race-mixed");
    allow_anything(store.as_ref(), &shared).await;
    let texts: Vec<String> = (0..schemas).map(|i| schema_text(&unique_name(&format!("x{i}")))).collect();
    let mut own = Vec::new();
    for _ in 0..tasks {
        let subject = unique_subject("race-own");
        allow_anything(store.as_ref(), &subject).await;
        own.push(subject);
    }
    let handles: Vec<_> = own
        .iter()
        .enumerate()
        .map(|(t, subject)| {
            let (registry, shared, subject, texts) = (registry.clone(), shared.clone(), subject.clone(), texts.clone());
            tokio::spawn(async move {
                let mut jobs = Vec::new();
                for k in 0..texts.len() {
                    let text = &texts[(t + k) % texts.len()];
                    jobs.push((shared.clone(), text.clone()));
                    jobs.push((subject.clone(), text.clone()));
                }
                register_all(&registry, jobs).await
            })
        })
        .collect();
    let mut results = Vec::new();
    for handle in handles {
        results.extend(handle.await.expect("race task panicked"));
    }
    assert_eq!(assert_ids_consistent(store.as_ref(), &results).await, schemas);
    assert_dense(store.as_ref(), &shared, schemas).await;
    for subject in &own {
        assert_dense(store.as_ref(), subject, schemas).await;
    }
}

/// Attempts of one allocation in [`race_allocate_id`] before it fails instead of spinning: each
/// `Conflict` means another allocation moved the counter, so far fewer are ever needed; the
/// bound turns a livelock into a failure.
const MAX_ALLOCATION_ATTEMPTS: usize = 1000;

/// `tasks` allocations for distinct fingerprints at once, each retried on `Conflict` (a lost
/// counter race) unless the fingerprint got bound meanwhile (a concurrent allocation committed it,
/// as [`Store::allocate_id_in`] allows): every ID distinct, bound both ways, and none above `max_id`.
pub async fn race_allocate_id(store: Arc<dyn Store>, tasks: usize) {
    let handles: Vec<_> = (0..tasks)
        .map(|i| {
            let store = store.clone();
            tokio::spawn(async move {
                let (fingerprint, _) = stored_body(store.as_ref(), &unique_name(&format!("race-alloc-{i}"))).await;
                for _ in 0..MAX_ALLOCATION_ATTEMPTS {
                    match store.allocate_id(&fingerprint).await {
                        Ok(id) => return (fingerprint, id),
                        // A lost counter race, or a concurrent allocation committed this
                        // fingerprint's claim on its behalf: bound now, or retried.
                        Err(StoreError::Conflict(_)) => {
                            let bound = store.id_for_fingerprint(&fingerprint).await.expect("id_for_fingerprint");
                            if let Some(id) = bound {
                                return (fingerprint, id);
                            }
                        }
                        Err(e) => panic!("race: allocate_id failed: {e}"),
                    }
                }
                panic!("race: allocate_id conflicted {MAX_ALLOCATION_ATTEMPTS} times for one fingerprint")
            })
        })
        .collect();
    let mut allocated = Vec::with_capacity(tasks);
    for handle in handles {
        allocated.push(handle.await.expect("race task panicked"));
    }
    let ids: BTreeSet<SchemaId> = allocated.iter().map(|(_, id)| *id).collect();
    assert_eq!(ids.len(), tasks, "race: allocate_id handed out an id twice: {allocated:?}");
    for (fingerprint, id) in &allocated {
        assert_eq!(store.id_for_fingerprint(fingerprint).await.expect("id_for_fingerprint"), Some(*id));
        assert_eq!(store.fingerprint_for_id(*id).await.expect("fingerprint_for_id"), Some(*fingerprint));
    }
    assert!(store.max_id().await.expect("max_id") >= ids.last().copied(), "race: max_id covers every id");
}

/// `tasks` writers create the same (subject, version) at once, each with its own schema and ID:
/// exactly one wins, the others get `Conflict`, and the subject holds the winner's row only.
pub async fn race_create_version(store: Arc<dyn Store>, tasks: usize) {
    let subject = unique_subject("race-create");
    let mut candidates = Vec::with_capacity(tasks);
    for i in 0..tasks {
        let (fingerprint, _) = stored_body(store.as_ref(), &unique_name(&format!("race-create-{i}"))).await;
        let id = store.allocate_id(&fingerprint).await.expect("allocate_id");
        candidates.push(row(&subject, 1, id, fingerprint));
    }
    let handles: Vec<_> = candidates
        .into_iter()
        .map(|candidate| {
            let store = store.clone();
            tokio::spawn(async move {
                (
                    store
                        .create_version(
                            &candidate,
                            &crate::store::Preconditions::default(),
                            &crate::CommitHints::default(),
                        )
                        .await,
                    candidate,
                )
            })
        })
        .collect();
    let mut winners = Vec::new();
    for handle in handles {
        match handle.await.expect("race task panicked") {
            (Ok(()), candidate) => winners.push(candidate),
            (Err(StoreError::Conflict(_)), _) => {}
            (Err(e), _) => panic!("race: create_version failed with {e}, not Conflict"),
        }
    }
    assert_eq!(winners.len(), 1, "race: exactly one create_version of one version wins");
    assert_eq!(store.versions(&subject).await.expect("versions"), winners, "race: the winner's row, alone");
}

/// IMPORT of one freed ID (its schema hard-deleted) by several schemas at once, racing an IMPORT
/// of the old schema under it and a normal registration of the old schema: one schema ends up
/// holding the ID, every import of another schema is refused with 42205 (Confluent's "Overwrite
/// new schema with id"), and every row carrying the ID carries the schema it is bound to.
pub async fn race_imports_for_a_freed_id(store: Arc<dyn Store>, tasks: usize) {
    use crate::error::RegistryError;
    use crate::model::Mode;
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let holder = unique_subject("freed-holder");
    let old = schema_text(&unique_name("freed-old"));
    let freed = registry.register(holder.as_str(), new_schema(&old), RegisterOptions::default()).await;
    let freed = freed.expect("register the schema to free").id;
    registry.delete_subject(holder.as_str(), false).await.expect("soft delete");
    registry.delete_subject(holder.as_str(), true).await.expect("hard delete");

    // Task i imports schema i (task 0 the old schema) into its own subject under the freed ID.
    let mut jobs = Vec::with_capacity(tasks);
    for i in 0..tasks.max(2) {
        let subject = unique_subject("freed-import");
        registry.set_mode(&Scope::Subject(subject.clone()), Mode::Import, false).await.expect("IMPORT mode");
        let text = if i == 0 { old.clone() } else { schema_text(&unique_name("freed-new")) };
        jobs.push((subject, text));
    }
    let imports: Vec<_> = jobs
        .iter()
        .cloned()
        .map(|(subject, text)| {
            let registry = registry.clone();
            tokio::spawn(async move {
                let schema = NewSchema { id: Some(freed.0), version: Some(1), ..new_schema(&text) };
                registry.register(subject.as_str(), schema, RegisterOptions::default()).await
            })
        })
        .collect();
    let again = unique_subject("freed-again");
    let normal = {
        let (registry, subject, old) = (registry.clone(), again.clone(), old.clone());
        tokio::spawn(
            async move { registry.register(subject.as_str(), new_schema(&old), RegisterOptions::default()).await },
        )
    };
    let mut winners: BTreeSet<String> = BTreeSet::new();
    for ((subject, text), import) in jobs.iter().zip(imports) {
        match import.await.expect("import task panicked") {
            Ok(record) => {
                assert_eq!(record.id, freed, "race: an import answered another id");
                assert_eq!(&record.subject, subject);
                winners.insert(text.clone());
            }
            Err(RegistryError::OperationNotPermitted { message }) => {
                assert!(message.contains("Overwrite new schema with id"), "race: refusal says {message}");
            }
            Err(other) => panic!("race: import into {subject} failed: {other}"),
        }
    }
    assert_eq!(winners.len(), 1, "race: exactly one schema holds the freed id, got {}", winners.len());
    let reregistered = normal.await.expect("registration task panicked").expect("re-registration of the old schema");
    assert!(
        reregistered.id != freed || winners.contains(&old),
        "race: the old schema got the freed id back while another schema holds it"
    );

    let bound = store.fingerprint_for_id(freed).await.expect("fingerprint_for_id").expect("the freed id is bound");
    let carriers = store.rows_with_id(freed).await.expect("rows_with_id");
    assert!(!carriers.is_empty(), "race: the winner's row carries the id");
    assert!(carriers.iter().all(|row| row.fingerprint == bound), "race: a row carries the id under another schema");
    let again_rows = store.versions(&again).await.expect("versions");
    let bound_again = store.fingerprint_for_id(reregistered.id).await.expect("fingerprint_for_id");
    assert_eq!(bound_again, again_rows.first().map(|row| row.fingerprint), "race: the re-registration's id names it");
}
