//! DECISIONS section: every decision commits on what it read. Each case runs one operation through
//! a registry whose store runs a whole other operation (through a second registry on the same
//! store) right before the first one's commit, between its reads and its write, and checks that
//! the two end as some serial order of them would: the first one's commit conflicts and it
//! decides again on what the second one left, or it wins and the second one saw it. Deterministic,
//! one interleaving per case: no sweep, no sleeps, so every case ends in a few operations.

use super::{StoreCall, StoreHook, unique_name, unique_subject};
use crate::error::RegistryError;
use crate::model::{ConfigRecord, Scope, Subject, Version};
use crate::registry::{NewSchema, RegisterOptions, Registry, RegistrySettings};
use crate::store::{Store, StoreResult};
use registry_schema::CompatibilityLevel;
use std::future::Future;
use std::sync::{Arc, Mutex};
use tokio::sync::oneshot;

use super::hooked::{HookedStore, Interleaved};

/// Runs its work once, before the first call `at` accepts.
struct Between {
    at: fn(StoreCall) -> bool,
    work: Mutex<Option<Interleaved>>,
}

impl StoreHook for Between {
    fn before(&self, _call: StoreCall) -> StoreResult<()> {
        Ok(())
    }

    fn interleave(&self, call: StoreCall) -> Option<Interleaved> {
        if (self.at)(call) { self.work.lock().expect("decisions: hook lock").take() } else { None }
    }
}

/// Nothing remembered between requests: every answer comes from the store.
fn settings() -> RegistrySettings {
    RegistrySettings {
        lookup_ttl: std::time::Duration::ZERO,
        live_id_ttl: std::time::Duration::ZERO,
        usage_granularity_days: 0,
        ..RegistrySettings::default()
    }
}

/// A registry straight over `store`: the operation put in between.
fn plain(store: &Arc<dyn Store>) -> Registry {
    Registry::new(store.clone(), settings())
}

/// A registry over `store` that runs `work` (another operation, through [`plain`]) to its end
/// right before its first store call `at` accepts; the receiver answers what `work` returned, and
/// fails the case if it never ran.
fn interleaved<T: Send + 'static>(
    store: &Arc<dyn Store>,
    at: fn(StoreCall) -> bool,
    work: impl Future<Output = T> + Send + 'static,
) -> (Registry, oneshot::Receiver<T>) {
    let (sent, answer) = oneshot::channel();
    let work: Interleaved = Box::pin(async move {
        let _ = sent.send(work.await);
    });
    let hook = Between { at, work: Mutex::new(Some(work)) };
    (Registry::new(Arc::new(HookedStore::new(store.clone(), hook)), settings()), answer)
}

/// What the interleaved operation answered.
async fn second<T>(answer: oneshot::Receiver<T>, case: &str) -> T {
    answer.await.unwrap_or_else(|_| panic!("{case}: the interleaved operation never ran"))
}

/// A version row commit (either way a registration commits one).
fn row_commit(call: StoreCall) -> bool {
    matches!(call, StoreCall::CreateVersion | StoreCall::CreateVersionAssigningId)
}

fn avro(tag: &str) -> NewSchema {
    let name: String = tag.chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '_' }).collect();
    let text = format!(r#"{{"type":"record","name":"D_{name}","fields":[{{"name":"f","type":"string"}}]}}"#);
    NewSchema { schema: Some(text), ..NewSchema::default() }
}

async fn register(registry: &Registry, subject: &Subject, schema: NewSchema, case: &str) -> Version {
    let record = registry.register(subject.as_str(), schema, RegisterOptions::default()).await;
    record.unwrap_or_else(|e| panic!("{case}: register into {subject}: {e}")).version
}

async fn set_alias(registry: &Registry, subject: &Subject, target: &Subject) -> Result<(), RegistryError> {
    let config = ConfigRecord {
        alias: Some(target.to_string()),
        compatibility_level: Some(CompatibilityLevel::None),
        ..ConfigRecord::default()
    };
    registry.set_config(&Scope::Subject(subject.clone()), config).await.map(drop)
}

async fn live_versions(store: &Arc<dyn Store>, subject: &Subject) -> Vec<Version> {
    let rows = store.versions(subject).await.expect("decisions: versions");
    rows.iter().filter(|row| !row.deleted).map(|row| row.version).collect()
}

/// An alias changed between a write's reads and its commit: once `PUT /config/al {"alias":"t2"}`
/// is acknowledged, a registration or a delete through `al` must not commit into `t1`. The
/// aliasing subject's config, as the write read it, is a condition of its commit.
pub async fn alias_change_between_decision_and_commit(store: Arc<dyn Store>) {
    let case = "alias_change_between_decision_and_commit";
    let (alias, first, second_target) = (unique_subject("al"), unique_subject("t1"), unique_subject("t2"));
    let setup = plain(&store);
    set_alias(&setup, &alias, &first).await.unwrap_or_else(|e| panic!("{case}: alias: {e}"));

    // A registration through the alias, the alias moved to t2 right before its commit.
    let moved = {
        let (registry, alias, target) = (plain(&store), alias.clone(), second_target.clone());
        async move { set_alias(&registry, &alias, &target).await }
    };
    let (registry, answer) = interleaved(&store, row_commit, moved);
    let record = registry.register(alias.as_str(), avro(&unique_name("aliased")), RegisterOptions::default()).await;
    let record = record.unwrap_or_else(|e| panic!("{case}: register through the alias: {e}"));
    second(answer, case).await.unwrap_or_else(|e| panic!("{case}: moving the alias: {e}"));
    assert!(
        live_versions(&store, &first).await.is_empty(),
        "{case}: a registration through {alias} committed into {first} after the alias named {second_target}"
    );
    assert_eq!(record.subject, second_target, "{case}: the registration answers the alias's target when it committed");

    // A delete through the alias, the alias moved back to t1 right before its commit.
    register(&setup, &first, avro(&unique_name("first")), case).await;
    let moved = {
        let (registry, alias, target) = (plain(&store), alias.clone(), first.clone());
        async move { set_alias(&registry, &alias, &target).await }
    };
    let soft_delete = |call: StoreCall| call == StoreCall::SoftDeleteVersions;
    let (registry, answer) = interleaved(&store, soft_delete, moved);
    let deleted = registry.delete_subject(alias.as_str(), false).await;
    let deleted = deleted.unwrap_or_else(|e| panic!("{case}: delete through the alias: {e}"));
    second(answer, case).await.unwrap_or_else(|e| panic!("{case}: moving the alias back: {e}"));
    assert_eq!(deleted, [Version(1)], "{case}: the delete answers the target's versions");
    assert_eq!(
        live_versions(&store, &second_target).await,
        [Version(1)],
        "{case}: a delete through {alias} committed into {second_target} after the alias named {first}"
    );
    assert!(
        live_versions(&store, &first).await.is_empty(),
        "{case}: the delete went to the alias's target when it committed"
    );
}
