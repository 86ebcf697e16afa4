//! Domain values: subjects, IDs, versions, stored rows, config and modes. Plain data, validated on construction.

use crate::error::RegistryError;
use registry_schema::{CompatibilityLevel, Fingerprint, SchemaReference, SchemaType};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::str::FromStr;

mod context;
mod guid;
pub use context::{CONTEXT_WILDCARD, Context, QualifiedName};
pub use guid::Guid;

/// A subject name. Valid when it has no ISO control characters, is not one of Confluent's
/// reserved names (`__GLOBAL`, `__EMPTY`) and is at most [`Subject::MAX_BYTES`] long. May
/// contain `/`, `.`, `:` and spaces.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(try_from = "String", into = "String")]
pub struct Subject(String);

impl Subject {
    /// Longest subject name in UTF-8 bytes. Confluent sets no limit, but every backend must be
    /// able to key by the name: DynamoDB sort keys hold at most 1024 bytes, and ours carry the
    /// subject after a short prefix. Kafka topic names, which subjects usually derive from, stop
    /// at 249 characters, so 1000 bytes is far above any real subject.
    pub const MAX_BYTES: usize = 1000;

    /// Validates `name` (42208 on failure) and normalises its context as Confluent's
    /// `QualifiedSubject` does: `:.:orders` is `orders`, `:.ctx:orders` stays qualified. The name
    /// inside the context must be non-empty and not reserved; the wildcard `:*:` and the
    /// config-only context `.__GLOBAL` hold no subjects.
    pub fn new(name: impl Into<String>) -> Result<Subject, RegistryError> {
        let name = name.into();
        let too_long = name.len() > Subject::MAX_BYTES;
        let valid_inside = match QualifiedName::split(&name) {
            QualifiedName::In { context, name: inner } => {
                let reserved = inner == "__GLOBAL" || inner == "__EMPTY";
                (!inner.is_empty() && !reserved && context != Context::GLOBAL_NAME).then_some((context, inner))
            }
            QualifiedName::Wildcard { .. } => None,
        };
        match valid_inside {
            Some((context, inner)) if !too_long && !name.chars().any(char::is_control) => {
                let normalised = if context == "." { inner.to_string() } else { name.clone() };
                Ok(Subject(normalised))
            }
            _ => Err(RegistryError::InvalidSubject { subject: name }),
        }
    }

    /// The name as given.
    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The context this subject lives in (its ID space): `.ctx` for `:.ctx:name`, else the default.
    pub fn context(&self) -> Context {
        match QualifiedName::split(&self.0) {
            QualifiedName::In { context, .. } if context != "." => {
                // Validated in `new`: no `:` or control characters, within the length bound.
                Context::parse(context).unwrap_or(Context::DEFAULT)
            }
            _ => Context::DEFAULT,
        }
    }
}

impl fmt::Display for Subject {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl TryFrom<String> for Subject {
    type Error = RegistryError;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Subject::new(value)
    }
}

impl From<Subject> for String {
    fn from(value: Subject) -> Self {
        value.0
    }
}

/// A global schema ID: a positive 32-bit integer, as carried in the wire format's 4-byte field.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct SchemaId(pub i32);

impl SchemaId {
    /// The greatest explicit ID an IMPORT may bind (2^30, half the positive ID space). Whatever is
    /// imported, the 2^31 - 1 - 2^30 IDs above it stay free for allocation, so no import can
    /// exhaust a context's counter. Confluent accepts any non-negative ID and its counter wraps to
    /// negative IDs after 2^31 - 1; real registries (Confluent Cloud's included) issue IDs far below.
    pub const MAX_IMPORTED: SchemaId = SchemaId(1 << 30);
}

impl fmt::Display for SchemaId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A version number within a subject: 1 ..= i32::MAX.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Version(pub i32);

impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.0)
    }
}

/// A `{version}` path segment: `latest` (any case) or `-1`, or a number in 1 ..= 2^31-1.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VersionSelector {
    /// The highest live version.
    Latest,
    Number(Version),
}

impl FromStr for VersionSelector {
    type Err = RegistryError;

