//! Schema linking on the emulator: the exporter records in the registry's table pass the exporter
//! store conformance cases, and credentials sealed by [`KmsSealer`] are KMS ciphertexts that open
//! only under their encryption context, with a clear refusal when no key is configured.

use registry_exporter::{Binding, Sealer};
use registry_store_aws::exporter_secrets::{KmsSealer, SEALED_PREFIX};
use registry_store_aws::exporter_store::DynamoExporterStore;
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::testing::{create_kms_key, emulator_sdk, unique_names};

#[tokio::test]
async fn exporter_records_conform() {
    let Some(sdk) = emulator_sdk().await else { return };
    let names = unique_names("exporters");
    create_resources(&sdk, &names, true).await.unwrap_or_else(|e| panic!("creating {}: {e}", names.table));
    let store = DynamoExporterStore::new(aws_sdk_dynamodb::Client::new(&sdk), names.table.clone());
    let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(
        registry_exporter::testkit::exporter_store_conformance(&store),
    ))
    .await;
    let deleted = delete_resources(&sdk, &names, true).await;
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
    deleted.unwrap_or_else(|e| panic!("deleting {}: {e}", names.table));
}

/// The binding of the credentials these cases seal.
const ORDERS: Binding<'static> = Binding { exporter: "orders", destination: "https://dr.example:8081" };

/// `plaintext` encrypted under `key` with `context` directly (what another use of the key, or an
/// earlier release, made).
async fn encrypted(sdk: &aws_config::SdkConfig, key: &str, context: &[(&str, &str)]) -> String {
    let mut request = aws_sdk_kms::Client::new(sdk)
        .encrypt()
        .key_id(key)
        .plaintext(aws_sdk_kms::primitives::Blob::new("alice:s3cret"));
    for (name, value) in context {
        request = request.encryption_context(*name, *value);
    }
    let output = request.send().await.unwrap_or_else(|e| panic!("Encrypt: {e:?}"));
    let blob = output.ciphertext_blob.unwrap_or_else(|| panic!("no ciphertext"));
    use base64::Engine;
    format!("{SEALED_PREFIX}{}", base64::engine::general_purpose::STANDARD.encode(blob.as_ref()))
}

#[tokio::test]
async fn credentials_are_kms_ciphertexts() {
    let Some(sdk) = emulator_sdk().await else { return };
    let sealer = KmsSealer::new(&sdk, Some(create_kms_key(&sdk, "exporter credentials").await));
    let sealed = sealer.seal("alice:s3cret", ORDERS).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(sealed.starts_with(SEALED_PREFIX) && !sealed.contains("alice"), "{sealed}");
    assert_ne!(
        sealer.seal("alice:s3cret", ORDERS).await.unwrap_or_else(|e| panic!("{e}")),
        sealed,
        "a fresh ciphertext each time"
    );
    assert_eq!(sealer.open(&sealed, ORDERS).await.unwrap_or_else(|e| panic!("{e}")), "alice:s3cret");

    // Opening needs no key configured (KMS finds it in the ciphertext); sealing does.
    let keyless = KmsSealer::new(&sdk, None);
    assert_eq!(keyless.open(&sealed, ORDERS).await.unwrap_or_else(|e| panic!("{e}")), "alice:s3cret");
    let refused = keyless.seal("alice:s3cret", ORDERS).await.map_err(|e| e.0);
    assert!(refused.as_ref().is_err_and(|e| e.contains("REGISTRY_EXPORTER_KMS_KEY")), "{refused:?}");

    // A ciphertext of the same key without the exporters' encryption context does not open.
    let key = create_kms_key(&sdk, "exporter credentials").await;
    let foreign = encrypted(&sdk, &key, &[]).await;
    assert!(sealer.open(&foreign, ORDERS).await.is_err(), "opened a ciphertext made for another use");
    assert!(sealer.open("sealed:v1:AAAA", ORDERS).await.is_err(), "a locally sealed value is refused, not passed on");
}

#[tokio::test]
async fn a_credential_opens_only_for_its_exporter_and_destination() {
    let Some(sdk) = emulator_sdk().await else { return };
    let key = create_kms_key(&sdk, "exporter credentials").await;
    let sealer = KmsSealer::new(&sdk, Some(key.clone()));
    let sealed = sealer.seal("alice:s3cret", ORDERS).await.unwrap_or_else(|e| panic!("{e}"));
    let other_exporter = Binding { exporter: "payments", ..ORDERS };
    let opened = sealer.open(&sealed, other_exporter).await.map_err(|e| e.0);
    assert!(opened.is_err(), "a ciphertext copied into another exporter's config opened: {opened:?}");
    let other_destination = Binding { destination: "https://attacker.example:8081", ..ORDERS };
    let opened = sealer.open(&sealed, other_destination).await.map_err(|e| e.0);
    assert!(opened.is_err(), "a ciphertext opened for another destination: {opened:?}");

    // Sealed by the earlier release (the purpose alone in the context): still opens.
    let legacy = encrypted(&sdk, &key, &[("purpose", "registry-exporter-credential")]).await;
    assert_eq!(sealer.open(&legacy, ORDERS).await.unwrap_or_else(|e| panic!("{e}")), "alice:s3cret");
}
