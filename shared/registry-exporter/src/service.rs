//! [`ExporterService`]: the `/exporters` operations over an [`ExporterStore`], with Confluent's
//! validation and state rules:
//! - `POST /exporters` needs a name and a `config` naming the destination
//!   (`schema.registry.url`); `contextType` defaults to AUTO, `subjects` to `["*"]`,
//!   `subjectRenameFormat` to `${subject}`; a new exporter is STARTING;
//! - `PUT /exporters/{name}`, `PUT .../config`, `reset` and `resume` need the exporter PAUSED
//!   (40963 otherwise): a definition never changes under a running pass;
//! - `pause` stops it in any state (again: no change); `reset` sets the offset back to 0, so the
//!   next pass after `resume` copies everything again;
//! - credentials are sealed before they are stored (bound to the destination URL they were sent
//!   with) and answered as [`MASK`]; a change of the destination URL drops every stored credential
//!   the change does not send again (a credential sent as [`MASK`] is then not kept).

use crate::destination::DestinationPolicy;
use crate::engine::{Connect, FENCED, Fence, PassError, PassReport, RegistryApi, sync_pass_fenced};
use crate::error::ExporterError;
use crate::model::{
    ContextType, DESTINATION_URL, Exporter, ExporterRecord, ExporterState, ExporterStatus, SUBJECT_PLACEHOLDER,
    bounded_trace, now_ms,
};
use crate::secrets::{Binding, MASK, Sealer, bind, is_credential, unbind};
use crate::store::{Expect, ExporterStore, StoreError, Stored};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

/// Most exporters one registry holds (40964 past it).
pub const MAX_EXPORTERS: usize = 100;

/// Longest exporter name, context, subject pattern, rename format and config value accepted.
const MAX_TEXT: usize = 4096;

/// Most subject patterns and config entries of one exporter.
const MAX_ITEMS: usize = 1000;

/// Conditional writes retried on conflicts before giving up.
const WRITE_ATTEMPTS: usize = 20;

/// The fields of a create or update request (`null` or absent: default on create, unchanged on
/// update).
#[derive(Clone, Debug, Default)]
pub struct ExporterUpdate {
    pub name: Option<String>,
    pub context_type: Option<String>,
    pub context: Option<String>,
    pub subjects: Option<Vec<String>>,
    pub subject_rename_format: Option<String>,
    pub config: Option<BTreeMap<String, String>>,
}

/// Most subjects without versions an exporter's record remembers ([`ExporterRecord::configured`]):
/// beyond it, a config removed at the source from a further one stays at the destination (the
/// record stays far below DynamoDB's item size).
pub const MAX_REMEMBERED: usize = 1000;

#[derive(Debug, Clone)]
pub struct ExporterService {
    store: Arc<dyn ExporterStore>,
    secrets: Arc<dyn Sealer>,
    /// Where passes may send: the operator's allow-list, or why it could not be read (every pass
    /// then fails with that reason: a malformed list allows nothing).
    destinations: Result<Arc<DestinationPolicy>, String>,
}

impl ExporterService {
    /// The service over `store`, its passes allowed the destinations
    /// `REGISTRY_EXPORTER_ALLOWED_DESTINATIONS` names ([`DestinationPolicy::from_env`]).
    pub fn new(store: Arc<dyn ExporterStore>, secrets: Arc<dyn Sealer>) -> Self {
        Self { store, secrets, destinations: DestinationPolicy::from_env().map(Arc::new) }
    }

    /// The same service, its passes allowed the destinations `policy` allows.
    pub fn with_destinations(mut self, policy: DestinationPolicy) -> Self {
        self.destinations = Ok(Arc::new(policy));
        self
    }

