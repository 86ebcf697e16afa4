//! `GET /subjects` is streamed from store pages: complete and ordered across many pages, paged by
//! `offset`/`limit`/`subjectPrefix` as before, a first-page failure keeps its status, and a later
//! failure aborts the body instead of ending a well-formed but partial list.

use axum::body::Body;
use axum::http::{Request, StatusCode};
use http_body_util::BodyExt;
use registry_core::testkit::{HookedStore, StoreCall, StoreHook, StoreTestExt, row};
use registry_core::{
    Fingerprint, MemoryStore, Registry, RegistrySettings, SchemaBody, SchemaId, Store, StoreError, StoreResult,
    Subject, Version, VersionRow,
};
use registry_http::routes::subjects::SUBJECTS_PAGE_SIZE;
use registry_http::{AppOptions, app};
use serde_json::Value;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tower::ServiceExt;

/// More subjects than two store pages.
const MANY: usize = 2 * SUBJECTS_PAGE_SIZE + 500;

fn name(n: usize) -> String {
    format!("s-{n:06}")
}

async fn seeded(store: &MemoryStore, count: usize) {
    for n in 0..count {
        let subject = Subject::new(name(n)).unwrap();
        store.add_version(&row(&subject, 1, SchemaId(1), Fingerprint([1; 32]))).await.unwrap();
    }
}

/// Status, frames of the body (or the error that ended it), and the body bytes read.
async fn get(store: Arc<dyn Store>, uri: &str) -> (StatusCode, usize, Result<Vec<u8>, String>) {
    let registry = Registry::new(store, RegistrySettings::default());
    let request = Request::builder().uri(uri).body(Body::empty()).unwrap();
    let response = app(registry, AppOptions::default()).oneshot(request).await.unwrap();
    let status = response.status();
    let mut body = response.into_body();
    let (mut frames, mut bytes) = (0, Vec::new());
    while let Some(frame) = body.frame().await {
        match frame {
            Ok(frame) => {
                frames += 1;
                bytes.extend_from_slice(frame.data_ref().map(|d| d.as_ref()).unwrap_or_default());
            }
            Err(error) => return (status, frames, Err(error.to_string())),
        }
    }
    (status, frames, Ok(bytes))
}

fn names(bytes: &[u8]) -> Vec<String> {
    let value: Value = serde_json::from_slice(bytes).unwrap();
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect()
}

#[tokio::test]
async fn a_list_of_several_pages_arrives_whole_in_order_over_several_frames() {
    let store = MemoryStore::new();
    seeded(&store, MANY).await;
    let (status, frames, body) = get(Arc::new(store), "/subjects").await;
    assert_eq!(status, StatusCode::OK);
    let listed = names(&body.unwrap());
    assert_eq!(listed, (0..MANY).map(name).collect::<Vec<_>>());
    assert!(frames >= 3, "one frame per store page, got {frames}");
}

#[tokio::test]
async fn offset_limit_and_prefix_cross_page_boundaries() {
    let store: Arc<dyn Store> = {
        let store = MemoryStore::new();
        seeded(&store, MANY).await;
        Arc::new(store)
    };
    let offset = SUBJECTS_PAGE_SIZE - 2;
    let (_, _, body) = get(store.clone(), &format!("/subjects?offset={offset}&limit=5")).await;
    assert_eq!(names(&body.unwrap()), (offset..offset + 5).map(name).collect::<Vec<_>>());
    let (_, _, body) = get(store.clone(), &format!("/subjects?offset={}", MANY - 1)).await;
    assert_eq!(names(&body.unwrap()), [name(MANY - 1)]);
    let (_, _, body) = get(store.clone(), &format!("/subjects?offset={MANY}")).await;
    assert!(names(&body.unwrap()).is_empty());
    let (_, _, body) = get(store.clone(), "/subjects?subjectPrefix=s-0010").await;
    assert_eq!(names(&body.unwrap()), (1000..1100).map(name).collect::<Vec<_>>());
    let (_, _, body) = get(store, "/subjects?subjectPrefix=zzz").await;
    assert!(names(&body.unwrap()).is_empty());
}

#[tokio::test]
async fn a_failure_on_the_first_page_keeps_the_error_status() {
    let store = listing_fails_after(MemoryStore::new(), 0);
    let (status, _, body) = get(store, "/subjects").await;
    assert_eq!(status, StatusCode::INTERNAL_SERVER_ERROR);
    let error: Value = serde_json::from_slice(&body.unwrap()).unwrap();
    assert_eq!(error["error_code"], 50001);
}

