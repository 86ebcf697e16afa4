//! Multi-region: every region reads its local replica, one region (the home) commits every write.
//!
//! - [`RegionalStore`]: the store of a *read* region's read requests. Reads go to the local
//!   replica of the (global) table and the local bucket, and only there: what the replica has not
//!   received yet is asked of the home region once, for the whole request, by the read region's
//!   application (`registry_http::regional`), which asks the home again after a "not found". A
//!   body the local bucket lacks while a row points at it (the bucket's replication behind the
//!   table's) is not found here either (`StoreError::NotReplicated`), never "corrupt". Every write
//!   it is asked for goes to the home.
//! - Writes are made by a plain [`AwsStore`] over the home region's table and bucket (a second SDK
//!   client for the home region), fenced on the home marker ([`AwsStore::fenced_by`]): the write
//!   path is the single-region one, in the home region, whatever region the function runs in.
//! - RPO 0 on request ([`AckReplicas`], module `acks`): every write (registrations, deletes,
//!   config and mode, KEKs and DEKs) is acknowledged only once the named read regions' replicas
//!   show it, polled for at most the configured time; past it the write answers a retryable error
//!   (the write stays committed at home) and counts `replication_ack_timeout_total`.
//! - Read-your-writes: a read region's own replica is always one of them for the writes made
//!   through it ([`Deployment::open_with_mirrors`]), so once such a write is acknowledged every
//!   later read through that region answers from a replica that shows it.
//! - [`AwsStore::fail_over`]: `registry failover --to REGION`.

use crate::errors::AwsError;
use crate::fence::HomeMarker;
use crate::items::{ItemExt, s};
use crate::keys;
use crate::{AwsEnv, AwsStore, AwsStoreConfig};
use async_trait::async_trait;
use aws_config::{Region, SdkConfig};
use registry_core::{
    CommitHints, ConfigRecord, ConfiguredPage, Context, Fingerprint, Guid, GuidCarried, HardDeletion, IdRowsPage,
    LayeredContext, NewVersion, Preconditions, SchemaBody, SchemaId, Scope, SettingWrite, SoftDeletion, Store,
    StoreError, StoreResult, Subject, SubjectsPage, Version, VersionRow, VersionsPage,
};
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

pub use crate::acks::AckReplicas;

/// The multi-region settings (`REGISTRY_HOME_REGION`, `REGISTRY_HOME_BUCKET`,
/// `REGISTRY_ACK_REGIONS`, `REGISTRY_ACK_TIMEOUT_MS`); the function's own region is the SDK's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RegionConfig {
    /// The region that commits every write.
    pub home_region: String,
    /// The home region's bucket (the local one when this is the home region).
    pub home_bucket: String,
    /// Read regions whose replicas must show a write before it is acknowledged.
    pub ack_regions: Vec<AckRegion>,
    /// The longest a write waits for them.
    pub ack_timeout: Duration,
}

impl RegionConfig {
    /// The configuration the settings give (`None`: no home region, a single-region registry);
    /// the home bucket defaults to `local_bucket`.
    pub fn from_settings(
        home_region: Option<&str>,
        home_bucket: Option<&str>,
        local_bucket: &str,
        ack_regions: &str,
        ack_timeout: Duration,
    ) -> Option<RegionConfig> {
        let home_region = home_region.map(str::trim).filter(|region| !region.is_empty())?;
        let home_bucket = home_bucket.map(str::trim).filter(|bucket| !bucket.is_empty()).unwrap_or(local_bucket);
        Some(RegionConfig {
            home_region: home_region.to_string(),
            home_bucket: home_bucket.to_string(),
            ack_regions: AckRegion::parse_list(ack_regions),
            ack_timeout,
        })
    }
}

/// A region a write waits for: its table replica always, its bucket (a registration's body) when named
/// (`REGISTRY_ACK_REGIONS` entry `region=bucket`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AckRegion {
    pub region: String,
    pub bucket: Option<String>,
}

impl AckRegion {
    /// The entries of a comma-separated list of `region` or `region=bucket`.
    pub fn parse_list(list: &str) -> Vec<AckRegion> {
        list.split(',')
            .map(str::trim)
            .filter(|entry| !entry.is_empty())
            .map(|entry| match entry.split_once('=') {
                Some((region, bucket)) => {
                    AckRegion { region: region.trim().to_string(), bucket: Some(bucket.trim().to_string()) }
                }
                None => AckRegion { region: entry.to_string(), bucket: None },
            })
            .collect()
    }
}