    /// One pass of `stored`'s exporter from `source` to its destination, opened by `destinations`
    /// if the allow-list admits it, and its outcome recorded ([`Self::record_outcome`]): the number
    /// of writes made, and whether the record could be written.
    ///
    /// The pass runs fenced on the record ([`RecordFence`]): before each write at the destination
    /// the record is read again, and once it is no longer at the revision the pass runs on
    /// (paused, reset, redefined or deleted through the API) the pass stops, so nothing is written
    /// after a pause is acknowledged but the one call that may be in flight. Before its first write
    /// the pass has the record remember the subjects without versions whose config it may copy
    /// ([`ExporterRecord::configured`]): a pass killed or failing after copying one leaves it
    /// remembered, so a later pass removes the config at the destination once the source removed it.
    pub async fn pass(
        &self,
        stored: &Stored<ExporterRecord>,
        source: &dyn RegistryApi,
        destinations: &dyn Connect,
    ) -> (Result<u64, PassError>, Result<(), StoreError>) {
        let fence = RecordFence::new(self.store.as_ref(), stored);
        let outcome = self.export(&stored.value, source, destinations, &fence).await;
        let recorded = self.record_outcome(&fence.current(), &outcome).await;
        (outcome.map(|report| report.writes), recorded)
    }

    /// The pass itself.
    async fn export(
        &self,
        record: &ExporterRecord,
        source: &dyn RegistryApi,
        destinations: &dyn Connect,
        fence: &RecordFence<'_>,
    ) -> Result<PassReport, PassError> {
        let policy = self.destinations.as_ref().map_err(|reason| PassError::new(reason.clone()))?;
        let config =
            self.destination_config(&record.exporter).await.map_err(|error| PassError::new(error.to_string()))?;
        let destination = destinations.connect(&record.exporter.name, &config, policy).map_err(PassError::new)?;
        sync_pass_fenced(&record.exporter, &record.configured, source, destination.as_ref(), fence).await
    }

    /// Writes a pass's outcome into `stored`'s status (RUNNING with the offset raised by the writes
    /// made, or ERROR with the reason in `trace`) and, after a pass that succeeded, the subjects
    /// holding a config at the source when it ran as the remembered ones (a removed config was
    /// removed at the destination by then); nothing when nothing changed. Conditioned on `stored`'s revision:
    /// an exporter paused, reset or redefined meanwhile keeps its record and the outcome is dropped
    /// (`Ok`); any other failure is answered (a fenced store's refusal included).
    async fn record_outcome(
        &self,
        stored: &Stored<ExporterRecord>,
        outcome: &Result<PassReport, PassError>,
    ) -> Result<(), StoreError> {
        let before = &stored.value;
        let (status, configured) = match outcome {
            Ok(report)
                if report.writes == 0
                    && before.status.state == ExporterState::Running
                    && report.configured == before.configured =>
            {
                return Ok(());
            }
            Ok(report) => {
                let writes = i64::try_from(report.writes).unwrap_or(i64::MAX);
                let status = ExporterStatus {
                    state: ExporterState::Running,
                    offset: before.status.offset.saturating_add(writes),
                    ts: now_ms(),
                    trace: None,
                };
                (status, report.configured.iter().take(MAX_REMEMBERED).cloned().collect())
            }
            Err(error) => {
                let trace = bounded_trace(error.0.clone());
                if before.status.state == ExporterState::Error && before.status.trace.as_deref() == Some(trace.as_str())
                {
                    return Ok(());
                }
                let status = ExporterStatus {
                    state: ExporterState::Error,
                    offset: before.status.offset,
                    ts: now_ms(),
                    trace: Some(trace),
                };
                (status, before.configured.clone())
            }
        };
        let record = ExporterRecord { exporter: before.exporter.clone(), status, configured };
        match self.store.put_exporter(&record, Expect::Revision(stored.revision)).await {
            Ok(_) | Err(StoreError::Conflict(_)) => Ok(()),
            Err(error) => Err(error),
        }
    }

    /// The store, for the engine's runner.
    pub fn store(&self) -> &Arc<dyn ExporterStore> {
        &self.store
    }

    /// Exporter names, in order.
    pub async fn list(&self) -> Result<Vec<String>, ExporterError> {
        Ok(self.store.exporters().await?.into_iter().map(|stored| stored.value.exporter.name).collect())
    }

