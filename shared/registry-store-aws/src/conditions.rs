//! Write contexts and preconditions (see [`registry_core::Preconditions`]) as DynamoDB items.
//!
//! - A subject's revision is the `rev` attribute of its `SUBJECTS/<subject>` index item, which
//!   every transaction that changes one of its rows already updates (`ADD rev` costs nothing
//!   more; by 1, or by 2^32 for a write that keeps the subject's live version records true, see
//!   `live_versions`); the revision condition sits on that same update.
//! - Config and mode items are compared by their stored `value` (or absence) with ConditionCheck
//!   items inside the write's transaction: no extra call, one item each.
//! - A referenced version must be live: a ConditionCheck on its row, and `ADD rev` on its
//!   subject's index item so a delete that read the referrers before conflicts.
//! - A reused ID's binding `FP#<hex>/ID` must still name it: `ADD uses 1` conditioned on `id`, so a
//!   hard delete that read the ID's carriers (after reading `uses`) conflicts.
//!
//! `layered_write_context` reads the settings items of every scope a decision resolves through
//! (the subject, its context `:.ctx:`, the registry-wide `:.__GLOBAL:` and the global scope) and
//! the index item in one BatchGetItem, and with them the bindings of the schema a registration
//! expects to write and the subject's record of its live version (`live_versions`); every
//! conditioned write checks each of those settings items.

use crate::AwsStore;
use crate::assign::bindings_seen;
use crate::errors::AwsError;
use crate::ids::{build_error, id_binding_key};
use crate::items::{Item, ItemExt, attr, item_at, key, n, s};
use crate::keys::{self, PK};
use crate::live_versions::{KEEPING_STEP, trusted_record};
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::types::builders::UpdateBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem};
use registry_core::{
    BindingsSeen, Context, Fingerprint, Guid, LayeredContext, Preconditions, Revision, SchemaId, Scope, SettingKind,
    SettingSeen, Subject,
};
use std::collections::HashMap;

/// Attribute of the subject index item holding its revision.
pub(crate) const REVISION: &str = "rev";
/// Attribute of the fingerprint binding counting registrations that reused it.
pub(crate) const USES: &str = "uses";
/// Attribute of the ID binding `ID#<id>/FP` counting rows committed under it by a request that
/// named the ID (IMPORT): a rebind of the ID (`rebind`) conditioned on it conflicts with them.
pub(crate) const CARRIED: &str = "carried";

/// The partition of a settings kind (`CONFIG` or `MODE`).
pub(crate) fn kind_pk(kind: SettingKind) -> &'static str {
    match kind {
        SettingKind::Config => "CONFIG",
        SettingKind::Mode => "MODE",
    }
}

/// A condition expression with its names and values, to put on an item of a transaction.
pub(crate) struct Condition {
    pub expression: String,
    pub names: HashMap<String, String>,
    pub values: HashMap<String, AttributeValue>,
}

/// The condition that a settings item is still as `seen` (same stored value, or still absent).
pub(crate) fn setting_condition(seen: &SettingSeen) -> Condition {
    match &seen.stored {
        None => Condition {
            expression: "attribute_not_exists(#pk)".into(),
            names: HashMap::from([("#pk".to_string(), PK.to_string())]),
            values: HashMap::new(),
        },
        Some(value) => Condition {
            expression: "#value = :seen".into(),
            names: HashMap::from([("#value".to_string(), attr::VALUE.to_string())]),
            values: HashMap::from([(":seen".to_string(), s(value.clone()))]),
        },
    }
}

/// The condition that a subject's revision is still `revision` (`None`: no condition).
pub(crate) fn revision_condition(revision: Option<Revision>) -> Option<Condition> {
    let revision = revision?;
    let names = HashMap::from([("#rev".to_string(), REVISION.to_string())]);
    Some(match revision {
        Revision(0) => Condition { expression: "attribute_not_exists(#rev)".into(), names, values: HashMap::new() },
        Revision(r) => Condition {
            expression: "#rev = :seen_rev".into(),
            names,
            values: HashMap::from([(":seen_rev".to_string(), n(r))]),
        },
    })
}

/// The condition that an ID binding `ID#<id>/FP` names `fingerprint`.
pub(crate) fn names_fingerprint(fingerprint: &Fingerprint) -> Condition {
    Condition {
        expression: "#fp = :fp".into(),
        names: HashMap::from([("#fp".to_string(), attr::FINGERPRINT.to_string())]),
        values: HashMap::from([(":fp".to_string(), s(fingerprint.to_hex()))]),
    }
}

impl Condition {
    /// `update` conditioned on this: its names and values added to the update's own.
    pub(crate) fn on_update(self, update: UpdateBuilder) -> UpdateBuilder {
        let update = update.condition_expression(self.expression);
        let update = self
            .names
            .into_iter()
            .fold(update, |update, (name, attribute)| update.expression_attribute_names(name, attribute));
        self.values.into_iter().fold(update, |update, (name, value)| update.expression_attribute_values(name, value))
    }
}