    /// Confluent's `VersionId`: trimmed; `latest` in any case or `-1` mean latest; anything
    /// else must be an int in [1, 2^31-1] (42202 otherwise).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let trimmed = s.trim();
        if trimmed.eq_ignore_ascii_case("latest") {
            return Ok(VersionSelector::Latest);
        }
        match trimmed.parse::<i32>() {
            Ok(-1) => Ok(VersionSelector::Latest),
            Ok(n) if n >= 1 => Ok(VersionSelector::Number(Version(n))),
            _ => Err(RegistryError::InvalidVersion { version: s.to_string() }),
        }
    }
}

impl fmt::Display for VersionSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            VersionSelector::Latest => f.write_str("latest"),
            VersionSelector::Number(v) => write!(f, "{v}"),
        }
    }
}

/// A stored schema body, content-addressed by its [`Fingerprint`]. Immutable once written.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchemaBody {
    pub schema_type: SchemaType,
    /// The stored (canonical) text.
    pub schema: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<SchemaReference>,
    /// Data-contract metadata, kept exactly as given (compact JSON).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<serde_json::Value>,
    /// Data-contract rule set, kept exactly as given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rule_set: Option<serde_json::Value>,
}

impl SchemaBody {
    /// The content address of this body.
    pub fn fingerprint(&self) -> Fingerprint {
        let metadata = self.metadata.as_ref().map(|m| m.to_string());
        let rule_set = self.rule_set.as_ref().map(|r| r.to_string());
        Fingerprint::of(self.schema_type, &self.schema, &self.references, metadata.as_deref(), rule_set.as_deref())
    }
}

/// One (subject, version) row. Soft delete sets `deleted`; hard delete removes the row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct VersionRow {
    pub subject: Subject,
    pub version: Version,
    pub id: SchemaId,
    pub fingerprint: Fingerprint,
    pub deleted: bool,
    /// The body's references, copied here so stores can index "who references (subject, version)".
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub references: Vec<SchemaReference>,
    /// Registration time, milliseconds since the Unix epoch (`ts` in CP 8 answers).
    pub registered_at_ms: i64,
}

/// A new live version row before its ID is known: [`crate::Store::create_version_assigning_id`]
/// gives it the ID its fingerprint is bound to, or a new one, in the write that creates it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnassignedRow {
    pub subject: Subject,
    pub version: Version,
    pub fingerprint: Fingerprint,
    pub references: Vec<SchemaReference>,
    pub registered_at_ms: i64,
}

impl UnassignedRow {
    /// The row under `id`.
    pub fn with_id(&self, id: SchemaId) -> VersionRow {
        VersionRow {
            subject: self.subject.clone(),
            version: self.version,
            id,
            fingerprint: self.fingerprint,
            deleted: false,
            references: self.references.clone(),
            registered_at_ms: self.registered_at_ms,
        }
    }
}

/// A version with its body: what `GET /subjects/{s}/versions/{v}` and lookups answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaRecord {
    pub subject: Subject,
    pub version: Version,
    pub id: SchemaId,
    pub body: SchemaBody,
    pub deleted: bool,
    pub registered_at_ms: i64,
}

/// Where a config or mode applies. Besides the global scope (the default context's, Confluent's
/// top level) and real subjects, a subject scope may be a context's own settings: the context-only
/// form `:.ctx:`, which no subject can be, as Confluent keys them ([`Scope::of_context`]), or the
/// registry-wide `:.__GLOBAL:` ([`Scope::registry_wide`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Scope {
    Global,
    Subject(Subject),
}

impl Scope {
    /// The settings scope of `context`: the global scope for the default context (Confluent keeps
    /// its settings at the top level), else the context-only pseudo-subject `:.ctx:`.
    pub fn of_context(context: &Context) -> Scope {
        if context.is_default() { Scope::Global } else { Scope::Subject(Subject(context.subject_prefix())) }
    }

    /// `:.__GLOBAL:`: registry-wide config and mode, consulted after a subject's context (or the
    /// global scope) has none (Confluent 7.9.3+, 8.0+).
    pub fn registry_wide() -> Scope {
        Scope::Subject(Subject(format!(":{}:", Context::GLOBAL_NAME)))
    }