    /// `POST /exporters`: the new exporter's name.
    pub async fn create(&self, request: ExporterUpdate) -> Result<String, ExporterError> {
        let name = request.name.clone().unwrap_or_default();
        validate_name(&name)?;
        let context_type = match request.context_type.as_deref() {
            None => ContextType::Auto,
            Some(text) => parse_context_type(text)?,
        };
        let Some(config) = request.config.clone() else {
            return Err(ExporterError::InvalidConfig(format!("'config' with '{DESTINATION_URL}' is required")));
        };
        let exporter = Exporter {
            name: name.clone(),
            context_type,
            context: request.context.clone(),
            subjects: request.subjects.clone().unwrap_or_else(|| vec!["*".to_owned()]),
            subject_rename_format: request
                .subject_rename_format
                .clone()
                .unwrap_or_else(|| SUBJECT_PLACEHOLDER.to_owned()),
            config: config.clone(),
        };
        validate(&exporter)?;
        if self.store.exporter(&name).await?.is_some() {
            return Err(ExporterError::AlreadyExists(name));
        }
        if self.store.exporters().await?.len() >= MAX_EXPORTERS {
            return Err(ExporterError::TooMany(MAX_EXPORTERS));
        }
        // Sealed once the request is known to be valid: a refused one calls no KMS.
        let config = kept_or_sealed(self.seal_credentials(&name, config).await?, &BTreeMap::new());
        // A credential sent as MASK on create has nothing to keep: it is not stored.
        let config = config.into_iter().filter(|(key, value)| !(is_credential(key) && value == MASK)).collect();
        let exporter = Exporter { config, ..exporter };
        let status = ExporterStatus { state: ExporterState::Starting, offset: 0, ts: now_ms(), trace: None };
        match self
            .store
            .put_exporter(&ExporterRecord { exporter, status, configured: BTreeSet::new() }, Expect::Absent)
            .await
        {
            Ok(_) => Ok(name),
            Err(StoreError::Conflict(_)) => Err(ExporterError::AlreadyExists(name)),
            Err(error) => Err(error.into()),
        }
    }

    /// `GET /exporters/{name}`: the definition, credentials masked.
    pub async fn get(&self, name: &str) -> Result<Exporter, ExporterError> {
        let mut exporter = self.read(name).await?.value.exporter;
        exporter.config = masked(&exporter.config);
        Ok(exporter)
    }

    /// `GET /exporters/{name}/config`, credentials masked.
    pub async fn config(&self, name: &str) -> Result<BTreeMap<String, String>, ExporterError> {
        Ok(self.get(name).await?.config)
    }

    /// `GET /exporters/{name}/status`.
    pub async fn status(&self, name: &str) -> Result<ExporterStatus, ExporterError> {
        Ok(self.read(name).await?.value.status)
    }

    /// `PUT /exporters/{name}`: the named fields replace the stored ones (a config replaces the
    /// whole config; a credential sent as [`MASK`] keeps its stored value). Needs PAUSED.
    ///
    /// Answered in Confluent's order: an unknown exporter (40450), one not paused (40963), then an
    /// invalid request (4095x); only a change that passes all three has its credentials sealed,
    /// which may call a KMS (and fail when the host has no key), once, before the
    /// read-modify-write loop.
    pub async fn update(&self, name: &str, request: ExporterUpdate) -> Result<String, ExporterError> {
        let Some(config) = &request.config else {
            return self.modify(name, |record| apply_update(record, &request, None)).await;
        };
        let mut preview = self.read(name).await?.value;
        apply_update(&mut preview, &request, Some(&unsealed(config)))?;
        let sealed = self.seal_credentials(name, config.clone()).await?;
        self.modify(name, |record| apply_update(record, &request, Some(&sealed))).await
    }

    /// `PUT /exporters/{name}/config`: replaces the config (a credential sent as [`MASK`] keeps its
    /// stored value). Needs PAUSED.
    pub async fn put_config(&self, name: &str, config: BTreeMap<String, String>) -> Result<String, ExporterError> {
        self.update(name, ExporterUpdate { config: Some(config), ..ExporterUpdate::default() }).await
    }

