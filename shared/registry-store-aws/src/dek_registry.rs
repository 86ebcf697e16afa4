//! The DEK registry on the AWS backend: the one place `registry serve --backend aws` and the
//! Lambda function get its key store and AWS's KMS implementations from.

use crate::AwsStore;
use registry_dek::model::AWS_KMS;
use registry_dek::{DekBackend, KmsRegistry};
use std::sync::Arc;

/// The key store (KEKs and DEKs in `store`'s table, see `deks`) and `aws-kms` (the store's
/// [`AwsKms`](crate::AwsKms), restricted to `REGISTRY_KMS_KEY_ARNS` when set) of the DEK registry.
pub fn dek_backend(store: &AwsStore) -> Option<DekBackend> {
    let kms = KmsRegistry::new().with(AWS_KMS, Arc::new(store.kms().clone()));
    Some(DekBackend { key_store: Arc::new(store.clone()), kms })
}