#[tokio::test]
async fn a_failure_after_the_first_page_aborts_the_body() {
    let inner = MemoryStore::new();
    seeded(&inner, MANY).await;
    let store = listing_fails_after(inner, 1);
    let (status, frames, body) = get(store, "/subjects").await;
    assert_eq!(status, StatusCode::OK, "the status was sent with the first page");
    assert!(frames >= 1);
    assert!(body.is_err(), "the body must end in an error, not in a closing bracket");
}

#[tokio::test]
async fn a_limited_listing_reads_only_the_names_it_answers() {
    // `GET /subjects?limit=1` (a readiness probe, a UI's first page) must not read a whole page.
    let inner = MemoryStore::new();
    seeded(&inner, MANY).await;
    let store = listing_fails_after(inner, usize::MAX);
    let (_, _, body) = get(store.clone(), "/subjects?offset=3&limit=2").await;
    assert_eq!(names(&body.unwrap()), [name(3), name(4)]);
    assert_eq!(store.hook().names_asked.load(Ordering::SeqCst), 5, "offset + limit names, not a page");
    let (_, _, body) = get(store.clone(), "/subjects?limit=1").await;
    assert_eq!(names(&body.unwrap()), [name(0)]);
    assert_eq!(store.hook().names_asked.load(Ordering::SeqCst), 6);
}

/// A store with `subjects` subjects of `versions` versions each (ID 1, one stored body); the
/// versions in `deleted` are soft-deleted in every subject.
async fn seeded_versions(subjects: usize, versions: i32, deleted: &[i32]) -> Arc<dyn Store> {
    let store = MemoryStore::new();
    let body = SchemaBody {
        schema_type: registry_core::SchemaType::Avro,
        schema: "\"string\"".to_string(),
        references: Vec::new(),
        metadata: None,
        rule_set: None,
    };
    store.put_body(&Fingerprint([1; 32]), &body).await.unwrap();
    for n in 0..subjects {
        let subject = Subject::new(name(n)).unwrap();
        for version in 1..=versions {
            let live = row(&subject, version, SchemaId(1), Fingerprint([1; 32]));
            store.add_version(&VersionRow { deleted: deleted.contains(&version), ..live }).await.unwrap();
        }
    }
    Arc::new(store)
}

fn numbers(bytes: &[u8]) -> Vec<i64> {
    let value: Value = serde_json::from_slice(bytes).unwrap();
    value.as_array().unwrap().iter().map(|v| v.as_i64().unwrap()).collect()
}

#[tokio::test]
async fn a_version_list_of_several_pages_arrives_whole_with_filters_and_paging() {
    // Given one subject with 2,500 versions (three store pages), 1,500 and 2,400 soft-deleted
    let store = seeded_versions(1, 2500, &[1500, 2400]).await;
    let (status, frames, body) = get(store.clone(), &format!("/subjects/{}/versions", name(0))).await;
    assert_eq!(status, StatusCode::OK);
    let live: Vec<i64> = (1..=2500).filter(|v| *v != 1500 && *v != 2400).collect();
    assert_eq!(numbers(&body.unwrap()), live);
    assert!(frames >= 3, "one frame per store page, got {frames}");
    let (_, _, body) = get(store.clone(), &format!("/subjects/{}/versions?deletedOnly=true", name(0))).await;
    assert_eq!(numbers(&body.unwrap()), [1500, 2400], "only deleted ones, found past the first page");
    let (_, _, body) =
        get(store.clone(), &format!("/subjects/{}/versions?deletedAsNegative=true&offset=1498&limit=4", name(0))).await;
    assert_eq!(numbers(&body.unwrap()), [1499, -1500, 1501, 1502]);
    let (_, _, body) = get(store.clone(), &format!("/subjects/{}/versions?offset=999&limit=2", name(0))).await;
    assert_eq!(numbers(&body.unwrap()), [1000, 1001], "the window crosses a page boundary");
    let (_, _, body) = get(store, &format!("/subjects/{}/versions?offset=5000", name(0))).await;
    assert!(numbers(&body.unwrap()).is_empty(), "past the end is an empty list, not 40401");
}