    /// `PUT /exporters/{name}/pause`.
    pub async fn pause(&self, name: &str) -> Result<String, ExporterError> {
        self.modify(name, |record| {
            if record.status.state != ExporterState::Paused {
                record.status.state = ExporterState::Paused;
                record.status.ts = now_ms();
            }
            Ok(())
        })
        .await
    }

    /// `PUT /exporters/{name}/resume`: STARTING again, from the stored offset. Needs PAUSED.
    pub async fn resume(&self, name: &str) -> Result<String, ExporterError> {
        self.modify(name, |record| {
            require_paused(record)?;
            record.status =
                ExporterStatus { state: ExporterState::Starting, ts: now_ms(), trace: None, ..record.status };
            Ok(())
        })
        .await
    }

    /// `PUT /exporters/{name}/reset`: offset 0, so the next pass copies everything again. Needs PAUSED.
    pub async fn reset(&self, name: &str) -> Result<String, ExporterError> {
        self.modify(name, |record| {
            require_paused(record)?;
            record.status = ExporterStatus { state: ExporterState::Paused, offset: 0, ts: now_ms(), trace: None };
            Ok(())
        })
        .await
    }

    /// `DELETE /exporters/{name}`.
    pub async fn delete(&self, name: &str) -> Result<(), ExporterError> {
        for _ in 0..WRITE_ATTEMPTS {
            let stored = self.read(name).await?;
            match self.store.remove_exporter(name, stored.revision).await {
                Err(StoreError::Conflict(_)) => continue,
                other => return Ok(other?),
            }
        }
        Err(StoreError::Conflict(format!("exporter '{name}' kept changing")).into())
    }

    /// The destination client settings of `exporter` with its credentials opened.
    pub async fn destination_config(&self, exporter: &Exporter) -> Result<BTreeMap<String, String>, ExporterError> {
        let url = exporter.config.get(DESTINATION_URL).map_or("", String::as_str);
        let binding = Binding { exporter: &exporter.name, destination: url };
        let mut config = BTreeMap::new();
        for (key, value) in &exporter.config {
            let value = if is_credential(key) {
                let plaintext =
                    self.secrets.open(value, binding).await.map_err(|error| ExporterError::Secret(error.0))?;
                unbind(url, &plaintext).map_err(|error| ExporterError::Secret(error.0))?
            } else {
                value.clone()
            };
            config.insert(key.clone(), value);
        }
        Ok(config)
    }

    async fn read(&self, name: &str) -> Result<Stored<ExporterRecord>, ExporterError> {
        self.store.exporter(name).await?.ok_or_else(|| ExporterError::NotFound(name.to_owned()))
    }

    /// Applies `change` to the stored record and writes it back conditionally, re-reading on
    /// conflicts (the engine records progress concurrently).
    async fn modify<F>(&self, name: &str, change: F) -> Result<String, ExporterError>
    where
        F: Fn(&mut ExporterRecord) -> Result<(), ExporterError>,
    {
        for _ in 0..WRITE_ATTEMPTS {
            let stored = self.read(name).await?;
            let mut record = stored.value.clone();
            change(&mut record)?;
            if record == stored.value {
                return Ok(name.to_owned());
            }
            match self.store.put_exporter(&record, Expect::Revision(stored.revision)).await {
                Ok(_) => return Ok(name.to_owned()),
                Err(StoreError::Conflict(_)) => continue,
                Err(error) => return Err(error.into()),
            }
        }
        Err(StoreError::Conflict(format!("exporter '{name}' kept changing")).into())
    }

