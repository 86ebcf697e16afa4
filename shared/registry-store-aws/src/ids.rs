//! Schema IDs: the counter item and the two binding items, written in one transaction.
//!
//! Every context has its own three kinds of items (see [`keys::in_context`]); the default context's
//! are written below. `COUNTER/ID {max_id}` is the greatest ID ever allocated or bound. `allocate_id` reads it
//! (strongly consistent), claims the next ID in the ledger outside the table ([`crate::ledger`]:
//! past every ID ever issued, even when the table was restored to an earlier state) and commits it
//! with a transaction that is conditioned on the value it read and creates `FP#<hex>/ID` and
//! `ID#<id>/FP` with `attribute_not_exists`, so two writers can never commit the same ID and a
//! fingerprint is never bound twice by allocation.
//!
//! A named context's counter `COUNTER/ID:<context> {max_id, listed}` also lists the context: every
//! allocation sets `listed` in its transaction, `bind_id` with its counter raise, and
//! `unlist_context` removes it. `list_contexts` is one Query of the `COUNTER` partition.

use crate::AwsStore;
use crate::conditions::{USES, names_fingerprint};
use crate::errors::{AwsError, classify, classify_transaction};
use crate::fence::OneWrite;
use crate::fence::allocation_base;
use crate::items::{Item, ItemExt, attr, fingerprint_of, key, n, s};
use crate::keys::{self, PK};
use crate::ledger::Claim;
use crate::transact::{Part, transact_item};
use aws_sdk_dynamodb::operation::update_item::builders::UpdateItemFluentBuilder;
use aws_sdk_dynamodb::types::{AttributeValue, TransactWriteItem, Update};
use registry_core::id_rules::{self, Allocation, BindDecision, BindRead};
use registry_core::{Context, Fingerprint, Guid, SchemaId};

/// An allocation committed with the ID's first carrier: the binding starts with that one use,
/// and names the guid whose item the same write gives the ID, if any (see `assign`).
pub(crate) struct FirstCarrier<'a> {
    pub guid: Option<&'a Guid>,
}

/// What a failed TransactWriteItems call returns.
pub(crate) type TransactionError = aws_sdk_dynamodb::error::SdkError<
    aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError,
    aws_sdk_dynamodb::config::http::HttpResponse,
>;

