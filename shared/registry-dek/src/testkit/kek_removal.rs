//! A permanent KEK delete racing the creation of a deleted DEK under it, through the service: the
//! delete decides on "no DEK under the KEK, deleted ones included", so a DEK created meanwhile,
//! deleted or not, must make one of the two fail.

use super::{RACE_TASKS, unique_name};
use crate::kms::KmsRegistry;
use crate::service::{DekRegistry, NewDek, NewKek};
use crate::store::KeyStore;
use std::sync::Arc;

/// [`RACE_TASKS`] rounds: a soft-deleted KEK's permanent delete races the creation of a deleted
/// DEK under it. Never both succeed, and no DEK is left under a KEK that is gone.
pub async fn race_kek_removal_and_deleted_dek_create(store: Arc<dyn KeyStore>) {
    race_kek_removal_and_deleted_dek_create_over(store.clone(), store).await;
}

/// [`race_kek_removal_and_deleted_dek_create`] with the delete through a service over `first` and
/// the creation through one over `second` (two handles of one store: two processes).
pub async fn race_kek_removal_and_deleted_dek_create_over(first: Arc<dyn KeyStore>, second: Arc<dyn KeyStore>) {
    let store = first.clone();
    let registry = Arc::new(DekRegistry::new(first, KmsRegistry::new()));
    let creating = Arc::new(DekRegistry::new(second, KmsRegistry::new()));
    let (mut removed, mut created) = (0, 0);
    for round in 0..RACE_TASKS {
        let name = unique_name("race_removal");
        let kek = NewKek {
            name: name.clone(),
            kms_type: Some("local-kms".into()),
            kms_key_id: Some("key-1".into()),
            ..NewKek::default()
        };
        registry.create_kek(kek, false).await.expect("kek_removal: create the KEK");
        registry.delete_kek(&name, false).await.expect("kek_removal: soft-delete the KEK");
        let remover = {
            let (registry, name) = (registry.clone(), name.clone());
            tokio::spawn(async move { registry.delete_kek(&name, true).await })
        };
        let creator = {
            let (registry, name) = (creating.clone(), name.clone());
            let dek = NewDek {
                subject: format!("race-{round}"),
                encrypted_key_material: Some("d3JhcA==".into()),
                deleted: true,
                ..NewDek::default()
            };
            tokio::spawn(async move { registry.create_dek(&name, false, dek).await })
        };
        let was_removed = remover.await.expect("remover task").is_ok();
        let was_created = creator.await.expect("creator task").is_ok();
        removed += usize::from(was_removed);
        created += usize::from(was_created);
        assert!(
            !(was_removed && was_created),
            "kek_removal: round {round}: the KEK's permanent delete and a deleted DEK's creation both succeeded"
        );
        let kek_left = store.kek(&name).await.expect("kek_removal: read the KEK").is_some();
        let deks_left = store.has_deks(&name, true).await.expect("kek_removal: read the DEKs");
        assert!(kek_left || !deks_left, "kek_removal: round {round}: DEKs outlive their KEK");
    }
    assert!(removed + created > 0, "kek_removal: neither side ever succeeded");
}
