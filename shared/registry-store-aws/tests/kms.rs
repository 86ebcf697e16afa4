//! `aws-kms` on the emulator (moto serves KMS): DEK key material wrapped and unwrapped under a key
//! ARN as a client's AWS KMS driver does it, and KMS refusals classified for the registry.
//!
//! moto refuses a ciphertext under another key, an unknown key and a malformed ciphertext, but
//! not a disabled key or one pending deletion (it encrypts with them): those codes'
//! classification is unit-tested in `src/kms.rs`. Every refusal of the key is `AccessDenied`
//! (answered 403 / 40370).

use aws_config::SdkConfig;
use aws_sdk_kms::primitives::Blob;
use registry_dek::{Kek, Kms, KmsError};
use registry_store_aws::AwsKms;
use registry_store_aws::testing::emulator_sdk;

/// A new symmetric key on the emulator: its ARN.
async fn create_key(sdk: &SdkConfig) -> String {
    let client = aws_sdk_kms::Client::new(sdk);
    let created = client.create_key().description("registry test KEK").send().await;
    let metadata = created.unwrap_or_else(|e| panic!("CreateKey: {e:?}")).key_metadata;
    metadata.and_then(|m| m.arn).unwrap_or_else(|| panic!("CreateKey answered no ARN"))
}

/// A shared aws-kms KEK naming `arn`.
fn kek(arn: &str) -> Kek {
    Kek {
        name: "pii".into(),
        kms_type: "aws-kms".into(),
        kms_key_id: arn.into(),
        kms_props: Default::default(),
        doc: None,
        shared: true,
        ts: 0,
        deleted: false,
    }
}

/// 16 bytes standing for a DEK's raw key material.
const MATERIAL: &[u8] = b"0123456789abcdef";

#[tokio::test]
async fn material_wraps_and_unwraps_under_the_key_arn_in_one_call_each() {
    let Some(sdk) = emulator_sdk().await else { return };
    let arn = create_key(&sdk).await;
    let kms = AwsKms::new(&sdk, vec![]);
    let wrapped = kms.encrypt(&kek(&arn), MATERIAL).await.unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !wrapped.windows(MATERIAL.len()).any(|w| w == MATERIAL),
        "the plaintext must not show in the wrapped material"
    );
    assert_eq!(kms.calls().get(), 1);
    assert_eq!(kms.decrypt(&kek(&arn), &wrapped).await.unwrap_or_else(|e| panic!("{e}")), MATERIAL);
    assert_eq!(kms.calls().get(), 2);
}

/// What a client's driver (Tink `awskms`, empty associated data) wraps, the registry unwraps, and
/// the reverse: KMS Encrypt/Decrypt with the key ARN and no encryption context.
#[tokio::test]
async fn material_is_interchangeable_with_a_clients_aws_kms_driver() {
    let Some(sdk) = emulator_sdk().await else { return };
    let arn = create_key(&sdk).await;
    let kms = AwsKms::new(&sdk, vec![]);
    let client = aws_sdk_kms::Client::new(&sdk);

    let by_client = client.encrypt().key_id(&arn).plaintext(Blob::new(MATERIAL)).send().await;
    let by_client = by_client.unwrap_or_else(|e| panic!("{e:?}")).ciphertext_blob.unwrap_or_else(|| panic!("no blob"));
    assert_eq!(kms.decrypt(&kek(&arn), by_client.as_ref()).await.unwrap_or_else(|e| panic!("{e}")), MATERIAL);

    let by_registry = kms.encrypt(&kek(&arn), MATERIAL).await.unwrap_or_else(|e| panic!("{e}"));
    let unwrapped = client.decrypt().key_id(&arn).ciphertext_blob(Blob::new(by_registry)).send().await;
    let unwrapped = unwrapped.unwrap_or_else(|e| panic!("{e:?}")).plaintext.unwrap_or_else(|| panic!("no plaintext"));
    assert_eq!(unwrapped.as_ref(), MATERIAL);
}

#[tokio::test]
async fn an_unknown_key_is_a_refusal_naming_the_key() {
    let Some(sdk) = emulator_sdk().await else { return };
    let kms = AwsKms::new(&sdk, vec![]);
    let missing = "arn:aws:kms:us-east-1:123456789012:key/00000000-0000-4000-8000-000000000000";
    let refused = kms.encrypt(&kek(missing), MATERIAL).await;
    let named = matches!(&refused, Err(KmsError::AccessDenied(detail)) if detail.contains(missing) && detail.contains("NotFoundException"));
    assert!(named, "{refused:?}");
}

#[tokio::test]
async fn material_wrapped_under_another_key_is_refused_not_unavailable() {
    let Some(sdk) = emulator_sdk().await else { return };
    let (first, second) = (create_key(&sdk).await, create_key(&sdk).await);
    let kms = AwsKms::new(&sdk, vec![]);
    let wrapped = kms.encrypt(&kek(&first), MATERIAL).await.unwrap_or_else(|e| panic!("{e}"));
    // AWS answers IncorrectKeyException (Invalid), moto AccessDeniedException: both a refusal.
    let refused = kms.decrypt(&kek(&second), &wrapped).await;
    assert!(matches!(refused, Err(KmsError::AccessDenied(_) | KmsError::Invalid(_))), "{refused:?}");
    let garbage = kms.decrypt(&kek(&first), b"not a ciphertext").await;
    assert!(matches!(garbage, Err(KmsError::Invalid(_))), "{garbage:?}");
}

#[tokio::test]
async fn a_key_outside_the_allow_list_is_refused_without_calling_kms() {
    let Some(sdk) = emulator_sdk().await else { return };
    let (allowed, other) = (create_key(&sdk).await, create_key(&sdk).await);
    let kms = AwsKms::new(&sdk, vec![allowed.clone()]);
    let refused = kms.encrypt(&kek(&other), MATERIAL).await;
    assert!(
        matches!(&refused, Err(KmsError::AccessDenied(detail)) if detail.contains("REGISTRY_KMS_KEY_ARNS")),
        "{refused:?}"
    );
    assert!(matches!(kms.decrypt(&kek(&other), b"x").await, Err(KmsError::AccessDenied(_))));
    assert_eq!(kms.calls().get(), 0);
    assert!(kms.encrypt(&kek(&allowed), MATERIAL).await.is_ok());
}