impl AwsStore {
    pub(crate) async fn get_item(&self, op: &'static str, item_key: Item) -> Result<Option<Item>, AwsError> {
        let output = self
            .dynamo
            .get_item()
            .table_name(&self.table)
            .set_key(Some(item_key))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| classify(op, e))?;
        Ok(output.item)
    }

    pub(crate) async fn read_max_id(&self, context: &Context) -> Result<Option<i32>, AwsError> {
        let item = self.get_item("GetItem(counter)", key(keys::COUNTER_PK, keys::counter_sk(context))).await?;
        match item {
            Some(item) => item.optional_number(attr::MAX_ID),
            None => Ok(None),
        }
    }

    pub(crate) async fn read_id_for_fingerprint(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
    ) -> Result<Option<SchemaId>, AwsError> {
        let item = self.get_item("GetItem(fingerprint)", fingerprint_binding_key(context, fingerprint));
        match item.await? {
            Some(item) => Ok(Some(SchemaId(item.number(attr::ID)?))),
            None => Ok(None),
        }
    }

    pub(crate) async fn read_fingerprint_for_id(
        &self,
        context: &Context,
        id: SchemaId,
    ) -> Result<Option<Fingerprint>, AwsError> {
        match self.get_item("GetItem(id)", id_binding_key(context, id)).await? {
            Some(item) => Ok(Some(fingerprint_of(&item)?)),
            None => Ok(None),
        }
    }

    /// Reads the counter and the fingerprint's binding together (one BatchGetItem, with the home
    /// marker on a fenced store: [`AwsStore::counter_keys`]), so a bound fingerprint conflicts
    /// before it claims an ID in the ledger (a claim no allocation commits would leave a gap).
    pub(crate) async fn allocate(&self, context: &Context, fingerprint: &Fingerprint) -> Result<SchemaId, AwsError> {
        let binding = fingerprint_binding_key(context, fingerprint);
        let mut wanted = vec![binding];
        wanted.extend(self.counter_keys(context));
        let found = self.batch_get("BatchGetItem(counter, fingerprint)", wanted).await?;
        let read = allocation_base(&found, context)?;
        let binding_pk = keys::fingerprint_pk(fingerprint);
        let mut bound = None;
        for item in &found {
            if item.get(PK).and_then(|v| v.as_s().ok()).is_some_and(|pk| *pk == binding_pk) {
                bound = Some(SchemaId(item.number(attr::ID)?));
            }
        }
        if let Allocation::AlreadyBound(id) = id_rules::allocation(bound, read.map(SchemaId)) {
            let detail = format!("fingerprint {fingerprint} already has id {id} in {context}");
            return Err(AwsError::ConditionFailed { op: "allocate_id", detail });
        }
        let next = self.claim_next(context, read, fingerprint).await?;
        let items = self.allocation_items(context, read, next, fingerprint, None)?;
        let result = self.dynamo.transact_write_items().set_transact_items(Some(self.fenced(items)?)).send().await;
        let op = "TransactWriteItems(allocate_id)";
        match result {
            Ok(_) => Ok(SchemaId(next)),
            Err(error) => Err(self.fence_refusal(op, &error).unwrap_or_else(|| allocation_error(op, next, error))),
        }
    }

    /// The three items that commit `next` (claimed in the ledger after counter value `read`) for
    /// `fingerprint` in `context`, in this order: the counter update conditioned on being at most
    /// `read` (a concurrent allocation raised it: the transaction is cancelled; listing a
    /// named context), `FP#…` and `ID#…` created if absent (the fingerprint binding as
    /// `first_carrier` says when the same write commits the ID's first carrier). [`allocation_error`]
    /// reads a cancellation by this order.
    pub(crate) fn allocation_items(
        &self,
        context: &Context,
        read: Option<i32>,
        next: i32,
        fingerprint: &Fingerprint,
        first_carrier: Option<FirstCarrier<'_>>,
    ) -> Result<Vec<TransactWriteItem>, AwsError> {
        // At most the value read, not equal to it: on a fenced store `read` may be the marker's
        // floor, above a counter that an old home's late write took back (see `fence`).
        let counter = match read {
            Some(max) => Update::builder()
                .condition_expression("attribute_not_exists(#max) OR #max <= :read")
                .expression_attribute_values(":read", n(max)),
            None => Update::builder().condition_expression("attribute_not_exists(#max)"),
        }
        .table_name(&self.table)
        .set_key(Some(key(keys::COUNTER_PK, keys::counter_sk(context))))
        .expression_attribute_names("#max", attr::MAX_ID)
        .expression_attribute_values(":next", n(next));
        let counter = if context.is_default() {
            counter.update_expression("SET #max = :next")
        } else {
            counter
                .update_expression("SET #max = :next, #listed = :listed")
                .expression_attribute_names("#listed", attr::LISTED)
                .expression_attribute_values(":listed", AttributeValue::Bool(true))
        };
        let counter = transact_item("allocate_id", Part::Update(counter))?;
        let mut by_fingerprint = fingerprint_binding_key(context, fingerprint);
        by_fingerprint.insert(attr::ID.into(), n(next));
        if let Some(carrier) = first_carrier {
            by_fingerprint.insert(USES.into(), n(1));
            if let Some(guid) = carrier.guid {
                by_fingerprint.insert(attr::GUID.into(), s(guid.to_hex()));
            }
        }
        let mut by_id = id_binding_key(context, SchemaId(next));
        by_id.insert(attr::FINGERPRINT.into(), s(fingerprint.to_hex()));
        Ok(vec![counter, self.put_if_absent(by_fingerprint)?, self.put_if_absent(by_id)?])
    }

    /// The ID an allocation in `context` after counter value `read` takes ([`id_rules::allocation`]
    /// for `fingerprint`, read unbound): the next one, claimed for it in the context's ledger; a
    /// counter at the top is lowered first and the allocation conflicts (the caller's retry reads
    /// the lowered counter). When another fingerprint holds that claim (a
    /// concurrent allocation, one abandoned by a failed writer, or one a restore of the table
    /// rewound), the claim is committed for its holder ([`AwsStore::commit_claim`]) and this
    /// allocation conflicts: the caller reads the counter again and takes the ID after it, so
    /// allocations leave no gaps, and the holder, retrying, finds its fingerprint bound to the ID
    /// it claimed. A claim that cannot be committed (its holder got bound to another ID, or the ID
    /// is bound already) is passed: the one after the highest ID in the ledger.
    pub(crate) async fn claim_next(
        &self,
        context: &Context,
        read: Option<i32>,
        fingerprint: &Fingerprint,
    ) -> Result<i32, AwsError> {
        const MAX_CLAIMS: usize = 8;
        let mut next = match id_rules::allocation(None, read.map(SchemaId)) {
            Allocation::Take(next) => next.0,
            Allocation::LowerCounter => {
                self.lower_counter_from_top(context).await?;
                let detail = format!("the counter of {context} was at the top of the ID space and was lowered");
                return Err(AwsError::ConditionFailed { op: "allocate_id", detail });
            }
            Allocation::AlreadyBound(id) => {
                let detail = format!("fingerprint {fingerprint} already has id {id} in {context}");
                return Err(AwsError::ConditionFailed { op: "allocate_id", detail });
            }
        };
        for _ in 0..MAX_CLAIMS {
            match self.claim_id(context, SchemaId(next), fingerprint).await? {
                Claim::Ours => return Ok(next),
                Claim::Taken(Some(holder)) if Some(next) == successor(context, read).ok() => {
                    if self.commit_claim(context, read, next, &holder).await? {
                        let detail = format!("id {next} in {context} was claimed by a concurrent allocation");
                        return Err(AwsError::ConditionFailed { op: "allocate_id", detail });
                    }
                    let highest = self.ledger_max_after(context, SchemaId(next)).await?;
                    next = successor(context, Some(highest.map_or(next, |id| id.0.max(next))))?;
                }
                Claim::Taken(_) => {
                    let highest = self.ledger_max_after(context, SchemaId(next)).await?;
                    let highest = highest.map_or(next, |id| id.0.max(next));
                    next = successor(context, Some(highest))?;
                }
            }
        }
        Err(AwsError::ConditionFailed { op: "allocate_id", detail: "every ledger claim met a concurrent one".into() })
    }

    /// Lowers `context`'s counter from `i32::MAX` (an IMPORT above [`SchemaId::MAX_IMPORTED`] put it
    /// there before the registry refused those) to [`id_rules::counter_after_lowering`] of the
    /// greatest ID at or below `MAX_IMPORTED` in the ledger, past the run of IDs the ledger holds
    /// right after it ([`AwsStore::ledger_floor`]), in one update conditioned on the counter still
    /// being at the top (a concurrent lowering wins). IDs above stay in the ledger and bound, so
    /// they are never handed out. `Limit` when that run reaches the top: every ID is taken.
    async fn lower_counter_from_top(&self, context: &Context) -> Result<(), AwsError> {
        let floor = self.ledger_floor(context).await?;
        let floor = id_rules::counter_after_lowering(floor).map_err(|_| exhausted(context))?;
        let lower = self
            .counter_update(context)
            .condition_expression("#max = :top")
            .expression_attribute_names("#max", attr::MAX_ID)
            .expression_attribute_values(":top", n(i32::MAX));
        let lower = match floor {
            Some(floor) => {
                lower.update_expression("SET #max = :floor").expression_attribute_values(":floor", n(floor.0))
            }
            None => lower.update_expression("REMOVE #max"),
        };
        match self.write_one("UpdateItem(counter lowered)", OneWrite::Update(lower)).await {
            Ok(_) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// Commits the ledger's claim of `next` for `holder` (taken after counter value `read`) as
    /// `allocate_id` would have: the counter, both bindings, no carrier. `true` when it is committed
    /// now or the counter moved meanwhile (the caller reads it again); `false` when the claim cannot
    /// be committed (the holder is bound to another ID, or `next` is bound already).
    async fn commit_claim(
        &self,
        context: &Context,
        read: Option<i32>,
        next: i32,
        holder: &Fingerprint,
    ) -> Result<bool, AwsError> {
        let items = self.allocation_items(context, read, next, holder, None)?;
        let items = self.fenced(items)?;
        let Err(error) = self.dynamo.transact_write_items().set_transact_items(Some(items)).send().await else {
            return Ok(true);
        };
        let op = "TransactWriteItems(commit claim)";
        if let Some(fenced) = self.fence_refusal(op, &error) {
            return Err(fenced);
        }
        let (error, reasons) = classify_transaction(op, error);
        let failed = |i: usize| reasons.get(i).is_some_and(|r| r.as_deref() == Some("ConditionalCheckFailed"));
        match error {
            AwsError::ConditionFailed { .. } if !failed(0) && (failed(1) || failed(2)) => Ok(false),
            AwsError::ConditionFailed { .. } => Ok(true),
            other => Err(other),
        }
    }

    /// Raises `context`'s counter to `id`; never lowers it (a counter already at or above `id` is
    /// left as it is): [`id_rules::counter_after_binding`] as the update's condition, without a read. With `list`, a named context is listed too (one more call when its counter
    /// was already at or above `id`).
    pub(crate) async fn raise_counter(&self, context: &Context, id: SchemaId, list: bool) -> Result<(), AwsError> {
        let list = list && !context.is_default();
        let raise = self
            .counter_update(context)
            .condition_expression("attribute_not_exists(#max) OR #max < :id")
            .expression_attribute_names("#max", attr::MAX_ID)
            .expression_attribute_values(":id", n(id.0));
        let raise = match list {
            true => raise
                .update_expression("SET #max = :id, #listed = :listed")
                .expression_attribute_names("#listed", attr::LISTED)
                .expression_attribute_values(":listed", AttributeValue::Bool(true)),
            false => raise.update_expression("SET #max = :id"),
        };
        // Fenced: the same update in a transaction beside the fence (see `fence`).
        match self.write_one("UpdateItem(counter)", OneWrite::Update(raise)).await {
            Ok(_) => Ok(()),
            Err(AwsError::ConditionFailed { .. }) if list => self.set_listed(context, true).await,
            Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// An UpdateItem of `context`'s counter item.
    fn counter_update(&self, context: &Context) -> UpdateItemFluentBuilder {
        let counter = key(keys::COUNTER_PK, keys::counter_sk(context));
        self.dynamo.update_item().table_name(&self.table).set_key(Some(counter))
    }

    /// Lists (`true`) or unlists a named context: sets or removes `listed` on its counter item.
    /// Unlisting a context without a counter writes nothing. Fenced on a home-region store.
    pub(crate) async fn set_listed(&self, context: &Context, listed: bool) -> Result<(), AwsError> {
        if context.is_default() {
            return Ok(());
        }
        let update = self.counter_update(context).expression_attribute_names("#listed", attr::LISTED);
        let update = match listed {
            true => update
                .update_expression("SET #listed = :listed")
                .expression_attribute_values(":listed", AttributeValue::Bool(true)),
            false => update
                .update_expression("REMOVE #listed")
                .condition_expression("attribute_exists(#pk)")
                .expression_attribute_names("#pk", PK),
        };
        match self.write_one("UpdateItem(counter listing)", OneWrite::Update(update)).await {
            Ok(_) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// The listed named contexts, ascending: one Query of the `COUNTER` partition (one item per
    /// context that ever took an ID; paginated), keeping those with `listed`.
    pub(crate) async fn listed_contexts(&self) -> Result<Vec<Context>, AwsError> {
        let counters = self.query_prefix(keys::COUNTER_PK.to_string(), keys::NAMED_COUNTER_SK_PREFIX).await?;
        let mut contexts = Vec::new();
        for item in counters.iter().filter(|item| matches!(item.get(attr::LISTED), Some(AttributeValue::Bool(true)))) {
            let sk = item.string(keys::SK)?;
            let name = keys::context_of_counter_sk(sk).ok_or_else(|| AwsError::Corrupt(format!("counter {sk}")))?;
            contexts.push(Context::parse(name).map_err(|e| AwsError::Corrupt(format!("counter {sk}: {e}")))?);
        }
        Ok(contexts)
    }

    /// IMPORT's bind ([`id_rules::bind_decision`]): an ID the table binds to another fingerprint
    /// goes to `rebind`, which reads the carriers and decides. Otherwise claims `id` for
    /// `fingerprint` in the ledger, raises the counter to `id` (never lowers it), then binds id →
    /// fingerprint unless the same binding is there, then fingerprint → id if that side is free
    /// (not read: the put is conditioned on its absence, which decides it). Each step is
    /// idempotent, and a crash after any of them leaves at most an unused gap below the counter; on
    /// a fenced store each table write carries the fence (see `fence`).
    /// An ID the ledger gives another fingerprint while the table binds it to none is refused
    /// (`ConditionFailed`) before anything is written: the table is read first because IDs issued
    /// before the ledger existed have no ledger entry.
    pub(crate) async fn bind(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<(), AwsError> {
        let refused = |detail: &str| AwsError::ConditionFailed {
            op: "bind_id",
            detail: format!("id {id} in {context} {detail}"),
        };
        let bound = self.read_fingerprint_for_id(context, id).await?;
        if let Some(freed) = id_rules::needs_carriers(bound, fingerprint) {
            return self.rebind(context, id, &freed, fingerprint).await;
        }
        let decision =
            id_rules::bind_decision(id, fingerprint, &BindRead { id_bound_to: bound, ..BindRead::default() });
        match self.claim_id(context, id, fingerprint).await? {
            // The table gives it this schema: a rebind whose ledger write a crash cut off.
            Claim::Taken(_) if bound.is_some() => self.reissue_claim(context, id, fingerprint).await?,
            Claim::Taken(_) => return Err(refused("was issued to another schema (ledger)")),
            Claim::Ours => {}
        }
        self.raise_counter(context, id, true).await?;
        match decision {
            // Written only when absent: a binding already there keeps its `carried` count (`rebind`).
            BindDecision::Bind { .. } => {
                let by_id = id_binding_key(context, id);
                self.put_fingerprint_binding("PutItem(id)", by_id, fingerprint).await?;
            }
            BindDecision::AlreadyBound { .. } => {}
            // Not reached: an ID bound to another schema went to `rebind`.
            BindDecision::Rebind { .. } | BindDecision::Conflict { .. } => {
                return Err(refused("was rebound concurrently"));
            }
        }
        if !decision.bind_reverse() {
            return Ok(());
        }
        // The fingerprint's side, committed on the ID's side still naming the fingerprint as read
        // above: another schema's IMPORT rebinding the ID meanwhile must not leave this
        // fingerprint bound to it, or a registration of this schema would reuse an ID that names
        // another one. Either condition failing is no error: the side is there already, or the
        // row's own commit (conditioned on the ID's side) refuses the import.
        let mut by_fingerprint = fingerprint_binding_key(context, fingerprint);
        by_fingerprint.insert(attr::ID.into(), n(id.0));
        let items = vec![self.put_if_absent(by_fingerprint)?, self.id_names(context, id, fingerprint)?];
        match self.transact("TransactWriteItems(fingerprint binding)", items).await {
            Ok(()) | Err(AwsError::ConditionFailed { .. }) => Ok(()),
            Err(other) => Err(other),
        }
    }

    /// A check that `context`'s `ID#<id>/FP` names `fingerprint`.
    pub(crate) fn id_names(
        &self,
        context: &Context,
        id: SchemaId,
        fingerprint: &Fingerprint,
    ) -> Result<TransactWriteItem, AwsError> {
        self.condition_check("ConditionCheck(id binding)", id_binding_key(context, id), names_fingerprint(fingerprint))
    }

    /// A check that `context`'s binding of `fingerprint` is as read: absent (`None`) or naming `id`.
    pub(crate) fn fingerprint_side_is(
        &self,
        context: &Context,
        fingerprint: &Fingerprint,
        id: Option<SchemaId>,
    ) -> Result<TransactWriteItem, AwsError> {
        let check = self.check_of(fingerprint_binding_key(context, fingerprint));
        let check = match id {
            None => check.condition_expression("attribute_not_exists(#pk)").expression_attribute_names("#pk", PK),
            Some(id) => check
                .condition_expression("#id = :id")
                .expression_attribute_names("#id", attr::ID)
                .expression_attribute_values(":id", n(id.0)),
        };
        transact_item("ConditionCheck(fingerprint binding)", Part::Check(check))
    }

    /// A Put of `item`, conditioned on no item being at its key.
    pub(crate) fn put_if_absent(&self, item: Item) -> Result<TransactWriteItem, AwsError> {
        let put =
            self.put_of(item).condition_expression("attribute_not_exists(#pk)").expression_attribute_names("#pk", PK);
        transact_item("Put", Part::Put(put))
    }
}

/// The key of `fingerprint`'s binding to an ID of `context`: `FP#<hex>` / `ID[:<context>]`.
pub(crate) fn fingerprint_binding_key(context: &Context, fingerprint: &Fingerprint) -> Item {
    key(keys::fingerprint_pk(fingerprint), keys::fingerprint_binding_sk(context))
}

/// The key of `id`'s binding to a fingerprint in `context`: `ID#<id>[:<context>]` / `FP`.
pub(crate) fn id_binding_key(context: &Context, id: SchemaId) -> Item {
    key(keys::id_pk(context, id), keys::ID_BINDING_SK)
}

/// A transaction that began with [`AwsStore::allocation_items`] for `next` failed: `Corrupt` when
/// only the ID binding's condition failed (the ID is bound but above the counter), else as classified.
pub(crate) fn allocation_error(op: &'static str, next: i32, error: TransactionError) -> AwsError {
    let (error, reasons) = classify_transaction(op, error);
    let failed = |i: usize| reasons.get(i).is_some_and(|r| r.as_deref() == Some("ConditionalCheckFailed"));
    if failed(2) && !failed(0) && !failed(1) {
        return AwsError::Corrupt(format!("id {next} is bound but above the counter"));
    }
    error
}

/// The ID after `current` (1 when there is none yet): [`id_rules::next_id`].
fn successor(context: &Context, current: Option<i32>) -> Result<i32, AwsError> {
    id_rules::next_id(current.map(SchemaId)).map(|next| next.0).map_err(|_| exhausted(context))
}

/// No ID of `context` is left to allocate.
fn exhausted(context: &Context) -> AwsError {
    AwsError::Limit { op: "allocate_id", detail: registry_core::StoreError::ids_exhausted_detail(context) }
}

/// A request the SDK refused to build (a missing required field): a bug, reported as Other.
pub(crate) fn build_error(op: &'static str, error: impl std::fmt::Display) -> AwsError {
    AwsError::Service { op, detail: format!("invalid request: {error}") }
}
