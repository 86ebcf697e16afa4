//! Confluent's rules for schema IDs, decided once for every [`Store`](crate::Store).
//!
//! Each function here is a pure decision over what a store read inside its own atomic step (a
//! memory lock, an SQLite transaction, or reads a DynamoDB transaction is then conditioned on);
//! the store keeps only the mechanics: how to read, and how to commit the decision atomically.
//!
//! The rules, as Confluent Schema Registry keeps them:
//! - allocation ([`allocation`]): a fingerprint bound in the context keeps its ID; otherwise the
//!   next ID after the counter (1 in a context without one), so an ID is never handed out twice;
//! - a counter an IMPORT pushed to the top of the ID space (`i32::MAX`, before the registry refused
//!   IDs above [`SchemaId::MAX_IMPORTED`]) is first lowered to the greatest ID at or below
//!   `MAX_IMPORTED` bound or issued in the context, past the IDs issued right after it
//!   ([`lowering_floor`], [`counter_after_lowering`]); the IDs above stay bound and are never
//!   handed out;
//! - IMPORT ([`bind_decision`]): the same binding again is fine; an ID bound to another schema
//!   that no row carries any more (its schema hard-deleted: Confluent frees an ID with its last
//!   version) is rebound, the old schema's side unbound where it named the ID; a carried one is a
//!   conflict; the schema's own side is bound only if unbound (one schema may be imported under
//!   several IDs, and keeps the first); the counter is raised to the ID, never lowered
//!   ([`counter_after_binding`]);
//! - hard delete ([`unbinds_on_removal`]): removing the last row carrying an ID unbinds the schema
//!   (fingerprint → ID), not the ID (ID → fingerprint stays, and allocation never reissues it), so
//!   the same schema registered again gets a new ID.
//!
//! Which context's ID a guid or schema resolves to across contexts is decided once too, by
//! [`carried_in_contexts`](crate::carried_in_contexts).

use crate::model::SchemaId;
use registry_schema::Fingerprint;

/// No ID is left in a context: its counter cannot go past `i32::MAX` (each store answers it as
/// [`StoreError::ids_exhausted`](crate::StoreError::ids_exhausted)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IdsExhausted;

/// The ID an allocation takes after counter value `counter`: the next one, 1 in a context that
/// has none yet.
pub fn next_id(counter: Option<SchemaId>) -> Result<SchemaId, IdsExhausted> {
    match counter {
        None => Ok(SchemaId(1)),
        Some(SchemaId(max)) => max.checked_add(1).map(SchemaId).ok_or(IdsExhausted),
    }
}

/// What an allocation ([`Store::allocate_id_in`](crate::Store::allocate_id_in)) does, decided on
/// the fingerprint's binding and the counter as read in its atomic step.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Allocation {
    /// The fingerprint is bound in the context already: `Conflict`, the caller uses that ID.
    AlreadyBound(SchemaId),
    /// The counter is at the top: lower it first to [`counter_after_lowering`], conditioned on it
    /// still being at the top, then allocate after that (in the same step, or the caller's retry).
    LowerCounter,
    /// Take this ID: the counter becomes it (conditioned on the value read) and the fingerprint and
    /// the ID are bound to each other.
    Take(SchemaId),
}

/// [`Allocation`] for a fingerprint bound to `fingerprint_id` in a context whose counter is `counter`.
pub fn allocation(fingerprint_id: Option<SchemaId>, counter: Option<SchemaId>) -> Allocation {
    match (fingerprint_id, counter) {
        (Some(id), _) => Allocation::AlreadyBound(id),
        (None, Some(SchemaId(i32::MAX))) => Allocation::LowerCounter,
        (None, counter) => match next_id(counter) {
            Ok(next) => Allocation::Take(next),
            // Unreachable: only a counter at `i32::MAX` has no successor, and it is lowered first.
            Err(IdsExhausted) => Allocation::LowerCounter,
        },
    }
}

/// The counter's value after it is lowered from the top, from `floor`: [`lowering_floor`] of the
/// IDs bound or issued in the context (DynamoDB finds it in the ledger). `None`: no ID there, the
/// next allocation takes 1. [`IdsExhausted`] when that is the top itself (every ID is taken).
pub fn counter_after_lowering(floor: Option<SchemaId>) -> Result<Option<SchemaId>, IdsExhausted> {
    match floor {
        Some(SchemaId(i32::MAX)) => Err(IdsExhausted),
        floor => Ok(floor),
    }
}