/// `sdk` in `region` (same credentials and endpoint settings).
pub fn in_region(sdk: &SdkConfig, region: &str) -> SdkConfig {
    sdk.to_builder().region(Region::new(region.to_string())).build()
}

/// The stores a process of a multi-region registry uses.
// Built once per process: the size of a variant does not matter.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone)]
pub enum Deployment {
    /// No home region configured: one store, today's single-region registry.
    Single(AwsStore),
    /// This is the home region: one store, fenced, waiting for the acknowledging replicas.
    Home(AwsStore),
    /// A read region: reads through `reads`, writes through `writes` (the home's table and bucket).
    Read { reads: RegionalStore, writes: AwsStore },
}

impl Deployment {
    /// The store of read requests (every request in a single or home region).
    pub fn reads(&self) -> &dyn Store {
        match self {
            Deployment::Single(store) | Deployment::Home(store) => store,
            Deployment::Read { reads, .. } => reads,
        }
    }

    /// The local table's store (the DEK registry's and the exporters' records).
    pub fn local(&self) -> &AwsStore {
        match self {
            Deployment::Single(store) | Deployment::Home(store) => store,
            Deployment::Read { reads, .. } => reads.local(),
        }
    }

    /// The stores for `env` (the local table and bucket, the function's region) and `regions`.
    pub fn open(env: &AwsEnv, regions: Option<&RegionConfig>) -> Deployment {
        Deployment::open_with_mirrors(env, regions, &BTreeMap::new())
    }

    /// [`Deployment::open`], the home's store reading a body missing from its bucket from the
    /// other buckets of `buckets` (region → bucket, every region's): after a failover the new
    /// home's bucket may still lack bodies the old home wrote, which its registrations read.
    pub fn open_with_mirrors(
        env: &AwsEnv,
        regions: Option<&RegionConfig>,
        buckets: &BTreeMap<String, String>,
    ) -> Deployment {
        // The stores that write (the home's) read a missing body from the other buckets; a read
        // region's local store does not: its misses already go to the home's store.
        let mirrored = |store: AwsStore| store.with_body_mirrors(&env.sdk, env.s3_path_style, buckets);
        let local = AwsStore::with_path_style(&env.sdk, env.store.clone(), env.s3_path_style)
            .with_kms_key_arns(env.kms_key_arns.clone());
        let Some(regions) = regions else { return Deployment::Single(local) };
        let own = env.sdk.region().map(|r| r.as_ref().to_string()).unwrap_or_default();
        let at_home = own == regions.home_region;
        // A read region's writes also wait for its own replica (read-your-writes: every later read
        // through this region, by any instance, answers from a replica that shows the write).
        // Its items only: a body it lacks is read from the home bucket.
        let mut waited = regions.ack_regions.clone();
        if !at_home && !waited.iter().any(|ack| ack.region == own) {
            waited.push(AckRegion { region: own.clone(), bucket: None });
        }
        let acks = (!waited.is_empty()).then(|| {
            let table = &env.store.table;
            Arc::new(AckReplicas::new(&env.sdk, table, &regions.home_bucket, &waited, regions.ack_timeout))
        });
        let with_acks = |store: AwsStore| match &acks {
            Some(acks) => store.with_acks(acks.clone()),
            None => store,
        };
        if at_home {
            return Deployment::Home(with_acks(mirrored(local).fenced_by(&regions.home_region)));
        }
        let home_config = AwsStoreConfig { table: env.store.table.clone(), bucket: regions.home_bucket.clone() };
        let home = mirrored(
            AwsStore::with_path_style(&in_region(&env.sdk, &regions.home_region), home_config, env.s3_path_style)
                .with_kms_key_arns(env.kms_key_arns.clone()),
        );
        let writes = with_acks(home.clone().fenced_by(&regions.home_region));
        Deployment::Read { reads: RegionalStore::new(local, writes.clone()), writes }
    }
}

/// A read region's store: reads of the local replica, writes to the home.
#[derive(Debug, Clone)]
pub struct RegionalStore {
    local: AwsStore,
    home: AwsStore,
}