/// What a decision read in one BatchGetItem ([`AwsStore::read_decision`]).
struct DecisionRead {
    revision: Revision,
    /// The config and mode items of every level read, configs first.
    seen: Vec<SettingSeen>,
    bindings: Vec<BindingsSeen>,
    last_used: Option<u32>,
}

impl AwsStore {
    /// What a write at `scope` decides on with every settings layer, as
    /// [`registry_core::Store::layered_write_context`]: the settings items at every scope of
    /// [`Scope::settings_read`] (a named context's subject: eight items) in the same BatchGetItem.
    pub(crate) async fn read_layered_context(
        &self,
        scope: &Scope,
        schemas: &[(Fingerprint, Guid)],
    ) -> Result<LayeredContext, AwsError> {
        let read = self.read_decision(scope, &scope.settings_read(), schemas).await?;
        let context = LayeredContext::from_stored(
            scope,
            read.revision,
            read.seen,
            read.last_used,
            crate::settings::parse_config,
            crate::settings::parse_mode,
        )?;
        Ok(LayeredContext { bindings: read.bindings, ..context })
    }

    /// The config and mode items at each of `levels`, and for a subject its index item and usage
    /// marker with the bindings of `schemas` (`assign::binding_keys`) and its records of their live
    /// versions (`live_versions`), in one strongly consistent BatchGetItem.
    async fn read_decision(
        &self,
        scope: &Scope,
        levels: &[Scope],
        schemas: &[(Fingerprint, Guid)],
    ) -> Result<DecisionRead, AwsError> {
        let settings: Vec<(SettingKind, &Scope)> = [SettingKind::Config, SettingKind::Mode]
            .into_iter()
            .flat_map(|kind| levels.iter().map(move |level| (kind, level)))
            .collect();
        let mut wanted: Vec<Item> = settings
            .iter()
            .map(|(kind, scope)| {
                let (pk, sk) = keys::scoped(kind_pk(*kind), scope);
                key(pk, sk)
            })
            .collect();
        let (schemas, context) = if let Scope::Subject(subject) = scope {
            wanted.push(key(keys::SUBJECTS_PK, subject.as_str()));
            wanted.push(crate::usage::marker_key(subject));
            (schemas, subject.context())
        } else {
            (&[][..], Context::DEFAULT)
        };
        for (fingerprint, guid) in schemas {
            if let Scope::Subject(subject) = scope {
                wanted.push(crate::live_versions::record_key(subject, fingerprint));
            }
            for binding in self.binding_keys(&context, fingerprint, guid) {
                if !wanted.contains(&binding) {
                    wanted.push(binding);
                }
            }
        }
        let found = self.batch_get("BatchGetItem(write context)", wanted).await?;
        let item_at = |pk: &str, sk: &str| item_at(&found, pk, sk);
        let mut seen = Vec::with_capacity(settings.len());
        for (kind, scope) in settings {
            let (pk, sk) = keys::scoped(kind_pk(kind), scope);
            let stored = item_at(&pk, &sk).map(|item| item.string(attr::VALUE).map(str::to_string)).transpose()?;
            seen.push(SettingSeen { kind, scope: scope.clone(), stored });
        }
        let (revision, last_used) = match scope {
            Scope::Subject(subject) => {
                let revision = match item_at(keys::SUBJECTS_PK, subject.as_str()) {
                    Some(item) => Revision(item.optional_number(REVISION)?.unwrap_or(0)),
                    None => Revision(0),
                };
                let (pk, sk) = (keys::subject_pk(subject), crate::usage::USED_SK);
                (revision, item_at(&pk, sk).map(crate::usage::marker_day).transpose()?.flatten())
            }
            Scope::Global => (Revision(0), None),
        };
        let mut bindings = schemas
            .iter()
            .map(|(fingerprint, guid)| bindings_seen(&found, &context, fingerprint, guid))
            .collect::<Result<Vec<_>, _>>()?;
        if let Scope::Subject(subject) = scope {
            for seen in &mut bindings {
                seen.live_version = trusted_record(&found, subject, &seen.fingerprint, revision)?;
            }
        }
        Ok(DecisionRead { revision, seen, bindings, last_used })
    }

    /// ConditionCheck items for the settings of `preconditions`, except those `skip` says another
    /// item of the same transaction writes (it must carry the condition itself).
    pub(crate) fn settings_checks(
        &self,
        preconditions: &Preconditions,
        skip: impl Fn(&SettingSeen) -> bool,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let mut items = Vec::new();
        for seen in preconditions.settings.iter().filter(|seen| !skip(seen)) {
            let (pk, sk) = keys::scoped(kind_pk(seen.kind), &seen.scope);
            items.push(self.condition_check("ConditionCheck(setting)", key(pk, sk), setting_condition(seen))?);
        }
        Ok(items)
    }

