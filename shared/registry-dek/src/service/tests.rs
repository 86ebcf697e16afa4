//! The service's rules over the memory store, local KMS and a refusing KMS.

use super::*;
use crate::kms::{Kms, KmsError};
use crate::local_kms::LocalKms;
use crate::memory::MemoryKeyStore;
use crate::model::LOCAL_KMS;
use std::sync::atomic::{AtomicUsize, Ordering};

type Result = std::result::Result<(), DekError>;

/// A KMS that refuses the registry every key, counting the calls.
#[derive(Default)]
struct RefusingKms {
    calls: AtomicUsize,
}

#[async_trait::async_trait]
impl Kms for RefusingKms {
    async fn encrypt(&self, _: &Kek, _: &[u8]) -> std::result::Result<Vec<u8>, KmsError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Err(KmsError::AccessDenied("not authorized to use the key".into()))
    }

    async fn decrypt(&self, _: &Kek, _: &[u8]) -> std::result::Result<Vec<u8>, KmsError> {
        self.calls.fetch_add(1, Ordering::Relaxed);
        Err(KmsError::AccessDenied("not authorized to use the key".into()))
    }
}

fn local_kms() -> LocalKms {
    LocalKms::new("test-secret").unwrap_or_else(|error| panic!("local KMS: {error}"))
}

fn registry() -> (DekRegistry, Arc<RefusingKms>) {
    let refusing = Arc::new(RefusingKms::default());
    let kms = KmsRegistry::new().with(LOCAL_KMS, Arc::new(local_kms())).with("refusing-kms", refusing.clone());
    (DekRegistry::new(Arc::new(MemoryKeyStore::new()), kms), refusing)
}

/// A registry holding one KEK, created without testing its KMS.
async fn registry_with_kek(
    name: &str,
    kms_type: &str,
    shared: bool,
) -> std::result::Result<(DekRegistry, Arc<RefusingKms>), DekError> {
    let (registry, refusing) = registry();
    registry.create_kek(new_kek(name, kms_type, shared), false).await?;
    Ok((registry, refusing))
}

fn new_kek(name: &str, kms_type: &str, shared: bool) -> NewKek {
    NewKek {
        name: name.into(),
        kms_type: Some(kms_type.into()),
        kms_key_id: Some("key-1".into()),
        shared,
        ..NewKek::default()
    }
}

fn new_dek(subject: &str, version: Option<i32>, material: Option<&str>) -> NewDek {
    NewDek { subject: subject.into(), version, encrypted_key_material: material.map(Into::into), ..NewDek::default() }
}

fn code(error: &DekError) -> &'static str {
    match error {
        DekError::KeyNotFound(_) => "40470",
        DekError::KeyNotSoftDeleted(_) => "40471",
        DekError::KeySoftDeleted(_) => "40472",
        DekError::AlreadyExists(_) => "40971",
        DekError::InvalidKey(_) => "42271",
        DekError::ReferenceExists(_) => "42272",
        DekError::GenerationForbidden(_) => "40370",
        DekError::Generation(_) => "50070",
        DekError::InvalidVersion(_) => "42202",
        _ => "other",
    }
}

fn assert_code<T: std::fmt::Debug>(result: std::result::Result<T, DekError>, expected: &str) {
    match result {
        Err(error) => assert_eq!(code(&error), expected, "{error}"),
        Ok(value) => panic!("expected error {expected}, got {value:?}"),
    }
}