/// Where a counter lowered from the top restarts, from the IDs bound or issued in a context in
/// ascending order (at least those from the greatest at or below the bound on): the greatest at or
/// below [`SchemaId::MAX_IMPORTED`], then past the IDs issued one after another right after it
/// (allocations made after an earlier lowering), so the next allocation meets no ID issued before.
/// The IDs above the run stay bound and are never handed out.
pub fn lowering_floor(ascending: impl IntoIterator<Item = SchemaId>) -> Option<SchemaId> {
    let mut floor: Option<SchemaId> = None;
    for id in ascending {
        let follows = floor.is_some_and(|floor| floor.0.checked_add(1) == Some(id.0));
        if id <= SchemaId::MAX_IMPORTED || follows {
            floor = Some(id);
        } else {
            break;
        }
    }
    floor
}

/// The counter after IMPORT bound `id` in a context whose counter is `counter`: raised to `id`,
/// never lowered, so later allocations are greater than every imported ID. (DynamoDB writes it
/// without reading: `SET max = id` conditioned on `max < id` or absent.)
pub fn counter_after_binding(counter: Option<SchemaId>, id: SchemaId) -> SchemaId {
    counter.map_or(id, |counter| counter.max(id))
}

/// What IMPORT's [`Store::bind_id_in`](crate::Store::bind_id_in) of `id` to a fingerprint read in
/// its atomic step.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct BindRead {
    /// The fingerprint `id` is bound to (ID → fingerprint).
    pub id_bound_to: Option<Fingerprint>,
    /// Whether a row of the context (live or soft-deleted, any subject) carries `id`. Decides only
    /// when `id` is bound to another fingerprint ([`needs_carriers`]); a store may skip the read
    /// otherwise.
    pub carried: bool,
    /// The ID the old fingerprint (`id_bound_to`, when another) is bound to (fingerprint → ID).
    /// Decides only a rebind.
    pub old_side: Option<SchemaId>,
    /// The ID the imported fingerprint is bound to (fingerprint → ID). A store that writes that
    /// side create-if-absent may leave it `None` (unread): the write's condition then decides it.
    pub fingerprint_side: Option<SchemaId>,
}

/// What IMPORT's bind does ([`bind_decision`]). Every variant but `Conflict` also raises the
/// counter ([`counter_after_binding`]) and lists a named context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BindDecision {
    /// `id` names the fingerprint already: that side stays (its schema may have been hard-deleted,
    /// which unbound the other side, and imported again).
    AlreadyBound {
        /// Bind fingerprint → `id` (that side is unbound).
        bind_reverse: bool,
    },
    /// `id` is unbound: bind ID → fingerprint.
    Bind {
        /// Bind fingerprint → `id` (that side is unbound).
        bind_reverse: bool,
    },
    /// `id` names `old`, which no row carries any more (its schema was hard-deleted): move ID →
    /// fingerprint from `old` in one atomic step conditioned on the carriers as read, so a crash
    /// leaves the old binding or the new one.
    Rebind {
        /// The fingerprint `id` named.
        old: Fingerprint,
        /// Unbind `old` → `id` (that side still named `id`).
        unbind_old: bool,
        /// Bind fingerprint → `id` (that side is unbound).
        bind_reverse: bool,
    },
    /// `id` names `bound`, another schema a row carries: `Conflict` (42205), nothing written.
    Conflict {
        /// The fingerprint `id` is bound to.
        bound: Fingerprint,
    },
}

impl BindDecision {
    /// Whether the fingerprint → ID side is bound by this decision.
    pub fn bind_reverse(&self) -> bool {
        match self {
            BindDecision::AlreadyBound { bind_reverse }
            | BindDecision::Bind { bind_reverse }
            | BindDecision::Rebind { bind_reverse, .. } => *bind_reverse,
            BindDecision::Conflict { .. } => false,
        }
    }
}

