//! Reads: lookup, by-ID, listings, single versions.

use crate::common::*;
use registry_core::SubjectScope;
use registry_core::{
    CompatibilityLevel, DeletedFilter, LookupOptions, RegistryError, SchemasQuery, Subject, VersionSelector,
};

#[tokio::test]
async fn lookup_finds_the_registered_version() {
    let r = registry();
    let record = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let found = ok(r.lookup("s", avro(&rec("R", &[("a", "int")])), LookupOptions::default()).await);
    assert_eq!((found.id, found.version, found.body.schema), (record.id, record.version, record.body.schema));
}

#[tokio::test]
async fn lookup_errors_follow_confluent() {
    let r = registry();
    let e = err(r.lookup("nope", avro(&rec("R", &[("a", "int")])), LookupOptions::default()).await);
    assert_eq!(e.to_string(), "Subject 'nope' not found.");
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
    let e = err(r.lookup("s", avro(&rec("Other", &[("a", "int")])), LookupOptions::default()).await);
    assert!(matches!(e, RegistryError::SchemaNotFound), "{e:?}");
    assert_eq!(e.to_string(), "Schema not found");
    let e = err(r.lookup("s", avro("{oops"), LookupOptions::default()).await);
    assert!(matches!(e, RegistryError::InvalidSchema { .. }), "{e:?}");
}

#[tokio::test]
async fn lookup_sees_soft_deleted_versions_only_when_asked() {
    let r = registry();
    reg(&r, "s", &rec("R", &[("a", "int")])).await;
    ok(r.delete_version("s", v(1), false).await);
    let e = err(r.lookup("s", avro(&rec("R", &[("a", "int")])), LookupOptions::default()).await);
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    let options = LookupOptions { include_deleted: true, ..LookupOptions::default() };
    let found = ok(r.lookup("s", avro(&rec("R", &[("a", "int")])), options).await);
    assert!(found.deleted);
}

#[tokio::test]
async fn schema_by_id_resolves_while_a_soft_deleted_row_carries_it() {
    let r = registry();
    let record = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    ok(r.delete_version("s", v(1), false).await);
    assert_eq!(ok(r.schema_by_id(record.id.0).await).body.schema, record.body.schema);
    ok(r.delete_version("s", v(1), true).await);
    let e = err(r.schema_by_id(record.id.0).await);
    assert_eq!(e.to_string(), format!("Schema {} not found", record.id));
}

#[tokio::test]
async fn schema_by_id_of_unknown_ids_is_40403() {
    let r = registry();
    for id in [0, -1, 99] {
        let e = err(r.schema_by_id(id).await);
        assert!(matches!(e, RegistryError::SchemaIdNotFound { id: got } if got == id), "{e:?}");
    }
}

#[tokio::test]
async fn subjects_and_versions_for_an_id() {
    let r = registry();
    let text = rec("R", &[("a", "int")]);
    let record = reg(&r, "b", &text).await;
    reg(&r, "a", &text).await;
    reg(&r, "c", &text).await;
    ok(r.delete_version("c", v(1), false).await);
    let subjects: Vec<String> = ok(r.subjects_for_id(record.id.0, false).await).iter().map(|s| s.to_string()).collect();
    assert_eq!(subjects, ["a", "b"]);
    let all = ok(r.subjects_for_id(record.id.0, true).await);
    assert_eq!(all.len(), 3);
    let pairs: Vec<(String, i32)> =
        ok(r.versions_for_id(record.id.0, false).await).iter().map(|(s, v)| (s.to_string(), v.0)).collect();
    assert_eq!(pairs, [("a".to_string(), 1), ("b".to_string(), 1)]);
}

#[tokio::test]
async fn id_listings_are_empty_when_all_rows_are_soft_deleted_and_40403_when_unknown() {
    let r = registry();
    let record = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    ok(r.delete_subject("s", false).await);
    assert!(ok(r.subjects_for_id(record.id.0, false).await).is_empty());
    assert!(ok(r.versions_for_id(record.id.0, false).await).is_empty());
    for e in [err(r.subjects_for_id(42, false).await), err(r.versions_for_id(42, true).await)] {
        assert_eq!(e.to_string(), "Schema not found");
    }
}

#[tokio::test]
async fn version_latest_is_the_highest_live_version() {
    let r = registry_with_versions(&["A", "B"]).await;
    assert_eq!(ok(r.version("s", VersionSelector::Latest, false).await).version.0, 2);
    ok(r.delete_version("s", v(2), false).await);
    assert_eq!(ok(r.version("s", VersionSelector::Latest, false).await).version.0, 1);
    assert_eq!(ok(r.version("s", VersionSelector::Latest, true).await).version.0, 1, "latest ignores deleted=true");
}

#[tokio::test]
async fn a_soft_deleted_version_is_40402_unless_deleted_is_requested() {
    let r = registry_with_versions(&["A", "B"]).await;
    ok(r.delete_version("s", v(1), false).await);
    let e = err(r.version("s", v(1), false).await);
    assert_eq!(e.to_string(), "Version 1 not found.");
    assert!(ok(r.version("s", v(1), true).await).deleted);
    assert_eq!(err(r.version("s", v(7), true).await).to_string(), "Version 7 not found.");
}

