//! [`DekRegistry`]: Confluent's DEK registry rules (`AbstractDekRegistry` and the checks of
//! `DekRegistryResource`) over a [`KeyStore`] and a [`KmsRegistry`].
//!
//! Every write reads, decides, and writes conditionally; a lost condition ([`StoreError::Conflict`])
//! re-runs the decision on fresh state, at most [`ATTEMPTS`] times. Plaintext key material exists
//! only in memory, in the answers Confluent gives it in (DEKs of shared KEKs).

use crate::error::DekError;
use crate::keygen::generate_key_material;
use crate::kms::KmsRegistry;
use crate::model::{
    Dek, DekAlgorithm, DekId, DekSeries, Kek, MAX_SUPERSEDED_KEY_MATERIALS, MIN_VERSION, normalize_kms_type,
};
use crate::store::{Expect, KekGuard, KeyStore, StoreError, Stored, SubjectPage};
use base64::Engine;
use base64::engine::general_purpose::STANDARD as BASE64;
use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

mod validate;
pub use validate::{check_name, check_subject};

/// How often a write re-decides after losing a conditional write before it gives up (5xx).
pub const ATTEMPTS: usize = 8;
/// Records read per store call when a listing pages through the store.
const PAGE: usize = 500;
/// The subject Confluent wraps a test DEK for (`POST /keks/{name}/test`).
const TEST_SUBJECT: &str = "__TEST";

/// A KEK to create (`POST /dek-registry/v1/keks`).
#[derive(Clone, Debug, Default)]
pub struct NewKek {
    pub name: String,
    pub kms_type: Option<String>,
    pub kms_key_id: Option<String>,
    pub kms_props: BTreeMap<String, String>,
    pub doc: Option<String>,
    pub shared: bool,
    pub deleted: bool,
}

/// Changes to a KEK (`PUT /keks/{name}`); `None` keeps the current value.
#[derive(Clone, Debug, Default)]
pub struct KekUpdate {
    pub kms_props: Option<BTreeMap<String, String>>,
    pub doc: Option<Option<String>>,
    pub shared: Option<bool>,
}

/// A DEK to create (`POST /keks/{name}/deks/{subject}`).
#[derive(Clone, Debug, Default)]
pub struct NewDek {
    pub subject: String,
    pub version: Option<i32>,
    pub algorithm: Option<DekAlgorithm>,
    pub encrypted_key_material: Option<String>,
    pub deleted: bool,
}

/// A DEK as answered: the stored key, plus its plaintext (base64) when the KEK is shared.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DekAnswer {
    pub dek: Dek,
    pub key_material: Option<String>,
}

/// A DEK version in a path: a number, or the latest (`latest` or `-1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DekVersion {
    Latest,
    Number(i32),
}

impl DekVersion {
    /// Confluent's `VersionId`: `latest`, `-1`, or 1..=2^31-1; anything else is 42202.
    pub fn parse(text: &str) -> Result<Self, DekError> {
        if text == "latest" {
            return Ok(DekVersion::Latest);
        }
        match text.parse::<i32>() {
            Ok(-1) => Ok(DekVersion::Latest),
            Ok(number) if number >= MIN_VERSION => Ok(DekVersion::Number(number)),
            _ => Err(DekError::InvalidVersion(text.to_owned())),
        }
    }
}

/// `offset`/`limit` of a listing; a limit of `None` (or Confluent's -1 / 0) is "all".
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Page {
    pub offset: usize,
    pub limit: Option<usize>,
}

impl Page {
    fn wants(&self, listed: usize) -> bool {
        self.limit.is_none_or(|limit| listed < self.offset.saturating_add(limit))
    }

    fn cut<T>(&self, items: Vec<T>) -> Vec<T> {
        items.into_iter().skip(self.offset).take(self.limit.unwrap_or(usize::MAX)).collect()
    }
}

#[derive(Debug)]
pub struct DekRegistry {
    store: Arc<dyn KeyStore>,
    kms: KmsRegistry,
}

