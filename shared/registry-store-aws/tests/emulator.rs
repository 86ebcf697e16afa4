//! What only `AwsStore` has, on the emulator (moto server; see scripts/emulator-start.sh): where its
//! data lives. The per-method contract and the races are `registry_core::testkit` (tests/conformance.rs);
//! AWS calls per operation are counted in tests/calls.rs.

mod support;

use registry_core::Store;
use support::{body, with_store};

#[tokio::test]
async fn bodies_live_in_s3_under_their_fingerprint() {
    with_store(|store, sdk| async move {
        let b = body("\"string\"");
        let fp = b.fingerprint();
        store.put_body(&fp, &b).await.unwrap_or_else(|e| panic!("{e}"));
        let s3 = aws_sdk_s3::Client::from_conf(aws_sdk_s3::config::Builder::from(&sdk).force_path_style(true).build());
        let head = s3.head_object().bucket(store.config().bucket).key(format!("schemas/{}", fp.to_hex())).send().await;
        assert!(head.is_ok(), "body must live at schemas/<sha256 hex>");
    })
    .await;
}