    /// `config` with each credential sealed, or marked as sent as [`MASK`] ([`kept_or_sealed`]
    /// then keeps the stored value). Credentials' lengths are checked first.
    async fn seal_credentials(
        &self,
        name: &str,
        config: BTreeMap<String, String>,
    ) -> Result<SealedConfig, ExporterError> {
        check_credential_lengths(&config)?;
        let url = config.get(DESTINATION_URL).cloned().unwrap_or_default();
        let binding = Binding { exporter: name, destination: &url };
        let mut sealed = BTreeMap::new();
        for (key, value) in config {
            let entry = if !is_credential(&key) || value == MASK {
                (value == MASK, value)
            } else {
                let bound = bind(&url, &value);
                (false, self.secrets.seal(&bound, binding).await.map_err(|error| ExporterError::Secret(error.0))?)
            };
            sealed.insert(key, entry);
        }
        Ok(sealed)
    }
}

/// The fence of a pass: the exporter's record still at the revision the pass started from, or at
/// the one the pass's own [`Fence::remember`] wrote.
struct RecordFence<'a> {
    store: &'a dyn ExporterStore,
    current: std::sync::Mutex<Stored<ExporterRecord>>,
}

impl<'a> RecordFence<'a> {
    fn new(store: &'a dyn ExporterStore, stored: &Stored<ExporterRecord>) -> Self {
        Self { store, current: std::sync::Mutex::new(stored.clone()) }
    }

    /// The record as the pass left it.
    fn current(&self) -> Stored<ExporterRecord> {
        self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).clone()
    }
}

fn fenced() -> PassError {
    PassError::new(format!("{FENCED} (paused, reset, redefined or deleted)"))
}

#[async_trait::async_trait]
impl Fence for RecordFence<'_> {
    async fn check(&self) -> Result<(), PassError> {
        let current = self.current();
        match self.store.exporter(&current.value.exporter.name).await {
            Ok(Some(stored)) if stored.revision == current.revision => Ok(()),
            Ok(_) => Err(fenced()),
            Err(error) => Err(PassError::new(format!("{FENCED}: cannot read it ({error})"))),
        }
    }

    /// Adds `subjects` to the remembered ones (at most [`MAX_REMEMBERED`]) and writes the record if
    /// that added any, conditioned on the revision the pass runs on (which it then runs on).
    async fn remember(&self, subjects: &BTreeSet<String>) -> Result<(), PassError> {
        let Stored { value: mut record, revision } = self.current();
        let before = record.configured.len();
        for subject in subjects {
            if record.configured.len() >= MAX_REMEMBERED {
                break;
            }
            record.configured.insert(subject.clone());
        }
        if record.configured.len() == before {
            return Ok(());
        }
        match self.store.put_exporter(&record, Expect::Revision(revision)).await {
            Ok(revision) => {
                *self.current.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) =
                    Stored { value: record, revision };
                Ok(())
            }
            Err(StoreError::Conflict(_)) => Err(fenced()),
            Err(error) => Err(PassError::new(format!("the exporter's record could not be written: {error}"))),
        }
    }
}

/// A config whose credentials are sealed, each with whether it was sent as [`MASK`] (kept as is).
type SealedConfig = BTreeMap<String, (bool, String)>;

/// `config` as [`seal_credentials`](ExporterService::seal_credentials) marks it, its credentials
/// left in plaintext: enough to validate a change before anything is sealed.
fn unsealed(config: &BTreeMap<String, String>) -> SealedConfig {
    config.iter().map(|(key, value)| (key.clone(), (value == MASK, value.clone()))).collect()
}

/// A credential is checked against [`MAX_TEXT`] before it is sealed ([`validate`] cannot: a sealed
/// value is longer than what was sent).
fn check_credential_lengths(config: &BTreeMap<String, String>) -> Result<(), ExporterError> {
    match config.iter().find(|(key, value)| is_credential(key) && value.len() > MAX_TEXT) {
        Some((key, _)) => Err(ExporterError::InvalidConfig(format!("'{key}' is longer than {MAX_TEXT} bytes"))),
        None => Ok(()),
    }
}

