//! `GET /schemas/guids/{guid}` through the guid index: answers across deletes and re-registration,
//! 40403 cases, and the repair of entries missing from data written before the index existed.

use crate::common::*;
use registry_core::testkit::{self, StoreTestExt};
use registry_core::{
    Guid, MemoryStore, Registry, RegistryError, RegistrySettings, SchemaBody, SchemaType, Store, Subject,
};
use std::sync::Arc;

fn guid_of(record: &registry_core::SchemaRecord) -> String {
    Guid::of(&record.body).to_string()
}

#[tokio::test]
async fn a_registered_schema_resolves_by_guid_in_either_case() {
    let r = registry();
    let text = rec("A", &[("a", "int")]);
    let record = reg(&r, "s", &text).await;
    let found = ok(r.schema_by_guid(&guid_of(&record)).await);
    assert_eq!((found.id, found.body.schema.as_str()), (record.id, text.as_str()));
    let upper = ok(r.schema_by_guid(&guid_of(&record).to_ascii_uppercase()).await);
    assert_eq!(upper.id, record.id);
}

#[tokio::test]
async fn unknown_or_malformed_guids_are_40403() {
    let r = registry();
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    for wanted in ["00000000-0000-0000-0000-000000000000", "not-a-guid", ""] {
        let e = err(r.schema_by_guid(wanted).await);
        assert!(matches!(e, RegistryError::SchemaNotFound), "{wanted:?}: {e:?}");
    }
}

#[tokio::test]
async fn soft_deleted_resolves_hard_deleted_is_40403_and_re_registered_has_its_new_id() {
    let r = registry();
    let text = rec("A", &[("a", "int")]);
    let first = reg(&r, "s", &text).await;
    let guid = guid_of(&first);
    ok(r.delete_subject("s", false).await);
    assert_eq!(ok(r.schema_by_guid(&guid).await).id, first.id, "a soft-deleted schema still resolves, as by id");
    ok(r.delete_subject("s", true).await);
    let e = err(r.schema_by_guid(&guid).await);
    assert!(matches!(e, RegistryError::SchemaNotFound), "gone after the hard delete: {e:?}");

    let again = reg(&r, "s", &text).await;
    assert_ne!(again.id, first.id, "the same schema registered again gets a new id");
    assert_eq!(guid_of(&again), guid);
    let found = ok(r.schema_by_guid(&guid).await);
    assert_eq!(found.id, again.id, "the guid resolves to the new id");
}

#[tokio::test]
async fn the_same_schema_in_two_subjects_resolves_to_its_one_id() {
    let r = registry();
    let text = rec("A", &[("a", "int")]);
    let first = reg(&r, "s1", &text).await;
    let second = reg(&r, "s2", &text).await;
    assert_eq!(first.id, second.id);
    ok(r.delete_subject("s1", false).await);
    ok(r.delete_subject("s1", true).await);
    assert_eq!(ok(r.schema_by_guid(&guid_of(&first)).await).id, first.id, "still carried by s2");
}

/// Data written before the index existed: body, ID and row, but no guid entry.
#[tokio::test]
async fn registering_an_unindexed_schema_again_creates_its_entry() {
    let store = Arc::new(MemoryStore::new());
    let text = rec("Old", &[("a", "int")]);
    let body = SchemaBody {
        schema_type: SchemaType::Avro,
        schema: text.clone(),
        references: Vec::new(),
        metadata: None,
        rule_set: None,
    };
    let fingerprint = body.fingerprint();
    let subject = Subject::new("legacy").unwrap_or_else(|e| panic!("{e}"));
    let written = async {
        store.put_body(&fingerprint, &body).await?;
        let id = store.allocate_id(&fingerprint).await?;
        store.add_version(&testkit::row(&subject, 1, id, fingerprint)).await?;
        Ok::<_, registry_core::StoreError>(id)
    };
    let id = written.await.unwrap_or_else(|e| panic!("{e}"));
    let r = Registry::new(store.clone(), RegistrySettings::default());
    let guid = Guid::of(&body).to_string();
    assert!(matches!(err(r.schema_by_guid(&guid).await), RegistryError::SchemaNotFound), "not indexed yet");

    let again = reg(&r, "legacy", &text).await;
    assert_eq!((again.id, again.version.0), (id, 1), "a lookup-first hit, not a new version");
    assert_eq!(ok(r.schema_by_guid(&guid).await).id, id, "the hit created the missing entry");
}