#[tokio::test]
async fn versions_of_missing_or_all_deleted_subjects() {
    let r = registry();
    assert_eq!(err(r.version("nope", v(1), false).await).to_string(), "Subject 'nope' not found.");
    reg(&r, "s", &rec("A", &[("a", "int")])).await;
    ok(r.delete_subject("s", false).await);
    let e = err(r.version("s", VersionSelector::Latest, false).await);
    assert!(matches!(e, RegistryError::SubjectNotFound { .. }), "{e:?}");
    let e = err(r.version("s", VersionSelector::Latest, true).await);
    assert_eq!(e.to_string(), "Version -1 not found.");
}

#[tokio::test]
async fn version_numbers_under_each_filter() {
    let r = registry_with_versions(&["A", "B", "C"]).await;
    ok(r.delete_version("s", v(2), false).await);
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::LiveOnly).await)), [1, 3]);
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::IncludeDeleted).await)), [1, 2, 3]);
    assert_eq!(nums(&ok(r.version_numbers("s", DeletedFilter::DeletedOnly).await)), [2]);
    let e = err(r.version_numbers("nope", DeletedFilter::LiveOnly).await);
    assert_eq!(e.to_string(), "Subject 'nope' not found.");
}

#[tokio::test]
async fn subjects_page_lists_by_filter_prefix_and_page() {
    let r = registry();
    for s in ["b", "a", "c", "x-1"] {
        reg(&r, s, &rec("R", &[("a", "int")])).await;
    }
    ok(r.delete_subject("c", false).await);
    let names = |list: Vec<Subject>| list.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert_eq!(
        names(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::LiveOnly, None, 100).await)),
        ["a", "b", "x-1"]
    );
    assert_eq!(
        names(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::IncludeDeleted, None, 100).await)),
        ["a", "b", "c", "x-1"]
    );
    assert_eq!(names(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::DeletedOnly, None, 100).await)), ["c"]);
    assert_eq!(names(ok(r.subjects_page(&SubjectScope::All, "x-", DeletedFilter::LiveOnly, None, 100).await)), ["x-1"]);
    let after = Subject::new("a").ok();
    assert_eq!(
        names(ok(r.subjects_page(&SubjectScope::All, "", DeletedFilter::LiveOnly, after.as_ref(), 1).await)),
        ["b"]
    );
}

#[tokio::test]
async fn schemas_listing_honours_prefix_deleted_latest_only_and_paging() {
    let r = registry();
    set_level(&r, "p-1", CompatibilityLevel::None).await;
    reg(&r, "p-1", &rec("A", &[("a", "int")])).await;
    reg(&r, "p-1", &rec("B", &[("a", "int")])).await;
    reg(&r, "p-2", &rec("C", &[("a", "int")])).await;
    reg(&r, "q", &rec("D", &[("a", "int")])).await;
    ok(r.delete_version("p-1", v(2), false).await);
    let list = |query: SchemasQuery| {
        let r = r.clone();
        async move { ok(r.schemas(&query).await).iter().map(|s| format!("{}:{}", s.subject, s.version)).collect::<Vec<_>>() }
    };
    let base = SchemasQuery { subject_prefix: "p-".to_string(), ..SchemasQuery::default() };
    assert_eq!(list(base.clone()).await, ["p-1:1", "p-2:1"]);
    assert_eq!(list(SchemasQuery { include_deleted: true, ..base.clone() }).await, ["p-1:1", "p-1:2", "p-2:1"]);
    let latest = SchemasQuery { include_deleted: true, latest_only: true, ..base.clone() };
    assert_eq!(list(latest).await, ["p-1:2", "p-2:1"]);
    assert_eq!(list(SchemasQuery { offset: 1, limit: 1, ..SchemasQuery::default() }).await, ["p-2:1"]);
    assert_eq!(list(SchemasQuery::default()).await.len(), 3, "limit 0 means the default page");
}

#[tokio::test]
async fn max_id_and_contexts() {
    let r = registry();
    assert_eq!(ok(r.max_id_in(&registry_core::Context::DEFAULT).await), None);
    let record = reg(&r, "s", &rec("R", &[("a", "int")])).await;
    assert_eq!(ok(r.max_id_in(&registry_core::Context::DEFAULT).await), Some(record.id));
    assert_eq!(ok(r.contexts().await), ["."]);
}

#[tokio::test]
async fn lookup_of_bare_text_matches_a_version_with_metadata() {
    let r = registry();
    let stamped = registry_core::NewSchema { version: Some(1), ..avro(r#""string""#) };
    let record = ok(r.register("s", stamped, registry_core::RegisterOptions::default()).await);
    assert!(record.body.metadata.is_some());
    let found = ok(r.lookup("s", avro(r#""string""#), LookupOptions::default()).await);
    assert_eq!((found.id, found.version), (record.id, record.version));
    let other_metadata =
        registry_core::NewSchema { metadata: Some(serde_json::json!({"x": 1})), ..avro(r#""string""#) };
    let e = err(r.lookup("s", other_metadata, LookupOptions::default()).await);
    assert!(matches!(e, RegistryError::SchemaNotFound), "{e:?}");
}