/// A KEK's free text (`kmsProps`, `doc`) within [`validate::FIELD_MAX_BYTES`] each.
fn check_kek_text(kms_props: &BTreeMap<String, String>, doc: Option<&str>) -> Result<(), DekError> {
    validate::check_size("kmsProps", validate::props_bytes(kms_props), validate::FIELD_MAX_BYTES)?;
    validate::check_size("doc", doc.map_or(0, str::len), validate::FIELD_MAX_BYTES)
}

/// The wrapped keys a write of `material` over `old` keeps: `old`'s, and `old`'s own material when this
/// write replaces it with a client's (`client_wrapped`: a non-shared KEK; a shared KEK's rewrap is the
/// registry's own, checked by unwrapping); `None` when that would pass [`MAX_SUPERSEDED_KEY_MATERIALS`].
fn superseded(old: Option<&Dek>, material: &str, client_wrapped: bool) -> Option<Vec<String>> {
    let Some(old) = old else { return Some(Vec::new()) };
    let mut kept = old.superseded_key_materials.clone();
    if client_wrapped && old.encrypted_key_material != material {
        if kept.len() >= MAX_SUPERSEDED_KEY_MATERIALS {
            return None;
        }
        kept.push(old.encrypted_key_material.clone());
    }
    Some(kept)
}

fn now_millis() -> i64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |elapsed| elapsed.as_millis() as i64)
}

/// Runs `attempt` until it does not lose a conditional write, at most [`ATTEMPTS`] times.
macro_rules! retrying {
    ($attempt:expr) => {{
        let mut tries = 0;
        loop {
            tries += 1;
            match $attempt {
                Err(DekError::Store(StoreError::Conflict(_))) if tries < ATTEMPTS => continue,
                other => break other,
            }
        }
    }};
}

impl DekRegistry {
    pub fn new(store: Arc<dyn KeyStore>, kms: KmsRegistry) -> Self {
        Self { store, kms }
    }

    pub fn kms(&self) -> &KmsRegistry {
        &self.kms
    }

    // --- KEKs ------------------------------------------------------------------------------

    async fn stored_kek(&self, name: &str, include_deleted: bool) -> Result<Stored<Kek>, DekError> {
        match self.store.kek(name).await? {
            Some(kek) if include_deleted || !kek.value.deleted => Ok(kek),
            _ => Err(DekError::KeyNotFound(name.to_owned())),
        }
    }

    /// `GET /keks/{name}`.
    pub async fn kek(&self, name: &str, include_deleted: bool) -> Result<Kek, DekError> {
        check_name(name)?;
        Ok(self.stored_kek(name, include_deleted).await?.value)
    }

    /// `GET /keks`: KEK names in order; with `subject_prefixes`, only KEKs with a DEK whose
    /// subject starts with one of them.
    pub async fn kek_names(
        &self,
        subject_prefixes: &[String],
        include_deleted: bool,
        page: Page,
    ) -> Result<Vec<String>, DekError> {
        let mut names = Vec::new();
        let mut after: Option<String> = None;
        while page.wants(names.len()) {
            let batch = self.store.keks(after.as_deref(), PAGE).await?;
            let Some(last) = batch.last() else { break };
            after = Some(last.value.name.clone());
            for kek in batch {
                if !include_deleted && kek.value.deleted {
                    continue;
                }
                if subject_prefixes.is_empty()
                    || self.has_subject_with_prefix(&kek.value.name, subject_prefixes, include_deleted).await?
                {
                    names.push(kek.value.name);
                }
            }
        }
        Ok(page.cut(names))
    }