/// Applies the fields of `request` to `record` (`config`: the request's, as
/// [`seal_credentials`](ExporterService::seal_credentials) or [`unsealed`] marks it) and validates
/// the result; refused unless the exporter is paused.
fn apply_update(
    record: &mut ExporterRecord,
    request: &ExporterUpdate,
    config: Option<&SealedConfig>,
) -> Result<(), ExporterError> {
    require_paused(record)?;
    let exporter = &mut record.exporter;
    if let Some(text) = &request.context_type {
        exporter.context_type = parse_context_type(text)?;
    }
    if request.context.is_some() {
        exporter.context = request.context.clone();
    }
    if let Some(subjects) = &request.subjects {
        exporter.subjects = subjects.clone();
    }
    if let Some(format) = &request.subject_rename_format {
        exporter.subject_rename_format = format.clone();
    }
    if let Some(config) = config {
        // Credentials are kept only for the destination they were given for.
        let same_destination = config.get(DESTINATION_URL).map(|(_, url)| url) == exporter.config.get(DESTINATION_URL);
        let stored = if same_destination { exporter.config.clone() } else { BTreeMap::new() };
        exporter.config = kept_or_sealed(config.clone(), &stored)
            .into_iter()
            .filter(|(key, value)| !(is_credential(key) && value == MASK))
            .collect();
    }
    validate(exporter)
}

/// The config to store: `sealed`, where a credential sent as [`MASK`] keeps `stored`'s value.
fn kept_or_sealed(sealed: SealedConfig, stored: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    sealed
        .into_iter()
        .map(|(key, (masked, value))| {
            let value = match stored.get(&key) {
                Some(kept) if masked => kept.clone(),
                _ => value,
            };
            (key, value)
        })
        .collect()
}

/// `config` as answered: credentials replaced by [`MASK`].
fn masked(config: &BTreeMap<String, String>) -> BTreeMap<String, String> {
    config
        .iter()
        .map(|(key, value)| (key.clone(), if is_credential(key) { MASK.to_owned() } else { value.clone() }))
        .collect()
}

fn require_paused(record: &ExporterRecord) -> Result<(), ExporterError> {
    if record.status.state == ExporterState::Paused {
        Ok(())
    } else {
        Err(ExporterError::NotPaused(record.exporter.name.clone()))
    }
}

fn parse_context_type(text: &str) -> Result<ContextType, ExporterError> {
    ContextType::parse(text)
        .ok_or_else(|| ExporterError::InvalidConfig(format!("contextType '{text}' is not one of AUTO, CUSTOM, NONE")))
}

/// A name is 1 to 256 letters, digits, `.`, `_` and `-`.
fn validate_name(name: &str) -> Result<(), ExporterError> {
    let valid = !name.is_empty()
        && name.len() <= 256
        && name.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'));
    if valid { Ok(()) } else { Err(ExporterError::InvalidName(format!("'{name}'"))) }
}

