//! `AwsStore`: the registry's storage on DynamoDB + S3, for stateless functions that run by the
//! thousand with no leader. Every allocation and every version is a conditional write.
//!
//! # Data model
//!
//! Every item kind with its attributes, and which transaction writes which items under which
//! guards with which revision step, are in `docs/dynamodb.md` in the repository. In short:
//!
//! ```text
//!  S3 bucket (REGISTRY_BUCKET)                 DynamoDB table (REGISTRY_TABLE), pk + sk strings, no GSI
//!  ───────────────────────────                 ───────────────────────────────────────────────────────────────
//!  schemas/<sha256 hex>  ◄──────────┐          pk                        sk                       attributes
//!    SchemaBody JSON,               │          COUNTER                   ID                       max_id
//!    If-None-Match: * ,             ├───────── FP#<sha256 hex>           ID                       id, uses (stamp), guid
//!    written FIRST                  └───────── ID#<id:010>               FP                       fingerprint,
//!                                                                                                 carried (stamp)
//!                                              GUID#<md5 hex>            FP                       fingerprint (first wins),
//!                                                                                                 id, id:<ctx> (while carried)
//!  ids/<id:010> (the ID ledger)                ID#<id:010>               R#<subject>␁<ver:010>    → row (rows by id)
//!    {id, fingerprint}, If-None-Match: *,      S#<subject>               V#<ver:010>              id, fingerprint, deleted,
//!    claimed before the counter commits                                                           refs, ts, subject, version
//!                                              SUBJECTS                  <subject>                total, live (row counts),
//!                                                                                                 rev (revision stamp)
//!                                              REF#<ver:010>#<subject>   R#<subject>␁<ver:010>    → referring row
//!                                              CONFIG | MODE             GLOBAL | S#<subject>     value
//!                                              S#<subject>               USED                     day (last-used marker)
//!                                              S#<subject>               FP#<sha256 hex>          version, id, ts, epoch (its
//!                                                                                                 live version, `live_versions`)
//!                                              KEK                       <kek name>               value, rev, deleted (DEK
//!                                              DEK#<kek name>            <subject>␁<alg>␁<ver>    registry, see `deks`)
//! ```
//!
//! `rev`, `uses` and `carried` are concurrency stamps, not counts: a write raises
//! one so that another write conditioned on the value it read before fails. `rev` is the subject's
//! revision, raised by every transaction that writes the subject's rows (by 1, or by 2^32 when the
//! subject's live-version records stay true, see `live_versions`); `uses` the fingerprint
//! binding's use stamp, raised by every row committed under it; `carried` the ID binding's import
//! stamp, raised by every IMPORT row naming the ID and by every rebind. Every subject transaction
//! is built by `commit::Commit`, which adds the revision update and every guard.
//!
//! (`␁` is U+0001, below every character a subject may hold, so edges sort by (subject, version).)
//!
//! Contexts: the table above is the default context's. A named context `.ctx` has its own ID
//! space in the same table and bucket: its counter `COUNTER/ID:.ctx {max_id, listed}` (one Query
//! of the `COUNTER` partition lists the contexts), bindings `FP#<hex>/ID:.ctx` and
//! `ID#<id:010>:.ctx/FP`, rows-by-id edges in `ID#<id:010>:.ctx`, and ledger `ids/.ctx:<id:010>`
//! ([`keys::in_context`]). Rows, subjects, referrers and settings are keyed by the qualified
//! subject (`S#:.ctx:name`) as before; bodies stay shared and content-addressed, and the guid item
//! carries the default context's ID only. The default context's keys are those it had before
//! contexts existed: existing tables need no migration.
//!
//! - A body is put with `If-None-Match: *` before any item names its fingerprint (412 means it
//!   is already there, which is success: the key is the content hash).
//! - `allocate_id` claims the next ID in the ledger (`ids/<id>`, create-if-absent; see
//!   [`ledger`]: outside the table, so a restore of the table cannot make an ID be issued again),
//!   then commits it in one TransactWriteItems: the counter update conditioned on the value just
//!   read (consistent read), `FP#…` and `ID#…` puts conditioned on `attribute_not_exists`. A
//!   lost race cancels the whole transaction ([`StoreError::Conflict`]); an ID is never handed
//!   out twice, and gaps are allowed.
//! - `bind_guid` is one PutItem conditioned on `attribute_not_exists(pk) OR fingerprint = :fp`
//!   (create-if-absent, idempotent on retry); the item is never changed or deleted. A schema
//!   registered before the index existed has no item until it is registered again or imported.
//! - `create_version_assigning_id` (a registration without an explicit ID) reads the fingerprint's
//!   binding, the guid item and the counter in one BatchGetItem, claims the next ID in the ledger
//!   only when the fingerprint is unbound, and commits the row together with the allocation (as
//!   `allocate_id`'s transaction) or the use of the bound ID, and the guid binding, in one
//!   transaction (see `assign`). The guid item then also holds the ID while a row carries it, so
//!   `GET /schemas/guids/{guid}` reads that one item and the body.
//! - `create_version` is one transaction: the row put conditioned on `attribute_not_exists`, the
//!   subject counts (`ADD`), the rows-by-id edge and one referrer edge per referenced version.
//!   Soft and hard deletes change the row, its counts and its edges in one transaction too;
//!   batch deletes of several versions are one transaction up to DynamoDB's 100 items.
//! - A registration's write context (one BatchGetItem) also reads the subject's record of the
//!   posted schema's live version, written with the version and trusted while the subject's
//!   revision says no write since could have made it false (see [`live_versions`]): a
//!   re-registration reads nothing else.
//! - IMPORT of an ID no row carries any more (its schema hard-deleted) rebinds `ID#…/FP` in one
//!   transaction with the old schema's `FP#…` delete, conditioned on what it read before the
//!   carriers, and rewrites the ledger entry after it (see `rebind`).
//! - `GET /schemas/ids/{id}` reads one Query of `ID#<id>` (the `FP` binding and the first edge:
//!   an edge exists exactly while a row carries the ID) and the body from S3.
//! - Reads are strongly consistent. No Scan: point calls touch a constant number of items; list
//!   calls (`versions`, `rows_with_id`, `referrers`, `list_subjects`) Query one partition with
//!   pagination.
//!
//! Errors: a condition that failed is `Conflict`, throttling or an unreachable service after the
//! SDK's retries is `Unavailable`, an item or object that does not parse is `Corrupt`.