/// The fingerprint `id` is bound to when it is another than `fingerprint`: the case whose decision
/// needs the carriers ([`BindRead::carried`]) and the old fingerprint's side.
pub fn needs_carriers(id_bound_to: Option<Fingerprint>, fingerprint: &Fingerprint) -> Option<Fingerprint> {
    id_bound_to.filter(|bound| bound != fingerprint)
}

/// [`BindDecision`] for IMPORT binding `id` to `fingerprint`, from what was read.
pub fn bind_decision(id: SchemaId, fingerprint: &Fingerprint, read: &BindRead) -> BindDecision {
    let bind_reverse = read.fingerprint_side.is_none();
    match read.id_bound_to {
        None => BindDecision::Bind { bind_reverse },
        Some(bound) if bound == *fingerprint => BindDecision::AlreadyBound { bind_reverse },
        Some(bound) if read.carried => BindDecision::Conflict { bound },
        Some(old) => BindDecision::Rebind { old, unbind_old: read.old_side == Some(id), bind_reverse },
    }
}

/// Whether removing a row that carried `removed_id` under a fingerprint (a hard delete, or an
/// IMPORT replacing the row) unbinds that fingerprint: when its side (`fingerprint_side`, as read)
/// still names `removed_id` and no row of the context carries `removed_id` any more
/// (`still_carried`). The ID → fingerprint side always stays.
pub fn unbinds_on_removal(fingerprint_side: Option<SchemaId>, removed_id: SchemaId, still_carried: bool) -> bool {
    fingerprint_side == Some(removed_id) && !still_carried
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const TOP: SchemaId = SchemaId(i32::MAX);
    const OLD: Fingerprint = Fingerprint([1; 32]);
    const NEW: Fingerprint = Fingerprint([2; 32]);

    #[test]
    fn allocation_takes_the_id_after_the_counter_and_starts_at_one() {
        assert_eq!(allocation(None, None), Allocation::Take(SchemaId(1)));
        assert_eq!(allocation(None, Some(SchemaId(41))), Allocation::Take(SchemaId(42)));
        assert_eq!(allocation(None, Some(SchemaId(i32::MAX - 1))), Allocation::Take(TOP));
    }

    #[test]
    fn a_bound_fingerprint_keeps_its_id_whatever_the_counter() {
        assert_eq!(allocation(Some(SchemaId(7)), Some(SchemaId(41))), Allocation::AlreadyBound(SchemaId(7)));
        assert_eq!(allocation(Some(SchemaId(7)), Some(TOP)), Allocation::AlreadyBound(SchemaId(7)));
    }

    #[test]
    fn a_counter_at_the_top_is_lowered_before_any_allocation() {
        assert_eq!(allocation(None, Some(TOP)), Allocation::LowerCounter);
        assert_eq!(next_id(Some(TOP)), Err(IdsExhausted));
    }

    #[test]
    fn a_lowered_counter_restarts_after_the_greatest_id_at_or_below_the_import_bound() {
        let above = SchemaId(SchemaId::MAX_IMPORTED.0 + 1);
        let bound = [SchemaId(1), SchemaId(1000), SchemaId::MAX_IMPORTED, SchemaId(above.0 + 1), TOP];
        assert_eq!(lowering_floor(bound), Some(SchemaId::MAX_IMPORTED));
        let issued_after = [SchemaId(1000), SchemaId::MAX_IMPORTED, above, SchemaId(above.0 + 1), TOP];
        assert_eq!(lowering_floor(issued_after), Some(SchemaId(above.0 + 1)), "past the IDs issued right after");
        assert_eq!(lowering_floor([SchemaId(1), SchemaId(1000), SchemaId(1001), TOP]), Some(SchemaId(1001)));
        assert_eq!(lowering_floor([SchemaId(1), SchemaId(1000), TOP]), Some(SchemaId(1000)));
        assert_eq!(lowering_floor([above, TOP]), None);
        assert_eq!(lowering_floor([TOP]), None);
        let lowered = counter_after_lowering(lowering_floor([SchemaId(1), SchemaId(1000), TOP]));
        assert_eq!(lowered, Ok(Some(SchemaId(1000))));
        assert_eq!(allocation(None, Some(SchemaId(1000))), Allocation::Take(SchemaId(1001)));
        assert_eq!(counter_after_lowering(None), Ok(None), "nothing below: the next allocation takes 1");
        assert_eq!(counter_after_lowering(Some(TOP)), Err(IdsExhausted), "a run of issued IDs up to the top");
    }

    #[test]
    fn binding_raises_the_counter_and_never_lowers_it() {
        assert_eq!(counter_after_binding(None, SchemaId(5)), SchemaId(5));
        assert_eq!(counter_after_binding(Some(SchemaId(3)), SchemaId(5)), SchemaId(5));
        assert_eq!(counter_after_binding(Some(SchemaId(9)), SchemaId(5)), SchemaId(9));
    }

    #[test]
    fn binding_a_free_id_binds_the_schema_side_only_if_unbound() {
        let free = BindRead::default();
        assert_eq!(bind_decision(SchemaId(5), &NEW, &free), BindDecision::Bind { bind_reverse: true });
        let imported_before = BindRead { fingerprint_side: Some(SchemaId(3)), ..free };
        assert_eq!(
            bind_decision(SchemaId(5), &NEW, &imported_before),
            BindDecision::Bind { bind_reverse: false },
            "one schema imported under several IDs keeps the first"
        );
    }

    #[test]
    fn the_same_binding_again_succeeds_and_rebinds_a_schema_side_a_hard_delete_unbound() {
        let same = BindRead { id_bound_to: Some(NEW), fingerprint_side: Some(SchemaId(5)), ..BindRead::default() };
        assert_eq!(bind_decision(SchemaId(5), &NEW, &same), BindDecision::AlreadyBound { bind_reverse: false });
        let carried = BindRead { carried: true, ..same };
        assert_eq!(bind_decision(SchemaId(5), &NEW, &carried), BindDecision::AlreadyBound { bind_reverse: false });
        let deleted = BindRead { fingerprint_side: None, ..same };
        assert_eq!(bind_decision(SchemaId(5), &NEW, &deleted), BindDecision::AlreadyBound { bind_reverse: true });
    }

    #[test]
    fn an_id_another_schema_still_carries_is_a_conflict() {
        let read =
            BindRead { id_bound_to: Some(OLD), carried: true, old_side: Some(SchemaId(5)), ..BindRead::default() };
        assert_eq!(bind_decision(SchemaId(5), &NEW, &read), BindDecision::Conflict { bound: OLD });
        assert!(!bind_decision(SchemaId(5), &NEW, &read).bind_reverse());
    }

    #[test]
    fn an_id_no_row_carries_is_rebound_unbinding_the_old_side_where_it_named_the_id() {
        let freed = BindRead { id_bound_to: Some(OLD), old_side: Some(SchemaId(5)), ..BindRead::default() };
        assert_eq!(
            bind_decision(SchemaId(5), &NEW, &freed),
            BindDecision::Rebind { old: OLD, unbind_old: true, bind_reverse: true }
        );
        // The hard delete unbound the old side already, or it names an ID imported before.
        for old_side in [None, Some(SchemaId(3))] {
            let read = BindRead { old_side, fingerprint_side: Some(SchemaId(2)), ..freed };
            assert_eq!(
                bind_decision(SchemaId(5), &NEW, &read),
                BindDecision::Rebind { old: OLD, unbind_old: false, bind_reverse: false }
            );
        }
    }

    #[test]
    fn only_a_binding_to_another_schema_needs_the_carriers() {
        assert_eq!(needs_carriers(None, &NEW), None);
        assert_eq!(needs_carriers(Some(NEW), &NEW), None);
        assert_eq!(needs_carriers(Some(OLD), &NEW), Some(OLD));
    }

    /// One context's IDs kept only by these decisions, as a store keeps them.
    #[derive(Default)]
    struct Space {
        by_id: std::collections::BTreeMap<SchemaId, Fingerprint>,
        by_fingerprint: std::collections::HashMap<Fingerprint, SchemaId>,
        counter: Option<SchemaId>,
        carried: std::collections::BTreeSet<SchemaId>,
    }

    impl Space {
        fn allocate(&mut self, fingerprint: Fingerprint) -> Option<SchemaId> {
            let next = match allocation(self.by_fingerprint.get(&fingerprint).copied(), self.counter) {
                Allocation::AlreadyBound(_) => return None,
                Allocation::LowerCounter => {
                    let lowered = counter_after_lowering(lowering_floor(self.by_id.keys().copied()));
                    next_id(lowered.expect("room below the import bound")).expect("an ID")
                }
                Allocation::Take(next) => next,
            };
            assert!(!self.by_id.contains_key(&next), "allocation handed out {next}, bound before");
            self.counter = Some(next);
            self.by_id.insert(next, fingerprint);
            self.by_fingerprint.insert(fingerprint, next);
            Some(next)
        }

        fn bind(&mut self, id: SchemaId, fingerprint: Fingerprint) -> bool {
            let id_bound_to = self.by_id.get(&id).copied();
            let read = BindRead {
                id_bound_to,
                carried: self.carried.contains(&id),
                old_side: id_bound_to.and_then(|old| self.by_fingerprint.get(&old).copied()),
                fingerprint_side: self.by_fingerprint.get(&fingerprint).copied(),
            };
            let decision = bind_decision(id, &fingerprint, &read);
            match decision {
                BindDecision::Conflict { .. } => return false,
                BindDecision::AlreadyBound { .. } => {}
                BindDecision::Bind { .. } => drop(self.by_id.insert(id, fingerprint)),
                BindDecision::Rebind { old, unbind_old, .. } => {
                    if unbind_old {
                        self.by_fingerprint.remove(&old);
                    }
                    self.by_id.insert(id, fingerprint);
                }
            }
            if decision.bind_reverse() {
                self.by_fingerprint.insert(fingerprint, id);
            }
            self.counter = Some(counter_after_binding(self.counter, id));
            true
        }

        fn hard_delete(&mut self, id: SchemaId) {
            self.carried.remove(&id);
            let Some(fingerprint) = self.by_id.get(&id).copied() else { return };
            if unbinds_on_removal(self.by_fingerprint.get(&fingerprint).copied(), id, false) {
                self.by_fingerprint.remove(&fingerprint);
            }
        }
    }

    /// Allocations, imports (at the top too), registrations and hard deletes in a fixed
    /// pseudo-random order: allocation never hands out an ID bound before, an ID a row carries
    /// never changes its schema, and every allocated ID is above every imported one at or below
    /// the bound.
    #[test]
    fn the_rules_together_never_reissue_an_id_nor_move_a_carried_one() {
        let mut space = Space::default();
        let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut draw = |n: u64| {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
            (seed >> 33) % n
        };
        let explicit = [SchemaId(3), SchemaId(7), SchemaId(40), SchemaId(1000), SchemaId::MAX_IMPORTED, TOP];
        for _ in 0..5_000 {
            let fingerprint = Fingerprint([draw(12) as u8; 32]);
            let before = space.by_id.clone();
            match draw(5) {
                0 => {
                    if let Some(id) = space.allocate(fingerprint) {
                        let imported = before.keys().filter(|id| **id <= SchemaId::MAX_IMPORTED).max();
                        assert!(imported.is_none_or(|imported| id > *imported), "{id} below an imported ID");
                    }
                }
                1 => drop(space.bind(explicit[draw(explicit.len() as u64) as usize], fingerprint)),
                2 => {
                    if let Some(id) = space.by_fingerprint.get(&fingerprint).copied() {
                        space.carried.insert(id);
                    }
                }
                _ => {
                    let carried: Vec<SchemaId> = space.carried.iter().copied().collect();
                    if !carried.is_empty() {
                        space.hard_delete(carried[draw(carried.len() as u64) as usize]);
                    }
                }
            }
            for id in &space.carried {
                if let Some(was) = before.get(id) {
                    assert_eq!(space.by_id.get(id), Some(was), "carried {id} changed its schema");
                }
            }
        }
    }

    #[test]
    fn a_hard_delete_unbinds_the_schema_with_the_last_carrier_of_its_id() {
        assert!(unbinds_on_removal(Some(SchemaId(5)), SchemaId(5), false));
        assert!(!unbinds_on_removal(Some(SchemaId(5)), SchemaId(5), true), "another row keeps the ID");
        assert!(!unbinds_on_removal(Some(SchemaId(3)), SchemaId(5), false), "the schema's side names another ID");
        assert!(!unbinds_on_removal(None, SchemaId(5), false), "already unbound");
    }
}