fn validate(exporter: &Exporter) -> Result<(), ExporterError> {
    let config = |message: String| Err(ExporterError::InvalidConfig(message));
    let subjects = |message: String| Err(ExporterError::InvalidSubjects(message));
    match exporter.config.get(DESTINATION_URL) {
        Some(url) if url.len() <= MAX_TEXT => {
            if let Err(reason) = crate::destination::Destination::parse(url) {
                return config(reason);
            }
        }
        Some(_) => return config(format!("'{DESTINATION_URL}' is longer than {MAX_TEXT} bytes")),
        None => return config(format!("'{DESTINATION_URL}' is required")),
    }
    // A sealed credential is longer than what was sent: its length is checked before sealing.
    let too_long =
        |(key, value): (&String, &String)| key.len() > MAX_TEXT || (value.len() > MAX_TEXT && !is_credential(key));
    if exporter.config.len() > MAX_ITEMS || exporter.config.iter().any(too_long) {
        return config(format!("at most {MAX_ITEMS} entries of at most {MAX_TEXT} bytes"));
    }
    if exporter.context_type == ContextType::Custom {
        match exporter.context.as_deref() {
            None | Some("") => return config("contextType CUSTOM needs a context".to_owned()),
            Some(context)
                if context.len() > MAX_TEXT || context.contains(':') || context.trim_matches('.').is_empty() =>
            {
                return config(format!("context '{context}' is not a context name"));
            }
            Some(_) => {}
        }
    }
    if exporter.subjects.is_empty() || exporter.subjects.len() > MAX_ITEMS {
        return subjects(format!("between 1 and {MAX_ITEMS} subjects or patterns are required"));
    }
    if let Some(bad) = exporter.subjects.iter().find(|subject| subject.is_empty() || subject.len() > MAX_TEXT) {
        return subjects(format!("'{bad}' is not a subject name or pattern"));
    }
    let format = &exporter.subject_rename_format;
    if format.is_empty() || format.len() > MAX_TEXT || format.contains(':') {
        return subjects(format!("subjectRenameFormat '{format}' is not a subject name format"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::memory::MemoryExporterStore;
    use crate::secrets::SecretError;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A host without a key: every seal is refused, and counted.
    #[derive(Debug, Default)]
    struct Keyless {
        seals: AtomicUsize,
    }

    #[async_trait::async_trait]
    impl Sealer for Keyless {
        async fn seal(&self, _: &str, _: Binding<'_>) -> Result<String, SecretError> {
            self.seals.fetch_add(1, Ordering::SeqCst);
            Err(SecretError("no key".to_owned()))
        }

        async fn open(&self, value: &str, _: Binding<'_>) -> Result<String, SecretError> {
            Ok(value.to_owned())
        }
    }

    fn config(credential: &str) -> BTreeMap<String, String> {
        BTreeMap::from([
            (DESTINATION_URL.to_owned(), "http://dest:8081".to_owned()),
            ("basic.auth.user.info".to_owned(), credential.to_owned()),
        ])
    }

    fn with_config(config: BTreeMap<String, String>) -> ExporterUpdate {
        ExporterUpdate { config: Some(config), ..ExporterUpdate::default() }
    }

    /// An update is refused for what Confluent refuses it (unknown, not paused, invalid) before
    /// any credential is sealed; only a valid change reaches the sealer.
    #[tokio::test]
    async fn update_seals_only_a_valid_change_of_a_paused_exporter() -> Result<(), ExporterError> {
        let sealer = Arc::new(Keyless::default());
        let service = ExporterService::new(Arc::new(MemoryExporterStore::new()), sealer.clone());
        let code = |result: Result<String, ExporterError>| result.map_err(|error| error.status_and_code());

        assert_eq!(code(service.update("nope", with_config(config("a:b"))).await), Err((404, 40450)));
        let plain = ExporterUpdate {
            name: Some("to-b".to_owned()),
            config: Some(BTreeMap::from([(DESTINATION_URL.to_owned(), "http://dest:8081".to_owned())])),
            ..ExporterUpdate::default()
        };
        service.create(plain).await?;
        assert_eq!(code(service.update("to-b", with_config(config("a:b"))).await), Err((409, 40963)));
        service.pause("to-b").await?;
        let mut no_url = config("a:b");
        no_url.remove(DESTINATION_URL);
        assert_eq!(code(service.update("to-b", with_config(no_url)).await), Err((409, 40951)));
        let too_long = with_config(config(&"x".repeat(MAX_TEXT + 1)));
        assert_eq!(code(service.update("to-b", too_long).await), Err((409, 40951)));
        let no_subjects = ExporterUpdate { subjects: Some(Vec::new()), ..with_config(config("a:b")) };
        assert_eq!(code(service.update("to-b", no_subjects).await), Err((409, 40952)));
        assert_eq!(sealer.seals.load(Ordering::SeqCst), 0, "nothing sealed for a refused update");

        assert_eq!(code(service.update("to-b", with_config(config("a:b"))).await), Err((500, 50001)));
        assert_eq!(sealer.seals.load(Ordering::SeqCst), 1, "a valid change is sealed");
        assert_eq!(code(service.update("to-b", with_config(config(MASK))).await), Ok("to-b".to_owned()));
        Ok(())
    }
}