mod acks;
mod assign;
mod batch;
mod blobs;
mod calls;
mod commit;
mod conditions;
pub mod config;
pub mod dek_registry;
mod deks;
mod errors;
pub mod exporter_secrets;
pub mod exporter_store;
pub mod fence;
mod guids;
pub mod home_watch;
mod ids;
mod items;
pub mod keys;
pub mod kms;
pub mod ledger;
mod listing;
mod live_versions;
pub mod provision;
mod rebind;
pub mod regions;
mod requests;
mod rows;
mod settings;
mod store;
#[cfg(feature = "testing")]
pub mod testing;
mod transact;
mod usage;

pub use calls::{CallCounter, SentWrite};
// The DEK registry's key store: `impl registry_dek::KeyStore for AwsStore` (module `deks`).
pub use config::{AwsEnv, AwsStoreConfig, ConfigError};
pub use kms::AwsKms;
pub use ledger::RestoreCheck;

use aws_config::SdkConfig;

/// The DynamoDB + S3 [`registry_core::Store`]. Cheap to clone (clients are shared handles);
/// build it once per process and share it.
#[derive(Debug, Clone)]
pub struct AwsStore {
    dynamo: aws_sdk_dynamodb::Client,
    s3: aws_sdk_s3::Client,
    table: String,
    bucket: String,
    calls: CallCounter,
    /// `aws-kms` for the DEK registry's shared KEKs, with the same SDK configuration.
    kms: AwsKms,
    /// Multi-region: the home region every transaction is conditioned on (see `fence`).
    fence: Option<String>,
    /// Multi-region: the read regions whose replicas must show a write before it is
    /// acknowledged (see `acks`).
    acks: Option<std::sync::Arc<regions::AckReplicas>>,
    /// Multi-region: the other regions' buckets a body missing from this one is read from (S3
    /// replication may not have brought it yet: a failover's new home, a read region's home).
    body_mirrors: Vec<(aws_sdk_s3::Client, String)>,
}