impl RegionalStore {
    /// Reads from `local`, writing through `home`.
    pub fn new(local: AwsStore, home: AwsStore) -> RegionalStore {
        RegionalStore { local, home }
    }

    /// The local replica's store.
    pub fn local(&self) -> &AwsStore {
        &self.local
    }

    /// The home region's store.
    pub fn home(&self) -> &AwsStore {
        &self.home
    }
}

/// `record_live_version` is the trait's default (nothing recorded): the record is an optimization
/// of the home's registrations, and a read region decides nothing on it.
#[async_trait]
impl Store for RegionalStore {
    async fn put_body(&self, fingerprint: &Fingerprint, body: &SchemaBody) -> StoreResult<()> {
        self.home.put_body(fingerprint, body).await
    }

    /// A body is read only when a row or binding points at it, so one the local bucket lacks is
    /// on its way: `NotReplicated`, which the read region's application asks of the home.
    async fn get_body(&self, fingerprint: &Fingerprint) -> StoreResult<Option<SchemaBody>> {
        match self.local.get_body(fingerprint).await? {
            Some(body) => Ok(Some(body)),
            None => Err(StoreError::NotReplicated(format!("schema body {fingerprint} is not in this region's bucket"))),
        }
    }

    async fn id_for_fingerprint_in(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
    ) -> StoreResult<Option<SchemaId>> {
        self.local.id_for_fingerprint_in(context, fingerprint).await
    }

    async fn fingerprint_for_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        self.local.fingerprint_for_id_in(context, id).await
    }

    async fn fingerprint_for_carried_id_in(&self, context: &Context, id: SchemaId) -> StoreResult<Option<Fingerprint>> {
        self.local.fingerprint_for_carried_id_in(context, id).await
    }

    async fn allocate_id_in(&self, context: &Context, fingerprint: &Fingerprint) -> StoreResult<SchemaId> {
        self.home.allocate_id_in(context, fingerprint).await
    }

    async fn bind_id_in(&self, context: &Context, id: SchemaId, fingerprint: &Fingerprint) -> StoreResult<()> {
        self.home.bind_id_in(context, id, fingerprint).await
    }

    async fn max_id_in(&self, context: &Context) -> StoreResult<Option<SchemaId>> {
        self.local.max_id_in(context).await
    }

    async fn list_contexts(&self) -> StoreResult<Vec<Context>> {
        self.local.list_contexts().await
    }

    async fn unlist_context(&self, context: &Context) -> StoreResult<()> {
        self.home.unlist_context(context).await
    }

    async fn bind_guid(&self, guid: &Guid, fingerprint: &Fingerprint) -> StoreResult<()> {
        self.home.bind_guid(guid, fingerprint).await
    }

    async fn fingerprint_for_guid(&self, guid: &Guid) -> StoreResult<Option<Fingerprint>> {
        self.local.fingerprint_for_guid(guid).await
    }

    async fn carried_id_for_guid(&self, guid: &Guid) -> StoreResult<Option<GuidCarried>> {
        self.local.carried_id_for_guid(guid).await
    }

    async fn versions(&self, subject: &Subject) -> StoreResult<Vec<VersionRow>> {
        self.local.versions(subject).await
    }

    async fn versions_page(&self, page: VersionsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        self.local.versions_page(page).await
    }

    async fn get_version(&self, subject: &Subject, version: Version) -> StoreResult<Option<VersionRow>> {
        self.local.get_version(subject, version).await
    }

    async fn layered_write_context(
        &self,
        scope: &Scope,
        schemas: &[(Fingerprint, Guid)],
    ) -> StoreResult<LayeredContext> {
        self.local.layered_write_context(scope, schemas).await
    }

    async fn create_version(
        &self,
        row: &VersionRow,
        preconditions: &Preconditions,
        hints: &CommitHints,
    ) -> StoreResult<()> {
        self.home.create_version(row, preconditions, hints).await
    }

    async fn create_version_assigning_id(&self, version: NewVersion<'_>) -> StoreResult<(SchemaId, bool)> {
        self.home.create_version_assigning_id(version).await
    }

    async fn soft_delete_versions(&self, deletion: SoftDeletion<'_>) -> StoreResult<()> {
        self.home.soft_delete_versions(deletion).await
    }

    async fn hard_delete_versions(&self, deletion: HardDeletion<'_>) -> StoreResult<()> {
        self.home.hard_delete_versions(deletion).await
    }

    async fn rows_with_id_page_in(&self, context: &Context, page: IdRowsPage<'_>) -> StoreResult<Vec<VersionRow>> {
        self.local.rows_with_id_page_in(context, page).await
    }

    async fn referrers(&self, subject: &Subject, version: Version) -> StoreResult<Vec<VersionRow>> {
        self.local.referrers(subject, version).await
    }

    async fn list_subjects(&self, page: SubjectsPage<'_>) -> StoreResult<Vec<Subject>> {
        self.local.list_subjects(page).await
    }

    async fn get_config(&self, scope: &Scope) -> StoreResult<Option<ConfigRecord>> {
        self.local.get_config(scope).await
    }

    async fn subjects_with_config(&self, page: ConfiguredPage<'_>) -> StoreResult<Vec<Subject>> {
        self.local.subjects_with_config(page).await
    }

    async fn write_setting(&self, write: SettingWrite<'_>) -> StoreResult<()> {
        self.home.write_setting(write).await
    }

    async fn last_used(&self, subject: &Subject) -> StoreResult<Option<u32>> {
        self.local.last_used(subject).await
    }

    async fn mark_used(&self, subject: &Subject, day: u32) -> StoreResult<()> {
        self.home.mark_used(subject, day).await
    }
}