#[tokio::test]
async fn a_subject_whose_versions_are_all_deleted_is_40401_after_every_page_was_read() {
    let deleted: Vec<i32> = (1..=1200).collect();
    let store = seeded_versions(1, 1200, &deleted).await;
    let (status, _, body) = get(store.clone(), &format!("/subjects/{}/versions", name(0))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let error: Value = serde_json::from_slice(&body.unwrap()).unwrap();
    assert_eq!(error["error_code"], 40401);
    let (status, _, body) = get(store, &format!("/subjects/{}/versions?deleted=true&offset=1199", name(0))).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(numbers(&body.unwrap()), [1200]);
}

#[tokio::test]
async fn the_schema_listing_streams_across_subject_pages_and_keeps_its_window() {
    // Given 250 subjects (three pages of subjects) of 3 versions each, version 2 soft-deleted
    let store = seeded_versions(250, 3, &[2]).await;
    let listed = |bytes: &[u8]| -> Vec<String> {
        let value: Value = serde_json::from_slice(bytes).unwrap();
        value
            .as_array()
            .unwrap()
            .iter()
            .map(|s| format!("{}:{}", s["subject"].as_str().unwrap(), s["version"]))
            .collect()
    };
    let (status, frames, body) = get(store.clone(), "/schemas").await;
    assert_eq!(status, StatusCode::OK);
    let all = listed(&body.unwrap());
    assert_eq!(all.len(), 500, "two live versions of each subject");
    assert_eq!(all[..3], [format!("{}:1", name(0)), format!("{}:3", name(0)), format!("{}:1", name(1))]);
    assert!(frames >= 3, "one frame per page of subjects, got {frames}");
    let (_, _, body) = get(store.clone(), "/schemas?offset=199&limit=3").await;
    assert_eq!(
        listed(&body.unwrap()),
        [format!("{}:3", name(99)), format!("{}:1", name(100)), format!("{}:3", name(100))]
    );
    let (_, _, body) = get(store.clone(), "/schemas?deleted=true&latestOnly=true&offset=248").await;
    assert_eq!(listed(&body.unwrap()), [format!("{}:3", name(248)), format!("{}:3", name(249))]);
    let (_, _, body) = get(store, "/schemas?subjectPrefix=nothing").await;
    assert!(listed(&body.unwrap()).is_empty());
}

#[tokio::test]
async fn listings_by_id_page_across_store_pages() {
    // Given one schema ID carried by 2,500 subjects (three store pages), the last 500 soft-deleted
    let store = seeded_versions(2500, 1, &[]).await;
    for n in 2000..2500 {
        store.set_version_deleted(&Subject::new(name(n)).unwrap(), Version(1), true).await.unwrap();
    }
    let (status, _, body) = get(store.clone(), "/schemas/ids/1/subjects?offset=999&limit=2").await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(names(&body.unwrap()), [name(999), name(1000)]);
    let (_, _, body) = get(store.clone(), "/schemas/ids/1/subjects?offset=1999").await;
    assert_eq!(names(&body.unwrap()), [name(1999)], "soft-deleted carriers are left out");
    let (_, _, body) = get(store.clone(), "/schemas/ids/1/subjects?offset=1999&deleted=true").await;
    assert_eq!(names(&body.unwrap()).len(), 501, "with deleted: the 501 from offset 1999");
    let (_, _, body) = get(store.clone(), "/schemas/ids/1/versions?offset=2498&deleted=true").await;
    let pairs: Value = serde_json::from_slice(&body.unwrap()).unwrap();
    assert_eq!(
        pairs,
        serde_json::json!([{"subject": name(2498), "version": 1}, {"subject": name(2499), "version": 1}])
    );
    let (status, _, body) = get(store, "/schemas/ids/7/versions").await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let error: Value = serde_json::from_slice(&body.unwrap()).unwrap();
    assert_eq!(error["error_code"], 40403);
}

/// Lets `list_subjects` succeed `pages_ok` times, then fails it; other calls pass.
#[derive(Debug, Default)]
struct ListingFailsAfter {
    pages_ok: usize,
    calls: AtomicUsize,
    /// Names requested from the store so far (the sum of the pages' limits).
    names_asked: AtomicUsize,
}

impl StoreHook for ListingFailsAfter {
    fn before(&self, call: StoreCall) -> StoreResult<()> {
        let StoreCall::ListSubjects { limit } = call else { return Ok(()) };
        if self.calls.fetch_add(1, Ordering::SeqCst) >= self.pages_ok {
            return Err(StoreError::Corrupt("listing broke".to_string()));
        }
        self.names_asked.fetch_add(limit, Ordering::SeqCst);
        Ok(())
    }
}

/// `inner` behind a [`ListingFailsAfter`] hook.
fn listing_fails_after(inner: MemoryStore, pages_ok: usize) -> Arc<HookedStore<ListingFailsAfter>> {
    Arc::new(HookedStore::new(Arc::new(inner), ListingFailsAfter { pages_ok, ..ListingFailsAfter::default() }))
}