impl AwsStore {
    /// A store over `config`'s table and bucket using `sdk`'s region, credentials and endpoints;
    /// S3 with path-style addressing when `s3_path_style` (emulators; [`AwsEnv`] decides it).
    pub fn with_path_style(sdk: &SdkConfig, config: AwsStoreConfig, s3_path_style: bool) -> AwsStore {
        let calls = CallCounter::default();
        let dynamo_config = aws_sdk_dynamodb::config::Builder::from(sdk).interceptor(calls.clone()).build();
        AwsStore {
            dynamo: aws_sdk_dynamodb::Client::from_conf(dynamo_config),
            s3: s3_client(sdk, s3_path_style, Some(calls.clone())),
            table: config.table,
            bucket: config.bucket,
            calls,
            kms: AwsKms::new(sdk, Vec::new()),
            fence: None,
            acks: None,
            body_mirrors: Vec::new(),
        }
    }

    /// This store reading a body missing from its bucket from each other bucket of `buckets`
    /// (region → bucket; its own skipped), through `sdk` in that region.
    pub fn with_body_mirrors(
        mut self,
        sdk: &SdkConfig,
        s3_path_style: bool,
        buckets: &std::collections::BTreeMap<String, String>,
    ) -> AwsStore {
        self.body_mirrors = buckets
            .iter()
            .filter(|(_, bucket)| **bucket != self.bucket)
            .map(|(region, bucket)| {
                let sdk = regions::in_region(sdk, region);
                (s3_client(&sdk, s3_path_style, Some(self.calls.clone())), bucket.clone())
            })
            .collect();
        self
    }

    /// A store configured from the environment: `REGISTRY_TABLE`, `REGISTRY_BUCKET` and the
    /// standard AWS variables (see [`AwsEnv::from_env`]).
    pub async fn from_env() -> Result<AwsStore, ConfigError> {
        let env = AwsEnv::from_env().await?;
        let store = AwsStore::with_path_style(&env.sdk, env.store, env.s3_path_style);
        Ok(store.with_kms_key_arns(env.kms_key_arns))
    }

    /// This store with `aws-kms` restricted to the key ARNs `allowed` (none: any key the
    /// credentials may use).
    pub fn with_kms_key_arns(mut self, allowed: Vec<String>) -> AwsStore {
        self.kms = self.kms.restricted_to(allowed);
        self
    }

    /// The `aws-kms` client that goes with this store.
    pub fn kms(&self) -> &AwsKms {
        &self.kms
    }

    /// The counter of AWS operations this store has started (DynamoDB and S3 together).
    pub fn calls(&self) -> &CallCounter {
        &self.calls
    }

    /// The table and bucket this store uses.
    pub fn config(&self) -> AwsStoreConfig {
        AwsStoreConfig { table: self.table.clone(), bucket: self.bucket.clone() }
    }
}

/// An S3 client for `sdk`, path-style when asked, counting calls when given a counter.
fn s3_client(sdk: &SdkConfig, path_style: bool, calls: Option<CallCounter>) -> aws_sdk_s3::Client {
    let mut builder = aws_sdk_s3::config::Builder::from(sdk).force_path_style(path_style);
    if let Some(calls) = calls {
        builder = builder.interceptor(calls);
    }
    aws_sdk_s3::Client::from_conf(builder.build())
}