#[tokio::test]
async fn kek_lifecycle_follows_confluent() -> Result {
    let (registry, _) = registry();
    let created = registry.create_kek(new_kek("k1", "local-kms", false), false).await?;
    assert!(created.ts > 0);
    assert_eq!(registry.kek("k1", false).await?, created);
    assert_code(registry.create_kek(new_kek("k1", "local-kms", false), false).await, "40971");
    let mut other = new_kek("k1", "local-kms", false);
    other.doc = Some("different".into());
    assert_code(registry.create_kek(other, false).await, "40971");

    let updated = registry
        .update_kek("k1", KekUpdate { doc: Some(Some("orders".into())), ..KekUpdate::default() }, false)
        .await?;
    assert_eq!(updated.doc.as_deref(), Some("orders"));
    assert_eq!(updated.kms_key_id, "key-1", "key fields are kept");

    assert_code(registry.delete_kek("k1", true).await, "40471");
    registry.delete_kek("k1", false).await?;
    assert_code(registry.kek("k1", false).await, "40470");
    assert!(registry.kek("k1", true).await?.deleted);
    assert_code(registry.update_kek("k1", KekUpdate::default(), false).await, "40470");
    registry.undelete_kek("k1").await?;
    assert!(!registry.kek("k1", false).await?.deleted);

    registry.delete_kek("k1", false).await?;
    registry.delete_kek("k1", true).await?;
    assert_code(registry.kek("k1", true).await, "40470");
    assert_code(registry.delete_kek("k1", false).await, "40470");
    Ok(())
}

#[tokio::test]
async fn creating_a_deleted_keks_definition_undeletes_it() -> Result {
    let (registry, _) = registry_with_kek("k", "local-kms", false).await?;
    registry.delete_kek("k", false).await?;
    let again = registry.create_kek(new_kek("k", "local-kms", false), false).await?;
    assert!(!again.deleted);
    assert!(!registry.kek("k", false).await?.deleted);
    Ok(())
}

#[tokio::test]
async fn kek_input_is_checked_and_kms_type_normalised() -> Result {
    let (registry, _) = registry();
    assert_code(registry.create_kek(new_kek("9k", "local-kms", false), false).await, "42271");
    let mut no_key = new_kek("k", "local-kms", false);
    no_key.kms_key_id = Some(String::new());
    assert_code(registry.create_kek(no_key, false).await, "42271");
    let mut no_type = new_kek("k", "local-kms", false);
    no_type.kms_type = None;
    assert_code(registry.create_kek(no_type, false).await, "42271");
    assert_code(registry.create_kek(new_kek("k", "AWS", false), false).await, "42271");

    let mut aws = new_kek("k", "AWS", false);
    aws.kms_key_id = Some("arn:aws:kms:us-east-1:111122223333:key/k".into());
    assert_eq!(registry.create_kek(aws, false).await?.kms_type, "aws-kms");
    Ok(())
}

#[tokio::test]
async fn kek_names_filter_deleted_and_page() -> Result {
    let (registry, _) = registry();
    for name in ["c", "a", "b", "d"] {
        registry.create_kek(new_kek(name, "local-kms", false), false).await?;
    }
    registry.delete_kek("b", false).await?;
    assert_eq!(registry.kek_names(&[], false, Page::default()).await?, ["a", "c", "d"]);
    assert_eq!(registry.kek_names(&[], true, Page::default()).await?, ["a", "b", "c", "d"]);
    let page = Page { offset: 1, limit: Some(2) };
    assert_eq!(registry.kek_names(&[], true, page).await?, ["b", "c"]);

    registry.create_dek("c", false, new_dek("orders-value", None, Some("d3JhcA=="))).await?;
    registry.create_dek("d", false, new_dek("payments", None, Some("d3JhcA=="))).await?;
    let prefixes = ["orders".to_owned()];
    assert_eq!(registry.kek_names(&prefixes, false, Page::default()).await?, ["c"]);
    let exact = ["payments".to_owned()];
    assert_eq!(registry.kek_names(&exact, false, Page::default()).await?, ["d"]);
    Ok(())
}

