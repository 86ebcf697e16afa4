//! Reads run inline only while small: an ID carried by more rows than the inline bound still
//! answers every row, sorted, through the blocking path.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use registry_core::testkit::StoreTestExt;
use registry_core::{Fingerprint, SchemaBody, SchemaId, SchemaType, Subject, Version, VersionRow};
use registry_store_local::LocalStore;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rows_with_id_answers_all_rows_below_and_above_the_inline_bound() {
    let dir = tempfile::tempdir().unwrap();
    let store = LocalStore::open(dir.path()).unwrap();
    let body = SchemaBody {
        schema_type: SchemaType::Avro,
        schema: "\"int\"".into(),
        references: vec![],
        metadata: None,
        rule_set: None,
    };
    let fingerprint: Fingerprint = body.fingerprint();
    let rows: Vec<VersionRow> = (0..100)
        .map(|n| VersionRow {
            subject: Subject::new(format!("s{n:03}")).unwrap(),
            version: Version(1),
            id: SchemaId(if n < 5 { 1 } else { 2 }),
            fingerprint,
            deleted: false,
            references: vec![],
            registered_at_ms: 0,
        })
        .collect();
    store.insert_unchecked(&[(fingerprint, body)], &rows).await.unwrap();

    let few = store.rows_with_id(SchemaId(1)).await.unwrap();
    assert_eq!(few, rows[..5].to_vec());
    let many = store.rows_with_id(SchemaId(2)).await.unwrap();
    assert_eq!(many.len(), 95);
    assert_eq!(many, rows[5..].to_vec(), "every row, sorted by subject");
    assert!(store.rows_with_id(SchemaId(3)).await.unwrap().is_empty());
}