    /// The `{subject}` of `/config/{subject}` and `/mode/{subject}`, as Confluent's `ConfigResource`
    /// and `ModeResource` read it: the default context (`:.:`, `:.`) is the global scope; a
    /// context-only form (`:.ctx:`, `:.ctx`) is that context's settings, `:.__GLOBAL:` the
    /// registry-wide ones; anything else must be a valid subject (42208).
    pub fn parse(text: &str) -> Result<Scope, RegistryError> {
        match QualifiedName::split(text) {
            QualifiedName::In { context, name: "" } if !text.chars().any(char::is_control) => {
                let invalid = || RegistryError::InvalidSubject { subject: text.to_string() };
                let context = Context::parse(context).map_err(|_| invalid())?;
                if context.name() == Context::GLOBAL_NAME {
                    return Ok(Scope::registry_wide());
                }
                Ok(Scope::of_context(&context))
            }
            _ => Ok(Scope::Subject(Subject::new(text)?)),
        }
    }

    /// The context whose own settings this scope holds (a named context, or `.__GLOBAL` for the
    /// registry-wide scope); `None` for a subject and for the global scope.
    pub fn settings_context(&self) -> Option<Context> {
        match self {
            Scope::Subject(subject) if QualifiedName::split(subject.as_str()).is_context_only() => {
                Some(subject.context())
            }
            _ => None,
        }
    }

    /// Whether this is the registry-wide scope `:.__GLOBAL:`.
    pub fn is_registry_wide(&self) -> bool {
        self.settings_context().is_some_and(|context| context.name() == Context::GLOBAL_NAME)
    }

    /// Where a setting is looked up from this scope, nearest first, as Confluent's
    /// `InMemoryCache.config`/`mode` with `returnTopLevelIfNotFound`: the scope itself, then its
    /// context's settings (the global scope for the default context; a named context's subjects
    /// skip the global scope), then the registry-wide scope.
    pub fn resolution(&self) -> Vec<Scope> {
        let parent = match self {
            Scope::Global => Scope::Global,
            Scope::Subject(subject) => Scope::of_context(&subject.context()),
        };
        let mut levels = vec![self.clone()];
        for level in [parent, Scope::registry_wide()] {
            if !levels.contains(&level) {
                levels.push(level);
            }
        }
        levels
    }

    /// Every scope a write at this scope decides on: its [`Scope::resolution`] and the global
    /// scope (whose READONLY_OVERRIDE wins everywhere).
    pub fn settings_read(&self) -> Vec<Scope> {
        let mut scopes = self.resolution();
        if !scopes.contains(&Scope::Global) {
            scopes.push(Scope::Global);
        }
        scopes
    }
}

/// A stored compatibility configuration (global or per subject). Unset fields fall back to the
/// next scope (subject → global → server default).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ConfigRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility_level: Option<CompatibilityLevel>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub normalize: Option<bool>,
    /// Data-contract metadata merged under a registration's own (`defaultMetadata`), normal form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_metadata: Option<serde_json::Value>,
    /// Data-contract metadata merged over a registration's own (`overrideMetadata`), normal form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_metadata: Option<serde_json::Value>,
    /// Rule set merged under a registration's own (`defaultRuleSet`), validated, normal form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default_rule_set: Option<serde_json::Value>,
    /// Rule set merged over a registration's own (`overrideRuleSet`), validated, normal form.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub override_rule_set: Option<serde_json::Value>,
    /// The subject requests at this subject are answered by (`alias`); not inherited from other
    /// scopes, as Confluent's `mergeConfigs`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub alias: Option<String>,
    /// The metadata property whose value splits a subject's versions into groups checked only
    /// against each other (`compatibilityGroup`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub compatibility_group: Option<String>,
    /// Whether registrations are checked against `confluent:reserved` fields (`validateFields`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub validate_fields: Option<bool>,
}

/// A `PUT /config` as Confluent applies it (`ConfigValue.update`): each field the request names
/// replaces the stored one (`Some(None)`: named as `null`, which clears it); a field it leaves out
/// (`None`) keeps the stored value.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ConfigUpdate {
    pub compatibility_level: Option<Option<CompatibilityLevel>>,
    pub normalize: Option<Option<bool>>,
    pub default_metadata: Option<Option<serde_json::Value>>,
    pub override_metadata: Option<Option<serde_json::Value>>,
    pub default_rule_set: Option<Option<serde_json::Value>>,
    pub override_rule_set: Option<Option<serde_json::Value>>,
    pub alias: Option<Option<String>>,
    pub compatibility_group: Option<Option<String>>,
    pub validate_fields: Option<Option<bool>>,
}