#[tokio::test]
async fn non_shared_keks_store_the_clients_wrapped_key() -> Result {
    // A KEK of a type this registry has no KMS for can still hold client-wrapped DEKs.
    let (registry, refusing) = registry_with_kek("k", "refusing-kms", false).await?;
    assert_code(registry.create_dek("k", false, new_dek("s", None, None)).await, "42271");
    assert_code(registry.create_dek("k", false, new_dek("s", None, Some("not base64!"))).await, "42271");
    assert_code(registry.create_dek("k", false, new_dek("s", Some(0), Some("d3JhcA=="))).await, "42271");

    let first = registry.create_dek("k", false, new_dek("s", None, Some("d3JhcDE="))).await?;
    assert_eq!((first.dek.version, first.dek.algorithm), (1, DekAlgorithm::Aes256Gcm));
    assert_eq!(first.key_material, None, "no plaintext for non-shared KEKs");
    assert_code(registry.create_dek("k", false, new_dek("s", None, Some("d3JhcDE="))).await, "40971");
    registry.create_dek("k", false, new_dek("s", Some(2), Some("d3JhcDI="))).await?;

    let latest = registry.dek("k", "s", DekVersion::Latest, None, false).await?;
    assert_eq!((latest.dek.version, latest.dek.encrypted_key_material.as_str()), (2, "d3JhcDI="));
    assert_eq!(registry.dek("k", "s", DekVersion::Number(1), None, false).await?.dek, first.dek);
    assert_code(registry.dek("k", "s", DekVersion::Number(3), None, false).await, "40470");
    assert_code(registry.dek("k", "s", DekVersion::Latest, Some(DekAlgorithm::Aes256Siv), false).await, "40470");
    assert_code(registry.dek("missing", "s", DekVersion::Latest, None, false).await, "40470");
    assert_eq!(registry.dek_versions("k", "s", None, false, Page::default()).await?, [1, 2]);
    assert_eq!(registry.dek_subjects("k", false, Page::default()).await?, ["s"]);
    assert_eq!(refusing.calls.load(Ordering::Relaxed), 0, "non-shared KEKs never reach the KMS");
    Ok(())
}

#[tokio::test]
async fn shared_keks_generate_and_unwrap_deks() -> Result {
    let (registry, _) = registry();
    registry.create_kek(new_kek("k", "local-kms", true), true).await?;
    let created = registry.create_dek("k", false, new_dek("s", None, None)).await?;
    let key_material = created.key_material.clone().unwrap_or_default();
    let plaintext = BASE64.decode(&key_material).unwrap_or_default();
    assert_eq!(&plaintext[..2], &[0x1a, 32], "an AES256-GCM Tink key");
    let wrapped = BASE64.decode(&created.dek.encrypted_key_material).unwrap_or_default();
    let unwrapped = local_kms().decrypt(&registry.kek("k", false).await?, &wrapped).await;
    assert_eq!(unwrapped.ok(), Some(plaintext.clone()), "stored wrapped by the KEK's KMS");

    let read = registry.dek("k", "s", DekVersion::Latest, None, false).await?;
    assert_eq!(read.key_material.as_deref(), Some(key_material.as_str()), "readers get the plaintext");
    assert_code(registry.create_dek("k", false, new_dek("s", None, None)).await, "40971");
    assert_code(registry.create_dek("k", false, new_dek("s", None, Some("d3JhcA=="))).await, "40971");

    let rewrapped = registry.create_dek("k", true, new_dek("s", None, None)).await?;
    assert_ne!(rewrapped.dek.encrypted_key_material, created.dek.encrypted_key_material, "wrapped anew");
    assert_eq!(rewrapped.key_material, created.key_material, "the same key");

    let siv = registry
        .create_dek("k", false, NewDek { algorithm: Some(DekAlgorithm::Aes256Siv), ..new_dek("s", None, None) })
        .await?;
    let siv_key = BASE64.decode(siv.key_material.unwrap_or_default()).unwrap_or_default();
    assert_eq!((siv_key[0], siv_key.len()), (0x12, 66), "an AES256-SIV Tink key");
    assert_eq!(registry.test_kek("k").await?.name, "k");
    Ok(())
}

