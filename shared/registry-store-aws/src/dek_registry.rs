//! The DEK registry on the AWS backend: the one place `registry serve --backend aws` and the
//! Lambda function get its key store and AWS's KMS implementations from.

use crate::AwsStore;
use registry_dek::DekBackend;

/// The key store and KMS implementations (`aws-kms`) of the DEK registry over `store`'s table.
/// `None` while this backend has no key store: the DEK registry's paths then answer 404 here.
pub fn dek_backend(store: &AwsStore) -> Option<DekBackend> {
    let _ = store;
    None
}