impl ConfigUpdate {
    /// The config after this update of `stored` (none stored: the named fields alone).
    pub fn apply(self, stored: Option<ConfigRecord>) -> ConfigRecord {
        let old = stored.unwrap_or_default();
        ConfigRecord {
            compatibility_level: self.compatibility_level.unwrap_or(old.compatibility_level),
            normalize: self.normalize.unwrap_or(old.normalize),
            default_metadata: self.default_metadata.unwrap_or(old.default_metadata),
            override_metadata: self.override_metadata.unwrap_or(old.override_metadata),
            default_rule_set: self.default_rule_set.unwrap_or(old.default_rule_set),
            override_rule_set: self.override_rule_set.unwrap_or(old.override_rule_set),
            alias: self.alias.unwrap_or(old.alias),
            compatibility_group: self.compatibility_group.unwrap_or(old.compatibility_group),
            validate_fields: self.validate_fields.unwrap_or(old.validate_fields),
        }
    }
}

impl ConfigRecord {
    /// A subject's own config over the global one, as Confluent's `Config.mergeConfigs` (master,
    /// `getConfigInScope` since c3ed090d37c): `normalize`, `validateFields` and `compatibilityGroup`
    /// (and the level) are this record's where set, else `fallback`'s; the data-contract defaults and
    /// overrides and `alias` are this record's alone, so a global `defaultMetadata`, `overrideMetadata`,
    /// `defaultRuleSet` or `overrideRuleSet` does not reach a subject with a config of its own.
    pub fn over(self, fallback: ConfigRecord) -> ConfigRecord {
        ConfigRecord {
            compatibility_level: self.compatibility_level.or(fallback.compatibility_level),
            normalize: self.normalize.or(fallback.normalize),
            default_metadata: self.default_metadata,
            override_metadata: self.override_metadata,
            default_rule_set: self.default_rule_set,
            override_rule_set: self.override_rule_set,
            alias: self.alias,
            compatibility_group: self.compatibility_group.or(fallback.compatibility_group),
            validate_fields: self.validate_fields.or(fallback.validate_fields),
        }
    }

    /// Whether any data-contract default or override is set (Confluent's `hasDefaultsOrOverrides`).
    pub fn has_contract_settings(&self) -> bool {
        self.default_metadata.is_some()
            || self.override_metadata.is_some()
            || self.default_rule_set.is_some()
            || self.override_rule_set.is_some()
    }
}

registry_schema::wire_names! {
    /// Registry modes. Parsed case-insensitively, displayed upper-case.
    #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, Default)]
    pub enum Mode {
        #[default]
        ReadWrite = "READWRITE",
        ReadOnly = "READONLY",
        ReadOnlyOverride = "READONLY_OVERRIDE",
        Import = "IMPORT",
    }
}

impl FromStr for Mode {
    type Err = RegistryError;

    /// Case-insensitive (42204 on an unknown name).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Mode::from_wire_name(&s.to_ascii_uppercase()).ok_or_else(|| RegistryError::InvalidMode { mode: s.to_string() })
    }
}

/// Which subjects (or versions) a listing includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum DeletedFilter {
    /// Only those with at least one live version (the default).
    #[default]
    LiveOnly,
    /// Soft-deleted ones too (`deleted=true`).
    IncludeDeleted,
    /// Only those whose every version is soft-deleted (`deletedOnly=true`).
    DeletedOnly,
}

impl DeletedFilter {
    /// From Confluent's two query flags: `deletedOnly` wins over `deleted`.
    pub fn of(deleted: bool, deleted_only: bool) -> Self {
        match (deleted, deleted_only) {
            (_, true) => DeletedFilter::DeletedOnly,
            (true, false) => DeletedFilter::IncludeDeleted,
            (false, false) => DeletedFilter::LiveOnly,
        }
    }