/// What [`AwsStore::fail_over`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failover {
    /// The marker before (`None`: no failover had run).
    pub before: Option<HomeMarker>,
    /// The marker written.
    pub after: HomeMarker,
    /// Each context's counter: (context, highest ID seen in the replica's counter or ledger, the
    /// counter after the jump).
    pub counters: Vec<(Context, Option<SchemaId>, SchemaId)>,
}

impl AwsStore {
    /// Makes `region` the home: run against `region`'s own table replica and bucket (this store).
    /// First raises every context's counter (each one the replica's counter table knows, each one
    /// its ledger holds IDs of, and each one its subject index holds a subject of: the items of
    /// the old home's transactions arrive one by one, so a context's subject may be here before its
    /// counter) past the highest ID its counter or its ledger shows plus `gap`,
    /// IDs the old home may have allocated without their replication having arrived yet; then
    /// writes the home marker naming `region` with the next epoch (conditioned on the marker read),
    /// which fences every store still fenced on the old home once it reaches that region's replica,
    /// and with the allocation floor ([`HomeMarker::floor`]): the highest of `gap`, every jumped
    /// counter, and the marker before's floor plus `gap` (what an interim home may have issued
    /// above its own floor that has not arrived here, on a failback). Every allocation the new
    /// home makes lies above it, so no counter item replication overwrites can take it back into
    /// the old home's gap.
    /// Idempotent but for the jump, which each run makes again.
    pub async fn fail_over(&self, region: &str, gap: u32) -> Result<Failover, StoreError> {
        let before = self.home_marker().await?;
        let mut contexts = vec![Context::DEFAULT];
        for item in self.query_prefix(keys::COUNTER_PK.to_string(), keys::NAMED_COUNTER_SK_PREFIX).await? {
            let sk = item.get(keys::SK).and_then(|v| v.as_s().ok()).map(String::as_str).unwrap_or_default();
            if let Some(context) = keys::context_of_counter_sk(sk).and_then(|name| Context::parse(name).ok()) {
                contexts.push(context);
            }
        }
        contexts.extend(self.ledger_contexts().await?);
        contexts.extend(self.subject_contexts().await?);
        contexts.sort();
        contexts.dedup();
        let gap = i32::try_from(gap).unwrap_or(i32::MAX);
        let past = |id: i32| SchemaId(id.saturating_add(gap).min(SchemaId::MAX_IMPORTED.0));
        let mut floor = past(before.as_ref().and_then(|marker| marker.floor).map_or(0, |floor| floor.0));
        let mut counters = Vec::new();
        for context in contexts {
            let counter = self.read_max_id(&context).await?;
            let ledger = self.ledger_max_after(&context, SchemaId(counter.unwrap_or(0))).await?;
            let seen = counter.map(SchemaId).max(ledger);
            let jumped = past(seen.map_or(0, |id| id.0));
            self.raise_counter(&context, jumped, false).await?;
            floor = floor.max(jumped);
            counters.push((context, seen, jumped));
        }
        let epoch = self.write_home_marker(region, before.as_ref(), floor).await?;
        let after = HomeMarker { region: region.to_string(), epoch, floor: Some(floor) };
        Ok(Failover { before, after, counters })
    }
}

