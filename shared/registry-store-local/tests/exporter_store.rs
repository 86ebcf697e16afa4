#![allow(clippy::expect_used, clippy::unwrap_used)]
//! The exporter store conformance cases on the embedded store, and records surviving a reopen.

use registry_exporter::ExporterStore;
use registry_store_local::LocalStore;

#[tokio::test]
async fn exporter_store_conforms() {
    let dir = tempfile::tempdir().expect("tempdir");
    let store = LocalStore::open(dir.path()).expect("open");
    registry_exporter::testkit::exporter_store_conformance(&store).await;
    drop(store);
    let reopened = LocalStore::open(dir.path()).expect("reopen");
    let names: Vec<String> =
        reopened.exporters().await.expect("list").into_iter().map(|s| s.value.exporter.name).collect();
    assert_eq!(names, ["a", "b"], "exporters survive a restart");
}