    /// A ConditionCheck that `subject`'s revision is still `revision`.
    pub(crate) fn revision_check(&self, subject: &Subject, revision: Revision) -> Result<TransactWriteItem, AwsError> {
        let Some(condition) = revision_condition(Some(revision)) else {
            return Err(build_error("ConditionCheck(revision)", "no revision"));
        };
        self.condition_check("ConditionCheck(revision)", key(keys::SUBJECTS_PK, subject.as_str()), condition)
    }

    /// For each referenced version: a ConditionCheck that its row exists and is live; for each
    /// referenced subject other than `subject`: `ADD rev 1` on its index item.
    pub(crate) fn referenced_items(
        &self,
        subject: &Subject,
        preconditions: &Preconditions,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        let mut items = Vec::new();
        let mut bumped: Vec<&Subject> = Vec::new();
        for (referenced, version) in &preconditions.live_rows {
            let check = self
                .check_of(key(keys::subject_pk(referenced), keys::version_sk(*version)))
                .condition_expression("attribute_exists(#pk) AND #deleted = :live")
                .expression_attribute_names("#pk", PK)
                .expression_attribute_names("#deleted", attr::DELETED)
                .expression_attribute_values(":live", AttributeValue::Bool(false));
            items.push(transact_item("ConditionCheck(referenced)", Part::Check(check))?);
            if referenced != subject && !bumped.contains(&referenced) {
                bumped.push(referenced);
                // Its rows do not change: a keeping step (see `live_versions`).
                let bump = self
                    .update_of(key(keys::SUBJECTS_PK, referenced.as_str()))
                    .update_expression("ADD #rev :step")
                    .expression_attribute_names("#rev", REVISION)
                    .expression_attribute_values(":step", n(KEEPING_STEP));
                items.push(transact_item("Update(referenced subject)", Part::Update(bump))?);
            }
        }
        Ok(items)
    }

    /// `ADD uses 1` on the binding `FP#<hex>/ID[:<context>]`, conditioned on it still naming `id`;
    /// with `guid`, also `SET guid`: the guid item the same write gives the ID (see `assign`).
    pub(crate) fn binding_use(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
        id: SchemaId,
        guid: Option<&Guid>,
    ) -> Result<TransactWriteItem, AwsError> {
        let update = self.update_of(crate::ids::fingerprint_binding_key(context, fingerprint));
        let update = match guid {
            Some(guid) => update
                .update_expression("ADD #uses :one SET #guid = :guid")
                .expression_attribute_names("#guid", attr::GUID)
                .expression_attribute_values(":guid", s(guid.to_hex())),
            None => update.update_expression("ADD #uses :one"),
        };
        let update = update
            .condition_expression("#id = :id")
            .expression_attribute_names("#uses", USES)
            .expression_attribute_names("#id", attr::ID)
            .expression_attribute_values(":one", n(1))
            .expression_attribute_values(":id", n(id.0));
        transact_item("Update(binding)", Part::Update(update))
    }

    /// `ADD carried 1` on the binding `ID#<id>[:<context>]/FP`, conditioned on it still naming
    /// `fingerprint` ([`Preconditions::id_binding`]).
    pub(crate) fn id_binding_use(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<TransactWriteItem, AwsError> {
        let update = self
            .update_of(id_binding_key(context, id))
            .update_expression("ADD #carried :one")
            .expression_attribute_names("#carried", CARRIED)
            .expression_attribute_values(":one", n(1));
        transact_item("Update(id binding)", Part::Update(names_fingerprint(fingerprint).on_update(update)))
    }

    /// `ADD total, live, rev <step>` on the subject's index item, conditioned on its revision when
    /// `revision` is given (the commit point of every change to the subject's rows; built by
    /// [`crate::commit::Commit`], which chooses the step, see `live_versions`).
    pub(crate) fn subject_update_by(
        &self,
        subject: &Subject,
        total: i64,
        live: i64,
        revision: Option<Revision>,
        step: u64,
    ) -> Result<TransactWriteItem, AwsError> {
        let mut update = self
            .update_of(key(keys::SUBJECTS_PK, subject.as_str()))
            .update_expression("ADD #total :total, #live :live, #rev :step")
            .expression_attribute_names("#total", attr::TOTAL)
            .expression_attribute_names("#live", attr::LIVE)
            .expression_attribute_names("#rev", REVISION)
            .expression_attribute_values(":total", n(total))
            .expression_attribute_values(":live", n(live))
            .expression_attribute_values(":step", n(step));
        if let Some(condition) = revision_condition(revision) {
            update = condition.on_update(update);
        }
        transact_item("subject index", Part::Update(update))
    }
}
