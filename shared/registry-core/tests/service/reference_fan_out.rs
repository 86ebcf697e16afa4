//! A posted schema's references cost one read per distinct referenced subject, and a list over
//! the cap is refused before any of them is read (a read-role request cannot make the store work
//! once per reference).

use crate::common::*;
use registry_core::testkit::{HookedStore, StoreCall};
use registry_core::{
    LookupOptions, MemoryStore, NewSchema, Registry, RegistryError, RegistrySettings, SchemaReference, StoreResult,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

const ADDRESS: &str = r#"{"type":"record","name":"Address","fields":[{"name":"street","type":"string"}]}"#;
const PERSON: &str = r#"{"type":"record","name":"Person","fields":[{"name":"home","type":"Address"}]}"#;

/// Counts the reads of whole subjects (`Store::versions`).
#[derive(Default)]
struct SubjectReads(AtomicUsize);

impl registry_core::testkit::StoreHook for SubjectReads {
    fn before(&self, call: StoreCall) -> StoreResult<()> {
        if call == StoreCall::Versions {
            self.0.fetch_add(1, Ordering::Relaxed);
        }
        Ok(())
    }
}

/// A registry with `address` v1 and `person` v1 referencing it, and the counter of subject reads.
async fn given_person() -> (Registry, Arc<HookedStore<SubjectReads>>) {
    let store = Arc::new(HookedStore::new(Arc::new(MemoryStore::new()), SubjectReads::default()));
    let r = Registry::new(store.clone(), RegistrySettings::default());
    reg(&r, "address", ADDRESS).await;
    let person = NewSchema { references: latest_addresses(1), ..avro(PERSON) };
    ok(r.register("person", person, Default::default()).await);
    (r, store)
}

/// `count` references to the latest version of `address`.
fn latest_addresses(count: usize) -> Vec<SchemaReference> {
    (0..count).map(|_| SchemaReference { name: "Address".into(), subject: "address".into(), version: -1 }).collect()
}

fn reads(store: &HookedStore<SubjectReads>) -> usize {
    store.hook().0.swap(0, Ordering::Relaxed)
}

/// The reads of a lookup and a compatibility test posting `references`.
async fn reads_of_requests_posting(r: &Registry, store: &HookedStore<SubjectReads>, count: usize) -> (usize, usize) {
    reads(store);
    let posted = NewSchema { references: latest_addresses(count), ..avro(PERSON) };
    // v1 lists one reference: the lookup resolves them all and finds nothing.
    let lookup = r.lookup("person", posted.clone(), LookupOptions::default()).await;
    assert!(matches!(lookup, Err(RegistryError::SchemaNotFound)), "{lookup:?}");
    let lookup_reads = reads(store);
    let report = ok(r.test_compatibility("person", None, posted, false, false).await);
    assert!(report.is_compatible);
    (lookup_reads, reads(store))
}

#[tokio::test]
async fn each_referenced_subject_is_read_once_however_many_references_name_it() {
    let (r, store) = given_person().await;
    let two = reads_of_requests_posting(&r, &store, 2).await;
    let many = reads_of_requests_posting(&r, &store, 5_000).await;
    assert_eq!(many, two, "5,000 references to one subject cost what two do");
}

#[tokio::test]
async fn more_references_than_the_cap_are_refused_before_any_is_read() {
    let (r, store) = given_person().await;
    reads(&store);
    let posted = NewSchema { references: latest_addresses(10_001), ..avro(PERSON) };
    let refused = err(r.lookup("person", posted.clone(), LookupOptions::default()).await);
    assert!(matches!(&refused, RegistryError::InvalidSchema { reason } if reason == "Too many schema references"));
    assert_eq!(reads(&store), 1, "only the subject looked up");
    let refused = err(r.register("person", posted, Default::default()).await);
    assert!(matches!(&refused, RegistryError::InvalidSchema { reason } if reason == "Too many schema references"));
    assert_eq!(reads(&store), 1, "only the subject registered into");
}
