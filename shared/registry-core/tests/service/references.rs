//! Schema references: registration, resolution, referenced-by and delete protection.

use crate::common::*;
use registry_core::{
    NewSchema, RegisterOptions, Registry, RegistryError, SchemaRecord, SchemaReference, VersionSelector,
};

fn reference(name: &str, subject: &str, version: i32) -> SchemaReference {
    SchemaReference { name: name.to_string(), subject: subject.to_string(), version }
}

async fn with_refs(
    r: &Registry,
    subject: &str,
    text: &str,
    refs: Vec<SchemaReference>,
) -> Result<SchemaRecord, RegistryError> {
    r.register(subject, NewSchema { references: refs, ..avro(text) }, RegisterOptions::default()).await
}

const ADDRESS: &str = r#"{"type":"record","name":"Address","fields":[{"name":"street","type":"string"}]}"#;
const PERSON: &str = r#"{"type":"record","name":"Person","fields":[{"name":"home","type":"Address"}]}"#;
const TEAM: &str = r#"{"type":"record","name":"Team","fields":[{"name":"lead","type":"Person"}]}"#;

async fn given_person(r: &Registry) -> (SchemaRecord, SchemaRecord) {
    let address = reg(r, "address", ADDRESS).await;
    let person = ok(with_refs(r, "person", PERSON, vec![reference("Address", "address", 1)]).await);
    (address, person)
}

#[tokio::test]
async fn a_schema_with_a_reference_registers_and_keeps_its_references() {
    let r = registry();
    let (_, person) = given_person(&r).await;
    assert_eq!(person.body.references, vec![reference("Address", "address", 1)]);
    let fetched = ok(r.version("person", VersionSelector::Latest, false).await);
    assert_eq!(fetched.body.references, person.body.references);
    assert_eq!(ok(r.schema_by_id(person.id.0).await).body.references, person.body.references);
}

#[tokio::test]
async fn nested_references_resolve_through_the_closure() {
    let r = registry();
    given_person(&r).await;
    let team = ok(with_refs(&r, "team", TEAM, vec![reference("Person", "person", 1)]).await);
    assert_eq!(team.version.0, 1);
}

#[tokio::test]
async fn a_missing_or_soft_deleted_reference_is_42201() {
    let r = registry();
    let e = err(with_refs(&r, "person", PERSON, vec![reference("Address", "address", 1)]).await);
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
    reg(&r, "address", ADDRESS).await;
    ok(r.delete_version("address", v(1), false).await);
    let e = err(with_refs(&r, "person", PERSON, vec![reference("Address", "address", 1)]).await);
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
}

#[tokio::test]
async fn a_named_type_without_its_reference_is_42201() {
    let r = registry();
    reg(&r, "address", ADDRESS).await;
    let e = err(with_refs(&r, "person", PERSON, Vec::new()).await);
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
}

#[tokio::test]
async fn referenced_by_lists_referrer_ids() {
    let r = registry();
    let (_, person) = given_person(&r).await;
    assert_eq!(ok(r.referenced_by("address", v(1), false).await), vec![person.id]);
    assert!(ok(r.referenced_by("person", VersionSelector::Latest, false).await).is_empty());
    ok(r.delete_version("person", v(1), false).await);
    assert!(ok(r.referenced_by("address", v(1), false).await).is_empty(), "soft-deleted referrers hidden");
    assert_eq!(ok(r.referenced_by("address", v(1), true).await), vec![person.id]);
    assert!(matches!(err(r.referenced_by("nope", v(1), false).await), RegistryError::SubjectNotFound { .. }));
    assert!(matches!(err(r.referenced_by("address", v(4), false).await), RegistryError::VersionNotFound { .. }));
}

#[tokio::test]
async fn a_referenced_version_cannot_be_deleted_while_a_live_referrer_exists() {
    let r = registry();
    given_person(&r).await;
    let e = err(r.delete_version("address", v(1), false).await);
    assert_eq!(
        e.to_string(),
        "One or more references exist to the schema {magic=1,keytype=SCHEMA,subject=address,version=1}."
    );
    assert!(matches!(err(r.delete_subject("address", false).await), RegistryError::ReferenceExists { .. }));
    ok(r.delete_version("person", v(1), false).await);
    assert_eq!(ok(r.delete_version("address", v(1), false).await).0, 1, "soft-deleting the referrer unblocks");
    let e = err(r.delete_version("address", v(1), true).await);
    assert!(matches!(e, RegistryError::ReferenceExists { .. }), "hard delete blocked by a soft-deleted referrer");
    ok(r.delete_version("person", v(1), true).await);
    assert_eq!(ok(r.delete_version("address", v(1), true).await).0, 1);
}