impl AwsStore {
    /// The named contexts the `SUBJECTS` partition holds a subject (or a context's pseudo-subject)
    /// of: one Query of one item per context and one more, each starting past the keys of the
    /// context found before (`:.ctx:` + anything sorts below `:.ctx;`, and every named context's
    /// keys below `:/`).
    pub(crate) async fn subject_contexts(&self) -> Result<Vec<Context>, AwsError> {
        let mut contexts = Vec::new();
        let mut from = ":.".to_string();
        loop {
            let query = self
                .dynamo
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :pk AND #sk BETWEEN :from AND :to")
                .expression_attribute_names("#pk", keys::PK)
                .expression_attribute_names("#sk", keys::SK)
                .expression_attribute_values(":pk", s(keys::SUBJECTS_PK))
                .expression_attribute_values(":from", s(from.as_str()))
                .expression_attribute_values(":to", s(":/"))
                .limit(1);
            let mut found = None;
            self.query_pages("Query(subject contexts)", query, |item| {
                found = Some(item.string(keys::SK)?.to_string());
                Ok(false)
            })
            .await?;
            let Some(sk) = found else { return Ok(contexts) };
            let name = sk.strip_prefix(':').and_then(|rest| rest.split(':').next()).unwrap_or_default();
            match Context::parse(name) {
                Ok(context) if !context.is_default() => {
                    from = format!(":{name};");
                    contexts.push(context);
                }
                // Not a context's subject: the next key after it.
                _ => from = format!("{sk}\u{0}"),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The stores of a process in `region` of a registry whose home is us-east-1 (no call made).
    fn deployment_in(region: &str, ack_regions: &str) -> Deployment {
        let sdk = aws_config::SdkConfig::builder()
            .region(Region::new(region.to_string()))
            .behavior_version(aws_config::BehaviorVersion::latest())
            .build();
        let store = AwsStoreConfig { table: "registry".into(), bucket: format!("bodies-{region}") };
        let env = AwsEnv { sdk, store, s3_path_style: true, kms_key_arns: vec![], exporter_kms_key: None };
        let config = RegionConfig::from_settings(
            Some("us-east-1"),
            Some("bodies-us-east-1"),
            "unused",
            ack_regions,
            Duration::from_secs(2),
        );
        Deployment::open(&env, config.as_ref())
    }

    fn waited(store: &AwsStore) -> Vec<String> {
        store.acks().map(|acks| acks.regions().into_iter().map(String::from).collect()).unwrap_or_default()
    }

    #[test]
    fn a_read_region_acknowledges_its_writes_once_its_own_replica_shows_them() {
        let Deployment::Read { writes, .. } = deployment_in("eu-west-1", "") else { panic!("a read region") };
        assert_eq!(waited(&writes), ["eu-west-1"]);
        // Named as an acknowledging region already: waited for once.
        let Deployment::Read { writes, .. } = deployment_in("eu-west-1", "ap-south-1,eu-west-1") else {
            panic!("a read region")
        };
        assert_eq!(waited(&writes), ["ap-south-1", "eu-west-1"]);
        // The home waits only for the regions named.
        let Deployment::Home(home) = deployment_in("us-east-1", "") else { panic!("the home") };
        assert!(waited(&home).is_empty());
        let Deployment::Home(home) = deployment_in("us-east-1", "eu-west-1") else { panic!("the home") };
        assert_eq!(waited(&home), ["eu-west-1"]);
    }

    #[test]
    fn ack_regions_take_an_optional_bucket() {
        let parsed = AckRegion::parse_list(" eu-west-1 , ap-south-1=bodies-mumbai,,");
        assert_eq!(
            parsed,
            [
                AckRegion { region: "eu-west-1".into(), bucket: None },
                AckRegion { region: "ap-south-1".into(), bucket: Some("bodies-mumbai".into()) },
            ]
        );
        assert!(AckRegion::parse_list("").is_empty());
    }
}