    async fn has_subject_with_prefix(
        &self,
        kek_name: &str,
        prefixes: &[String],
        include_deleted: bool,
    ) -> Result<bool, DekError> {
        for prefix in prefixes {
            // One read of the range of subjects starting with the prefix.
            let page = SubjectPage { kek_name, prefix, after: None, limit: 1, include_deleted };
            if !self.store.dek_subjects(page).await?.is_empty() {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// `POST /keks`. `test_sharing` first wraps a test key with a shared KEK's KMS.
    pub async fn create_kek(&self, request: NewKek, test_sharing: bool) -> Result<Kek, DekError> {
        check_name(&request.name)?;
        let kms_key_id = request.kms_key_id.filter(|id| !id.is_empty());
        let kms_key_id = kms_key_id.ok_or_else(|| DekError::InvalidKey("kmsKeyId".into()))?;
        let kms_type = request.kms_type.ok_or_else(|| DekError::InvalidKey("kmsType".into()))?;
        validate::check_size("kmsType", kms_type.len(), validate::KMS_TYPE_MAX_BYTES)?;
        validate::check_kms_key_id(&kms_type, &kms_key_id)?;
        validate::check_size("kmsKeyId", kms_key_id.len(), validate::KMS_KEY_ID_MAX_BYTES)?;
        check_kek_text(&request.kms_props, request.doc.as_deref())?;
        let kek = Kek {
            name: request.name,
            kms_type: normalize_kms_type(&kms_type),
            kms_key_id,
            kms_props: request.kms_props,
            doc: request.doc,
            shared: request.shared,
            ts: 0,
            deleted: request.deleted,
        };
        if kek.shared && test_sharing {
            self.test_wrap(&kek).await?;
        }
        retrying!(self.try_create_kek(&kek).await)
    }

    async fn try_create_kek(&self, kek: &Kek) -> Result<Kek, DekError> {
        let old = self.store.kek(&kek.name).await?;
        // A create of a deleted KEK's exact definition undeletes it, as in Confluent.
        let expect = match &old {
            Some(old) if kek.deleted == old.value.deleted || !old.value.is_equivalent(kek) => {
                return Err(DekError::AlreadyExists(kek.name.clone()));
            }
            Some(old) => Expect::Revision(old.revision),
            None => Expect::Absent,
        };
        let kek = Kek { ts: now_millis(), ..kek.clone() };
        self.store.put_kek(&kek, expect).await?;
        Ok(kek)
    }

    /// `PUT /keks/{name}`: new `kmsProps`, `doc` or `shared` of a live KEK.
    pub async fn update_kek(&self, name: &str, update: KekUpdate, test_sharing: bool) -> Result<Kek, DekError> {
        check_name(name)?;
        if let Some(props) = &update.kms_props {
            check_kek_text(props, None)?;
        }
        if let Some(Some(doc)) = &update.doc {
            check_kek_text(&BTreeMap::new(), Some(doc))?;
        }
        retrying!(self.try_update_kek(name, &update, test_sharing).await)
    }

    async fn try_update_kek(&self, name: &str, update: &KekUpdate, test_sharing: bool) -> Result<Kek, DekError> {
        let old = self.stored_kek(name, false).await?;
        let new = Kek {
            kms_props: update.kms_props.clone().unwrap_or_else(|| old.value.kms_props.clone()),
            doc: update.doc.clone().unwrap_or_else(|| old.value.doc.clone()),
            shared: update.shared.unwrap_or(old.value.shared),
            ..old.value.clone()
        };
        if new.shared && test_sharing {
            self.test_wrap(&new).await?;
        }
        if new.is_equivalent(&old.value) {
            return Ok(old.value);
        }
        let new = Kek { ts: now_millis(), ..new };
        self.store.put_kek(&new, Expect::Revision(old.revision)).await?;
        Ok(new)
    }

    /// `DELETE /keks/{name}`: soft, or with `permanent` the removal of a soft-deleted KEK. Refused
    /// while DEKs exist under it (live ones for a soft delete, any for a permanent one).
    pub async fn delete_kek(&self, name: &str, permanent: bool) -> Result<(), DekError> {
        check_name(name)?;
        retrying!(self.try_delete_kek(name, permanent).await)
    }

    async fn try_delete_kek(&self, name: &str, permanent: bool) -> Result<(), DekError> {
        let old = self.stored_kek(name, true).await?;
        if self.store.has_deks(name, permanent).await? {
            return Err(DekError::ReferenceExists(name.to_owned()));
        }
        if permanent {
            if !old.value.deleted {
                return Err(DekError::KeyNotSoftDeleted(name.to_owned()));
            }
            self.store.remove_kek(name, old.revision).await?;
        } else if !old.value.deleted {
            let deleted = Kek { deleted: true, ts: now_millis(), ..old.value };
            self.store.put_kek(&deleted, Expect::Revision(old.revision)).await?;
        }
        Ok(())
    }

    /// `POST /keks/{name}/undelete`.
    pub async fn undelete_kek(&self, name: &str) -> Result<(), DekError> {
        check_name(name)?;
        retrying!(self.try_undelete_kek(name).await)
    }

    async fn try_undelete_kek(&self, name: &str) -> Result<(), DekError> {
        let old = self.stored_kek(name, true).await?;
        if old.value.deleted {
            let live = Kek { deleted: false, ts: now_millis(), ..old.value };
            self.store.put_kek(&live, Expect::Revision(old.revision)).await?;
        }
        Ok(())
    }

    /// `POST /keks/{name}/test`: wraps a fresh key with a live shared KEK's KMS (its KMS works
    /// for this registry); answers the KEK.
    pub async fn test_kek(&self, name: &str) -> Result<Kek, DekError> {
        check_name(name)?;
        let kek = self.stored_kek(name, false).await?.value;
        if !kek.shared {
            return Err(DekError::InvalidKey("shared".into()));
        }
        self.test_wrap(&kek).await?;
        Ok(kek)
    }

    async fn test_wrap(&self, kek: &Kek) -> Result<(), DekError> {
        self.wrap(kek, TEST_SUBJECT, DekAlgorithm::Aes256Gcm, None).await.map(drop)
    }

    // --- DEKs --------------------------------------------------------------------------------

    /// `GET /keks/{name}/deks`: subjects with DEKs under a KEK (visible with `include_deleted`
    /// when deleted).
    pub async fn dek_subjects(
        &self,
        kek_name: &str,
        include_deleted: bool,
        page: Page,
    ) -> Result<Vec<String>, DekError> {
        check_name(kek_name)?;
        self.stored_kek(kek_name, include_deleted).await?;
        let mut subjects: Vec<String> = Vec::new();
        while page.wants(subjects.len()) {
            let after = subjects.last().map(String::as_str);
            let page = SubjectPage { kek_name, prefix: "", after, limit: PAGE, include_deleted };
            let batch = self.store.dek_subjects(page).await?;
            let full = batch.len() == PAGE;
            subjects.extend(batch);
            if !full {
                break;
            }
        }
        Ok(page.cut(subjects))
    }

    /// `GET /keks/{name}/deks/{subject}/versions`.
    pub async fn dek_versions(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: Option<DekAlgorithm>,
        include_deleted: bool,
        page: Page,
    ) -> Result<Vec<i32>, DekError> {
        check_name(kek_name)?;
        check_subject(subject)?;
        self.stored_kek(kek_name, include_deleted).await?;
        let series = DekSeries { kek_name, subject, algorithm: algorithm.unwrap_or_default() };
        let mut versions = Vec::new();
        let mut after = 0;
        while page.wants(versions.len()) {
            let batch = self.store.deks(series, after, PAGE).await?;
            let Some(last) = batch.last() else { break };
            after = last.value.version;
            let full = batch.len() == PAGE;
            versions
                .extend(batch.iter().filter(|dek| include_deleted || !dek.value.deleted).map(|dek| dek.value.version));
            if !full {
                break;
            }
        }
        Ok(page.cut(versions))
    }

    async fn stored_dek(
        &self,
        kek_name: &str,
        subject: &str,
        version: DekVersion,
        algorithm: DekAlgorithm,
        include_deleted: bool,
    ) -> Result<Stored<Dek>, DekError> {
        let found = match version {
            DekVersion::Latest => {
                self.store.latest_dek(DekSeries { kek_name, subject, algorithm }, include_deleted).await?
            }
            DekVersion::Number(version) => {
                let id = DekId { kek_name: kek_name.to_owned(), subject: subject.to_owned(), algorithm, version };
                self.store.dek(&id).await?.filter(|dek| include_deleted || !dek.value.deleted)
            }
        };
        found.ok_or_else(|| DekError::KeyNotFound(subject.to_owned()))
    }

    /// `GET /keks/{name}/deks/{subject}[/versions/{version}]`; with a shared KEK the answer has
    /// the plaintext key material, unwrapped by the KEK's KMS.
    pub async fn dek(
        &self,
        kek_name: &str,
        subject: &str,
        version: DekVersion,
        algorithm: Option<DekAlgorithm>,
        include_deleted: bool,
    ) -> Result<DekAnswer, DekError> {
        check_name(kek_name)?;
        check_subject(subject)?;
        let kek = self.stored_kek(kek_name, include_deleted).await?.value;
        let dek = self.stored_dek(kek_name, subject, version, algorithm.unwrap_or_default(), include_deleted).await?;
        let key_material = match kek.shared {
            true => Some(BASE64.encode(self.unwrap(&kek, &dek.value).await?)),
            false => None,
        };
        Ok(DekAnswer { dek: dek.value, key_material })
    }

    /// `POST /keks/{name}/deks/{subject}`: a new DEK version. Under a shared KEK without
    /// `encryptedKeyMaterial` the registry generates the key and wraps it with the KEK's KMS;
    /// under a non-shared KEK the client's wrapped key is required. `rewrap` wraps an existing
    /// version again (shared KEK) or replaces its wrapped key (non-shared).
    pub async fn create_dek(&self, kek_name: &str, rewrap: bool, request: NewDek) -> Result<DekAnswer, DekError> {
        check_name(kek_name)?;
        check_subject(&request.subject)?;
        if request.version.is_some_and(|version| version < MIN_VERSION) {
            return Err(DekError::InvalidKey("version".into()));
        }
        if let Some(material) = &request.encrypted_key_material
            && (material.len() > validate::FIELD_MAX_BYTES || BASE64.decode(material).is_err())
        {
            return Err(DekError::InvalidKey("encryptedKeyMaterial".into()));
        }
        retrying!(self.try_create_dek(kek_name, rewrap, &request).await)
    }

    async fn try_create_dek(&self, kek_name: &str, rewrap: bool, request: &NewDek) -> Result<DekAnswer, DekError> {
        let kek = self.stored_kek(kek_name, request.deleted).await?.value;
        let algorithm = request.algorithm.unwrap_or_default();
        let id = DekId {
            kek_name: kek_name.to_owned(),
            subject: request.subject.clone(),
            algorithm,
            version: request.version.unwrap_or(MIN_VERSION),
        };
        let old = self.store.dek(&id).await?;
        let already_exists = || DekError::AlreadyExists(request.subject.clone());
        if let Some(old) = &old
            && !rewrap
        {
            // A create of a deleted DEK's exact key undeletes it, as in Confluent.
            let same_key = request.encrypted_key_material.as_deref() == Some(old.value.encrypted_key_material.as_str());
            if request.deleted == old.value.deleted || !same_key {
                return Err(already_exists());
            }
        }
        let encrypted_key_material = match (&request.encrypted_key_material, kek.shared) {
            (Some(_), true) if old.is_some() => return Err(already_exists()),
            (Some(material), _) => material.clone(),
            (None, true) => {
                let existing = match &old {
                    Some(old) => Some(self.unwrap(&kek, &old.value).await?),
                    None => None,
                };
                BASE64.encode(self.wrap(&kek, &request.subject, algorithm, existing).await?)
            }
            (None, false) => return Err(DekError::InvalidKey("encryptedKeyMaterial".into())),
        };
        let superseded_key_materials =
            superseded(old.as_ref().map(|old| &old.value), &encrypted_key_material, !kek.shared)
                .ok_or_else(already_exists)?;
        let dek = Dek {
            kek_name: id.kek_name,
            subject: id.subject,
            version: id.version,
            algorithm,
            encrypted_key_material,
            ts: now_millis(),
            deleted: request.deleted,
            superseded_key_materials,
        };
        // Unwrapping before the write proves the key can be read back (Confluent's round trip).
        let key_material = match kek.shared {
            true => Some(BASE64.encode(self.unwrap(&kek, &dek).await?)),
            false => None,
        };
        let expect = old.map_or(Expect::Absent, |old| Expect::Revision(old.revision));
        // A new DEK, even a deleted one, is a reason to refuse a permanent KEK delete that may have
        // read none: the write raises the KEK's revision. An existing one was there to be read.
        let guard = match (dek.deleted, expect) {
            (false, _) => KekGuard::Live,
            (true, Expect::Absent) => KekGuard::Present,
            (true, _) => KekGuard::Unchecked,
        };
        self.store.put_dek(&dek, expect, guard).await?;
        Ok(DekAnswer { dek, key_material })
    }

    /// Checks a DEK write's path: a valid name and subject, and the KEK (deleted or not); answers
    /// the algorithm (AES256_GCM when not given).
    async fn dek_target(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: Option<DekAlgorithm>,
    ) -> Result<DekAlgorithm, DekError> {
        check_name(kek_name)?;
        check_subject(subject)?;
        self.stored_kek(kek_name, true).await?;
        Ok(algorithm.unwrap_or_default())
    }

    /// `DELETE /keks/{name}/deks/{subject}`: every version of the subject's DEKs of one algorithm,
    /// soft, or with `permanent` removed (all must be soft-deleted first).
    pub async fn delete_deks(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: Option<DekAlgorithm>,
        permanent: bool,
    ) -> Result<(), DekError> {
        let algorithm = self.dek_target(kek_name, subject, algorithm).await?;
        self.stored_dek(kek_name, subject, DekVersion::Latest, algorithm, true).await?;
        retrying!(self.try_delete_deks(kek_name, subject, algorithm, permanent).await)
    }

    async fn all_versions(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: DekAlgorithm,
    ) -> Result<Vec<Stored<Dek>>, DekError> {
        let series = DekSeries { kek_name, subject, algorithm };
        let mut all: Vec<Stored<Dek>> = Vec::new();
        loop {
            let after = all.last().map_or(0, |dek| dek.value.version);
            let batch = self.store.deks(series, after, PAGE).await?;
            let full = batch.len() == PAGE;
            all.extend(batch);
            if !full {
                return Ok(all);
            }
        }
    }

    async fn try_delete_deks(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: DekAlgorithm,
        permanent: bool,
    ) -> Result<(), DekError> {
        let versions = self.all_versions(kek_name, subject, algorithm).await?;
        if permanent {
            if versions.iter().any(|dek| !dek.value.deleted) {
                return Err(DekError::KeyNotSoftDeleted(subject.to_owned()));
            }
            for dek in versions {
                self.store.remove_dek(&dek.value.id(), dek.revision).await?;
            }
        } else {
            for dek in versions.into_iter().filter(|dek| !dek.value.deleted) {
                self.set_dek_deleted(dek, true).await?;
            }
        }
        Ok(())
    }

    async fn set_dek_deleted(&self, dek: Stored<Dek>, deleted: bool) -> Result<(), DekError> {
        let guard = if deleted { KekGuard::Unchecked } else { KekGuard::Live };
        let changed = Dek { deleted, ts: now_millis(), ..dek.value };
        self.store.put_dek(&changed, Expect::Revision(dek.revision), guard).await?;
        Ok(())
    }

    /// `DELETE /keks/{name}/deks/{subject}/versions/{version}`.
    pub async fn delete_dek_version(
        &self,
        kek_name: &str,
        subject: &str,
        version: DekVersion,
        algorithm: Option<DekAlgorithm>,
        permanent: bool,
    ) -> Result<(), DekError> {
        let algorithm = self.dek_target(kek_name, subject, algorithm).await?;
        retrying!(self.try_delete_dek_version(kek_name, subject, version, algorithm, permanent).await)
    }

    async fn try_delete_dek_version(
        &self,
        kek_name: &str,
        subject: &str,
        version: DekVersion,
        algorithm: DekAlgorithm,
        permanent: bool,
    ) -> Result<(), DekError> {
        let dek = self.stored_dek(kek_name, subject, version, algorithm, true).await?;
        if permanent {
            if !dek.value.deleted {
                return Err(DekError::KeyNotSoftDeleted(subject.to_owned()));
            }
            self.store.remove_dek(&dek.value.id(), dek.revision).await?;
        } else if !dek.value.deleted {
            self.set_dek_deleted(dek, true).await?;
        }
        Ok(())
    }

    /// `POST /keks/{name}/deks/{subject}/undelete`: every deleted version of one algorithm. The
    /// KEK must be live (40472).
    pub async fn undelete_deks(
        &self,
        kek_name: &str,
        subject: &str,
        algorithm: Option<DekAlgorithm>,
    ) -> Result<(), DekError> {
        let algorithm = self.dek_target(kek_name, subject, algorithm).await?;
        self.stored_dek(kek_name, subject, DekVersion::Latest, algorithm, true).await?;
        retrying!(self.try_undelete_deks(kek_name, subject, algorithm).await)
    }

    async fn try_undelete_deks(&self, kek_name: &str, subject: &str, algorithm: DekAlgorithm) -> Result<(), DekError> {
        if self.stored_kek(kek_name, true).await?.value.deleted {
            return Err(DekError::KeySoftDeleted(kek_name.to_owned()));
        }
        for dek in self.all_versions(kek_name, subject, algorithm).await? {
            if dek.value.deleted {
                self.undelete_one(kek_name, dek).await?;
            }
        }
        Ok(())
    }

    /// Undeletes one DEK; a KEK deleted meanwhile is 40472, not a retry.
    async fn undelete_one(&self, kek_name: &str, dek: Stored<Dek>) -> Result<(), DekError> {
        match self.set_dek_deleted(dek, false).await {
            Err(DekError::Store(StoreError::Conflict(conflict))) => {
                match self.store.kek(kek_name).await?.is_some_and(|kek| !kek.value.deleted) {
                    true => Err(DekError::Store(StoreError::Conflict(conflict))),
                    false => Err(DekError::KeySoftDeleted(kek_name.to_owned())),
                }
            }
            other => other,
        }
    }

    /// `POST /keks/{name}/deks/{subject}/versions/{version}/undelete`.
    pub async fn undelete_dek_version(
        &self,
        kek_name: &str,
        subject: &str,
        version: DekVersion,
        algorithm: Option<DekAlgorithm>,
    ) -> Result<(), DekError> {
        let algorithm = self.dek_target(kek_name, subject, algorithm).await?;
        retrying!(self.try_undelete_dek_version(kek_name, subject, version, algorithm).await)
    }

    async fn try_undelete_dek_version(
        &self,
        kek_name: &str,
        subject: &str,
        version: DekVersion,
        algorithm: DekAlgorithm,
    ) -> Result<(), DekError> {
        let dek = self.stored_dek(kek_name, subject, version, algorithm, true).await?;
        if self.stored_kek(kek_name, true).await?.value.deleted {
            return Err(DekError::KeySoftDeleted(kek_name.to_owned()));
        }
        if dek.value.deleted {
            self.undelete_one(kek_name, dek).await?;
        }
        Ok(())
    }

    // --- KMS -----------------------------------------------------------------------------------

    /// Wraps `key_material` (a fresh key of `algorithm` when `None`) with the KEK's KMS.
    async fn wrap(
        &self,
        kek: &Kek,
        subject: &str,
        algorithm: DekAlgorithm,
        key_material: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, DekError> {
        let kms = self.kms.get(&kek.kms_type).ok_or_else(|| self.no_kms(kek, subject))?;
        let key_material = match key_material {
            Some(material) => material,
            None => generate_key_material(algorithm)
                .map_err(|_| DekError::Generation(format!("Could not generate dek for {subject}: no randomness")))?,
        };
        kms.encrypt(kek, &key_material).await.map_err(|error| DekError::from_kms(subject, error))
    }

    /// The plaintext key material of a DEK under a shared KEK.
    async fn unwrap(&self, kek: &Kek, dek: &Dek) -> Result<Vec<u8>, DekError> {
        let kms = self.kms.get(&kek.kms_type).ok_or_else(|| self.no_kms(kek, &dek.subject))?;
        let wrapped = BASE64.decode(&dek.encrypted_key_material).map_err(|_| {
            DekError::Generation(format!("Could not unwrap dek for {}: stored key is not base64", dek.subject))
        })?;
        kms.decrypt(kek, &wrapped).await.map_err(|error| DekError::from_kms(&dek.subject, error))
    }

    fn no_kms(&self, kek: &Kek, subject: &str) -> DekError {
        let configured: Vec<&str> = self.kms.types().collect();
        DekError::Generation(format!(
            "Could not generate dek for {subject}: this registry has no KMS for kmsType '{}' of KEK '{}' (configured: {})",
            kek.kms_type,
            kek.name,
            if configured.is_empty() { "none".to_owned() } else { configured.join(", ") }
        ))
    }
}

#[cfg(test)]
mod tests;