#[tokio::test]
async fn kms_refusals_and_missing_kms_are_clear_errors() -> Result {
    let (registry, refusing) = registry_with_kek("denied", "refusing-kms", true).await?;
    assert_code(registry.create_dek("denied", false, new_dek("s", None, None)).await, "40370");
    assert_code(registry.create_kek(new_kek("denied2", "refusing-kms", true), true).await, "40370");
    assert_code(registry.test_kek("denied").await, "40370");
    assert!(refusing.calls.load(Ordering::Relaxed) >= 3);

    registry.create_kek(new_kek("vault", "hcvault-x", true), false).await?;
    assert_code(registry.create_dek("vault", false, new_dek("s", None, None)).await, "50070");
    registry.create_kek(new_kek("plain", "local-kms", false), false).await?;
    assert_code(registry.test_kek("plain").await, "42271");
    assert_eq!(registry.dek_subjects("denied", true, Page::default()).await?, Vec::<String>::new());
    Ok(())
}

#[tokio::test]
async fn deletes_follow_confluent() -> Result {
    let (registry, _) = registry_with_kek("k", "local-kms", false).await?;
    for version in 1..=2 {
        registry.create_dek("k", false, new_dek("s", Some(version), Some("d3JhcA=="))).await?;
    }
    assert_code(registry.delete_kek("k", false).await, "42272");
    assert_code(registry.delete_deks("k", "s", None, true).await, "40471");
    assert_code(registry.delete_deks("k", "other", None, false).await, "40470");

    registry.delete_dek_version("k", "s", DekVersion::Number(2), None, false).await?;
    assert_eq!(registry.dek_versions("k", "s", None, false, Page::default()).await?, [1]);
    assert_eq!(registry.dek_versions("k", "s", None, true, Page::default()).await?, [1, 2]);
    assert_eq!(registry.dek("k", "s", DekVersion::Latest, None, false).await?.dek.version, 1);
    assert_eq!(registry.dek("k", "s", DekVersion::Latest, None, true).await?.dek.version, 2);
    registry.undelete_dek_version("k", "s", DekVersion::Number(2), None).await?;
    assert_eq!(registry.dek_versions("k", "s", None, false, Page::default()).await?, [1, 2]);

    registry.delete_deks("k", "s", None, false).await?;
    assert!(registry.dek_subjects("k", false, Page::default()).await?.is_empty());
    assert_eq!(registry.dek_subjects("k", true, Page::default()).await?, ["s"]);
    registry.delete_kek("k", false).await?;
    assert_code(registry.undelete_deks("k", "s", None).await, "40472");
    assert_code(registry.undelete_dek_version("k", "s", DekVersion::Number(1), None).await, "40472");
    assert_code(registry.create_dek("k", false, new_dek("t", None, Some("d3JhcA=="))).await, "40470");
    assert_code(registry.delete_kek("k", true).await, "42272");

    registry.delete_deks("k", "s", None, true).await?;
    assert!(registry.dek_subjects("k", true, Page::default()).await?.is_empty());
    registry.delete_kek("k", true).await?;
    assert_code(registry.kek("k", true).await, "40470");
    Ok(())
}