    /// Whether a version with this `deleted` flag is listed.
    pub fn includes(self, deleted: bool) -> bool {
        match self {
            DeletedFilter::LiveOnly => !deleted,
            DeletedFilter::IncludeDeleted => true,
            DeletedFilter::DeletedOnly => deleted,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parsed(text: &str) -> Scope {
        Scope::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn setting_scopes_parse_as_confluent_names_them() {
        assert_eq!(parsed(":.:"), Scope::Global);
        assert_eq!(parsed(":."), Scope::Global);
        assert_eq!(parsed(":.team:"), parsed(":.team"));
        assert_eq!(parsed(":.team:").settings_context().map(|c| c.name().to_string()), Some(".team".into()));
        assert!(parsed(":.__GLOBAL:").is_registry_wide());
        assert_eq!(parsed(":.team:orders").settings_context(), None);
        for bad in [":*:orders", ":.__GLOBAL:orders", ":.team:__GLOBAL", "a\u{7}"] {
            assert!(Scope::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn resolution_goes_through_the_context_then_the_registry_wide_scope() {
        let wide = Scope::registry_wide();
        assert_eq!(parsed("orders").resolution(), [parsed("orders"), Scope::Global, wide.clone()]);
        assert_eq!(parsed(":.team:orders").resolution(), [parsed(":.team:orders"), parsed(":.team:"), wide.clone()]);
        assert_eq!(parsed(":.team:").resolution(), [parsed(":.team:"), wide.clone()]);
        assert_eq!(Scope::Global.resolution(), [Scope::Global, wide.clone()]);
        assert_eq!(wide.resolution(), vec![wide.clone()]);
        assert_eq!(parsed(":.team:orders").settings_read().last(), Some(&Scope::Global), "for READONLY_OVERRIDE");
    }

    #[test]
    fn version_selector_follows_confluent_version_id() {
        assert_eq!("latest".parse::<VersionSelector>().ok(), Some(VersionSelector::Latest));
        assert_eq!("LATEST".parse::<VersionSelector>().ok(), Some(VersionSelector::Latest));
        assert_eq!("-1".parse::<VersionSelector>().ok(), Some(VersionSelector::Latest));
        assert_eq!(" 3 ".parse::<VersionSelector>().ok(), Some(VersionSelector::Number(Version(3))));
        assert_eq!("2147483647".parse::<VersionSelector>().ok(), Some(VersionSelector::Number(Version(i32::MAX))));
        for bad in ["0", "-2", "abc", "1.5", "2147483648", ""] {
            assert!(matches!(bad.parse::<VersionSelector>(), Err(RegistryError::InvalidVersion { .. })), "{bad}");
        }
    }

    #[test]
    fn subjects_reject_control_characters_and_reserved_names() {
        assert!(Subject::new("orders-value").is_ok());
        assert!(Subject::new("pkg1/msg1.proto").is_ok());
        assert!(Subject::new(":.ctx:name with space").is_ok());
        for bad in ["", "a\u{0}b", "tab\there", "__GLOBAL", "__EMPTY"] {
            assert!(matches!(Subject::new(bad), Err(RegistryError::InvalidSubject { .. })), "{bad:?}");
        }
        assert!(Subject::new("s".repeat(Subject::MAX_BYTES)).is_ok());
        assert!(Subject::new("é".repeat(Subject::MAX_BYTES / 2)).is_ok(), "the bound counts UTF-8 bytes");
        let too_long = Subject::new("s".repeat(Subject::MAX_BYTES + 1));
        assert!(matches!(too_long, Err(RegistryError::InvalidSubject { .. })));
    }

    #[test]
    fn qualified_subjects_name_their_context_and_the_default_context_is_unqualified() {
        let subject = |name: &str| Subject::new(name).unwrap_or_else(|e| panic!("{name}: {e}"));
        let qualified = subject(":.team-a:orders");
        assert_eq!(qualified.as_str(), ":.team-a:orders");
        assert_eq!(qualified.context().name(), ".team-a");
        assert_eq!(subject(":.:orders"), subject("orders"), ":.:name is name");
        assert!(subject("orders").context().is_default());
        assert_eq!(subject(":.a:b:c").context().name(), ".a", "the name may hold colons");
        for bad in [":.ctx:", ":.ctx", ":.:", ":.ctx:__GLOBAL", ":.ctx:__EMPTY", ":.__GLOBAL:orders", ":*:orders"] {
            assert!(matches!(Subject::new(bad), Err(RegistryError::InvalidSubject { .. })), "{bad:?}");
        }
    }

    #[test]
    fn modes_parse_case_insensitively() {
        assert_eq!("readonly".parse::<Mode>().ok(), Some(Mode::ReadOnly));
        assert_eq!("IMPORT".parse::<Mode>().ok(), Some(Mode::Import));
        assert!(matches!("WRITEONLY".parse::<Mode>(), Err(RegistryError::InvalidMode { .. })));
    }
}