#[tokio::test]
async fn versions_parse_as_confluent() {
    assert_eq!(DekVersion::parse("latest").ok(), Some(DekVersion::Latest));
    assert_eq!(DekVersion::parse("-1").ok(), Some(DekVersion::Latest));
    assert_eq!(DekVersion::parse("3").ok(), Some(DekVersion::Number(3)));
    for bad in ["0", "-2", "x", "2147483648"] {
        assert_code(DekVersion::parse(bad), "42202");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_creates_of_one_dek_version_have_one_winner() -> Result {
    let (registry, _) = registry();
    let registry = Arc::new(registry);
    registry.create_kek(new_kek("k", "local-kms", true), false).await?;
    let tasks: Vec<_> = (0..16)
        .map(|_| {
            let registry = registry.clone();
            tokio::spawn(async move { registry.create_dek("k", false, new_dek("s", None, None)).await })
        })
        .collect();
    let mut winners = Vec::new();
    for task in tasks {
        match task.await {
            Ok(Ok(answer)) => winners.push(answer),
            Ok(Err(error)) => assert_eq!(code(&error), "40971", "{error}"),
            Err(join) => panic!("task failed: {join}"),
        }
    }
    assert_eq!(winners.len(), 1);
    let stored = registry.dek("k", "s", DekVersion::Latest, None, false).await?;
    assert_eq!(stored.key_material, winners[0].key_material, "the winner's key is the stored one");
    Ok(())
}

/// Oversized fields are refused before any store call (a DynamoDB key holds 1024 bytes, an item
/// 400 KB): 42271 naming the field, and nothing is written.
#[tokio::test]
async fn oversized_fields_are_refused_naming_the_field() -> Result {
    let (registry, _) = registry();
    let big = "x".repeat(validate::FIELD_MAX_BYTES + 1);
    let mut kek = new_kek("k1", "local-kms", false);
    kek.doc = Some(big.clone());
    assert!(matches!(registry.create_kek(kek, false).await, Err(DekError::InvalidKey(f)) if f == "doc"));
    let mut kek = new_kek("k1", "local-kms", false);
    kek.kms_props = BTreeMap::from([("k".to_owned(), big.clone())]);
    assert!(matches!(registry.create_kek(kek, false).await, Err(DekError::InvalidKey(f)) if f == "kmsProps"));
    let mut kek = new_kek("k1", "local-kms", false);
    kek.kms_key_id = Some("k".repeat(validate::KMS_KEY_ID_MAX_BYTES + 1));
    assert!(matches!(registry.create_kek(kek, false).await, Err(DekError::InvalidKey(f)) if f == "kmsKeyId"));
    assert_code(registry.kek("k1", true).await, "40470");

    registry.create_kek(new_kek("k1", "local-kms", false), false).await?;
    let update = KekUpdate { doc: Some(Some(big.clone())), ..KekUpdate::default() };
    assert!(matches!(registry.update_kek("k1", update, false).await, Err(DekError::InvalidKey(f)) if f == "doc"));
    let long_subject = "s".repeat(validate::SUBJECT_MAX_BYTES + 1);
    let created = registry.create_dek("k1", false, new_dek(&long_subject, None, Some("AAAA"))).await;
    assert!(matches!(created, Err(DekError::InvalidKey(f)) if f == "subject"));
    let material = "A".repeat(validate::FIELD_MAX_BYTES + 4);
    let created = registry.create_dek("k1", false, new_dek("s", None, Some(&material))).await;
    assert!(matches!(created, Err(DekError::InvalidKey(f)) if f == "encryptedKeyMaterial"));
    assert_code(registry.dek("k1", "s", DekVersion::Number(1), None, false).await, "40470");
    Ok(())
}

/// A rewrap that replaces a client-wrapped key keeps the replaced one in the record (never destroyed),
/// up to [`MAX_SUPERSEDED_KEY_MATERIALS`]; past it the replacement is refused, and a retry with the
/// current key adds nothing.
#[tokio::test]
async fn a_replaced_client_wrapped_key_stays_in_the_record() -> Result {
    let (registry, _) = registry_with_kek("k", "local-kms", false).await?;
    registry.create_dek("k", false, new_dek("s", None, Some("b2xk"))).await?;
    let replaced = registry.create_dek("k", true, new_dek("s", None, Some("bmV3"))).await?;
    assert_eq!(replaced.dek.encrypted_key_material, "bmV3");
    assert_eq!(replaced.dek.superseded_key_materials, ["b2xk"]);
    let again = registry.create_dek("k", true, new_dek("s", None, Some("bmV3"))).await?;
    assert_eq!(again.dek.superseded_key_materials, ["b2xk"], "the same key supersedes nothing");
    for i in 1..MAX_SUPERSEDED_KEY_MATERIALS {
        let material = BASE64.encode(format!("key {i}"));
        registry.create_dek("k", true, new_dek("s", None, Some(&material))).await?;
    }
    assert_code(registry.create_dek("k", true, new_dek("s", None, Some("bGFzdA=="))).await, "40971");
    let stored = registry.dek("k", "s", DekVersion::Latest, None, false).await?.dek;
    assert_eq!(stored.superseded_key_materials.len(), MAX_SUPERSEDED_KEY_MATERIALS);
    assert_eq!(stored.superseded_key_materials[0], "b2xk");
    Ok(())
}
