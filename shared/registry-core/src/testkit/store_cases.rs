//! Conformance cases for each [`Store`] method, one pub fn per contract.

use super::StoreTestExt;
use super::{
    assign, hard_delete, record_body, row, row_referencing, soft_delete, stored_body, unique_name, unique_subject,
};
use crate::model::{
    ConfigRecord, Context, DeletedFilter, Guid, Mode, SchemaBody, SchemaId, Scope, Subject, UnassignedRow, Version,
    VersionRow,
};
use crate::store::{
    ConfiguredPage, HardDeletion, IdRowsPage, Preconditions, SettingChange, SettingWrite, Store, StoreError,
    SubjectsPage, VersionsPage,
};
use registry_schema::{CompatibilityLevel, Fingerprint, SchemaReference};

pub(super) async fn fresh_id(store: &dyn Store, tag: &str) -> (SchemaId, Fingerprint) {
    let (fingerprint, _) = stored_body(store, tag).await;
    let id = store.allocate_id(&fingerprint).await.expect("allocate_id on a fresh fingerprint");
    (id, fingerprint)
}

fn is_conflict<T: std::fmt::Debug>(result: &Result<T, StoreError>) -> bool {
    matches!(result, Err(StoreError::Conflict(_)))
}

/// `put_body` stores once and is idempotent (a second put under a fingerprint writes nothing);
/// `get_body` returns what was stored, every part of it, and `None` when absent.
pub async fn put_body_is_idempotent(store: &dyn Store) {
    let tag = unique_name("put-body");
    let body = record_body(&tag);
    let fingerprint = body.fingerprint();
    assert_eq!(store.get_body(&fingerprint).await.expect("get_body"), None, "put_body: absent before put");
    store.put_body(&fingerprint, &body).await.expect("put_body");
    store.put_body(&fingerprint, &body).await.expect("put_body: second put of the same fingerprint succeeds");
    let other = record_body(&unique_name("put-body-other"));
    store.put_body(&fingerprint, &other).await.expect("put_body: a put under a stored fingerprint succeeds");
    assert_eq!(store.get_body(&fingerprint).await.expect("get_body"), Some(body), "put_body: the first body stays");

    let full = SchemaBody {
        references: vec![
            SchemaReference { name: "a.avsc".into(), subject: "a".into(), version: 1 },
            SchemaReference { name: "b.avsc".into(), subject: "b".into(), version: 3 },
        ],
        metadata: Some(serde_json::json!({"properties": {"owner": "team-a"}})),
        rule_set: Some(serde_json::json!({"domainRules": []})),
        ..record_body(&unique_name("put-body-full"))
    };
    store.put_body(&full.fingerprint(), &full).await.expect("put_body");
    let read = store.get_body(&full.fingerprint()).await.expect("get_body");
    assert_eq!(read, Some(full), "put_body: references, metadata and rule set round-trip");
}

/// `allocate_id` returns increasing IDs above every earlier one, binds both directions, and
/// answers `Conflict` for a fingerprint that already has an ID.
pub async fn allocate_id_is_unique_and_binds_both_ways(store: &dyn Store) {
    let before = store.max_id().await.expect("max_id");
    let (first, fp1) = fresh_id(store, &unique_name("alloc-1")).await;
    let (second, fp2) = fresh_id(store, &unique_name("alloc-2")).await;
    assert!(Some(first) > before, "allocate_id: {first} must exceed the previous max {before:?}");
    assert!(second > first, "allocate_id: {second} must exceed {first}");
    assert!(first.0 >= 1, "allocate_id: ids are positive");
    if before.is_none() {
        assert_eq!(first, SchemaId(1), "allocate_id: the first id of an empty store is 1");
    }
    let unbound_id = SchemaId(i32::MAX);
    assert_eq!(store.fingerprint_for_id(unbound_id).await.expect("fingerprint_for_id"), None, "unbound id");
    assert_eq!(store.id_for_fingerprint(&fp1).await.expect("id_for_fingerprint"), Some(first));
    assert_eq!(store.id_for_fingerprint(&fp2).await.expect("id_for_fingerprint"), Some(second));
    assert_eq!(store.fingerprint_for_id(first).await.expect("fingerprint_for_id"), Some(fp1));
    assert_eq!(store.fingerprint_for_id(second).await.expect("fingerprint_for_id"), Some(fp2));
    assert!(store.max_id().await.expect("max_id") >= Some(second), "allocate_id raises max_id");
    let again = store.allocate_id(&fp1).await;
    assert!(is_conflict(&again), "allocate_id on a bound fingerprint must be Conflict, got {again:?}");
    assert_eq!(store.id_for_fingerprint(&fp1).await.expect("id_for_fingerprint"), Some(first), "binding unchanged");
    let (unbound, _) = stored_body(store, &unique_name("alloc-unbound")).await;
    assert_eq!(store.id_for_fingerprint(&unbound).await.expect("id_for_fingerprint"), None);
}

/// `bind_id`: idempotent for the same fingerprint, `Conflict` for another while a row carries the
/// ID, raises the counter, and binds fingerprint → id only the first time (one schema, several
/// imported IDs).
pub async fn bind_id_rules_and_counter(store: &dyn Store) {
    let base = store.max_id().await.expect("max_id").map_or(0, |id| id.0);
    let explicit = SchemaId(base + 1000);
    let (fp_a, _) = stored_body(store, &unique_name("bind-a")).await;
    let (fp_b, _) = stored_body(store, &unique_name("bind-b")).await;
    store.bind_id(explicit, &fp_a).await.expect("bind_id on a free id");
    store.bind_id(explicit, &fp_a).await.expect("bind_id again with the same fingerprint succeeds");
    let holder = unique_subject("bind-holder");
    store.add_version(&row(&holder, 1, explicit, fp_a)).await.expect("create_version");
    let clash = store.bind_id(explicit, &fp_b).await;
    assert!(is_conflict(&clash), "bind_id of a carried id to another fingerprint must be Conflict, got {clash:?}");
    assert_eq!(store.fingerprint_for_id(explicit).await.expect("fingerprint_for_id"), Some(fp_a));
    assert_eq!(store.id_for_fingerprint(&fp_a).await.expect("id_for_fingerprint"), Some(explicit));
    assert!(store.max_id().await.expect("max_id") >= Some(explicit), "bind_id raises max_id");

    let second = SchemaId(explicit.0 + 1);
    store.bind_id(second, &fp_a).await.expect("bind_id: a schema may be imported under a second id");
    assert_eq!(store.fingerprint_for_id(second).await.expect("fingerprint_for_id"), Some(fp_a));
    assert_eq!(
        store.id_for_fingerprint(&fp_a).await.expect("id_for_fingerprint"),
        Some(explicit),
        "bind_id keeps the first (lowest) id for the fingerprint"
    );

    let max = store.max_id().await.expect("max_id");
    let lower = SchemaId(explicit.0 - 1);
    store.bind_id(lower, &fp_b).await.expect("bind_id of a free id below the counter");
    assert_eq!(store.fingerprint_for_id(lower).await.expect("fingerprint_for_id"), Some(fp_b));
    assert_eq!(store.max_id().await.expect("max_id"), max, "bind_id below the counter never lowers it");

    let (next, _) = fresh_id(store, &unique_name("bind-next")).await;
    assert!(next > second, "allocate_id after bind_id({second}) must exceed it, got {next}");
}

/// `bind_id` of an ID bound to another fingerprint: `Conflict` while any row of the context
/// carries it (live or soft-deleted, in any subject); once the last one is hard-deleted it is
/// rebound (IMPORT restoring a wiped registry), the old schema's side unbound, the new one's
/// bound, the counter unchanged; rows commit under [`Preconditions::id_binding`] only while it
/// names their schema; another context's rows with the same ID number do not keep it.
pub async fn bind_id_rebinds_an_id_no_row_carries(store: &dyn Store) {
    let (id, old) = fresh_id(store, &unique_name("rebind-old")).await;
    let (new, _) = stored_body(store, &unique_name("rebind-new")).await;
    let (first, second) = (unique_subject("rebind-a"), unique_subject("rebind-b"));
    for subject in [&first, &second] {
        store.add_version(&row(subject, 1, id, old)).await.expect("create_version");
    }
    let elsewhere = Context::parse(&format!(".{}", unique_name("rebind-ctx"))).expect("context");
    let (other, _) = stored_body(store, &unique_name("rebind-other")).await;
    store.bind_id_in(&elsewhere, id, &other).await.expect("bind_id_in another context");
    let qualified =
        Subject::new(format!("{}{}", elsewhere.subject_prefix(), unique_name("rebind-q"))).expect("subject");
    store.add_version(&row(&qualified, 1, id, other)).await.expect("create_version in another context");

    let live = store.bind_id(id, &new).await;
    assert!(is_conflict(&live), "rebind of an id live rows carry must be Conflict, got {live:?}");
    soft_delete(store, &first, &[Version(1)]).await.expect("soft delete");
    hard_delete(store, &second, &[Version(1)]).await.expect("hard delete");
    let soft = store.bind_id(id, &new).await;
    assert!(is_conflict(&soft), "rebind of an id a soft-deleted row carries must be Conflict, got {soft:?}");
    assert_eq!(store.fingerprint_for_id(id).await.expect("fingerprint_for_id"), Some(old), "a refusal changes nothing");

    hard_delete(store, &first, &[Version(1)]).await.expect("hard delete of the last carrier");
    let max = store.max_id().await.expect("max_id");
    store.bind_id(id, &new).await.expect("rebind of an id no row carries");
    assert_eq!(store.fingerprint_for_id(id).await.expect("fingerprint_for_id"), Some(new), "rebound");
    assert_eq!(store.id_for_fingerprint(&new).await.expect("id_for_fingerprint"), Some(id));
    assert_eq!(store.id_for_fingerprint(&old).await.expect("id_for_fingerprint"), None, "the old schema stays unbound");
    assert_eq!(store.max_id().await.expect("max_id"), max, "a rebind leaves the counter");
    assert_eq!(store.fingerprint_for_id_in(&elsewhere, id).await.expect("fingerprint_for_id_in"), Some(other));
    store.bind_id(id, &new).await.expect("rebind again with the same fingerprint succeeds");

    // A row that read the old binding cannot commit under the rebound ID; one that read the new can.
    let importer = unique_subject("rebind-import");
    let stale = Preconditions { id_binding: Some((id, old)), ..Preconditions::default() };
    let refused = store.create_version(&row(&importer, 1, id, old), &stale, &crate::CommitHints::default()).await;
    assert!(is_conflict(&refused), "a row under a rebound id's old binding must be Conflict, got {refused:?}");
    let current = Preconditions { id_binding: Some((id, new)), ..Preconditions::default() };
    store
        .create_version(&row(&importer, 1, id, new), &current, &crate::CommitHints::default())
        .await
        .expect("create_version under the new binding");
    let back = store.bind_id(id, &old).await;
    assert!(is_conflict(&back), "the rebound id is carried now: Conflict, got {back:?}");

    // A rebind whose row never committed (a crash) leaves an id no row carries: free again, and
    // the schema bound by that rebind is unbound when another takes it.
    let (id2, old2) = fresh_id(store, &unique_name("rebind-crash-old")).await;
    let (abandoned, _) = stored_body(store, &unique_name("rebind-crash-a")).await;
    let (winner, _) = stored_body(store, &unique_name("rebind-crash-b")).await;
    store.bind_id(id2, &abandoned).await.expect("rebind of an id never carried");
    assert_eq!(store.id_for_fingerprint(&old2).await.expect("id_for_fingerprint"), None);
    store.bind_id(id2, &winner).await.expect("rebind of an id its last rebind left uncarried");
    assert_eq!(store.id_for_fingerprint(&abandoned).await.expect("id_for_fingerprint"), None);
    assert_eq!(store.fingerprint_for_id(id2).await.expect("fingerprint_for_id"), Some(winner));

    // The hard-deleted schema imported again under its own ID gets that ID back on both sides.
    let (id3, restored) = fresh_id(store, &unique_name("rebind-restore")).await;
    let gone = unique_subject("rebind-gone");
    store.add_version(&row(&gone, 1, id3, restored)).await.expect("create_version");
    hard_delete(store, &gone, &[Version(1)]).await.expect("hard delete");
    assert_eq!(store.id_for_fingerprint(&restored).await.expect("id_for_fingerprint"), None);
    store.bind_id(id3, &restored).await.expect("import of the schema under its freed id");
    assert_eq!(store.id_for_fingerprint(&restored).await.expect("id_for_fingerprint"), Some(id3), "bound again");
}

/// `hard_delete_versions` unbinds fingerprint → id with the last row carrying the id (not while
/// another subject's row keeps it), keeps id → fingerprint, and a later allocation for the
/// fingerprint takes a new, greater id.
pub async fn hard_delete_unbinds_the_schema_not_the_id(store: &dyn Store) {
    let (id, fingerprint) = fresh_id(store, &unique_name("unbind")).await;
    let (first, second) = (unique_subject("unbind-a"), unique_subject("unbind-b"));
    for subject in [&first, &second] {
        store.add_version(&row(subject, 1, id, fingerprint)).await.expect("create_version");
    }
    hard_delete(store, &first, &[Version(1)]).await.expect("hard delete, id kept elsewhere");
    assert_eq!(store.id_for_fingerprint(&fingerprint).await.expect("id_for_fingerprint"), Some(id), "still carried");
    hard_delete(store, &second, &[Version(1)]).await.expect("hard delete of the last carrier");
    assert_eq!(store.id_for_fingerprint(&fingerprint).await.expect("id_for_fingerprint"), None, "unbound");
    assert_eq!(store.fingerprint_for_id(id).await.expect("fingerprint_for_id"), Some(fingerprint), "id keeps its body");
    let again = store.allocate_id(&fingerprint).await.expect("allocate_id after unbind");
    assert!(again > id, "hard delete: the schema gets a new id ({again}), never {id} again");
    assert_eq!(store.fingerprint_for_id(id).await.expect("fingerprint_for_id"), Some(fingerprint));
}

/// `bind_guid` is create-if-absent: the first binding wins, rebinding the same fingerprint
/// succeeds, another fingerprint is `Conflict` and changes nothing; `fingerprint_for_guid` reads
/// it back, `None` while unbound; unbinding the fingerprint's ID leaves the guid bound.
pub async fn bind_guid_first_binding_wins(store: &dyn Store) {
    let (fp_a, body_a) = stored_body(store, &unique_name("guid-a")).await;
    let (fp_b, body_b) = stored_body(store, &unique_name("guid-b")).await;
    let (guid_a, guid_b) = (Guid::of(&body_a), Guid::of(&body_b));
    assert_ne!(guid_a, guid_b, "distinct bodies have distinct guids");
    assert_eq!(store.fingerprint_for_guid(&guid_a).await.expect("fingerprint_for_guid"), None, "unbound at first");
    store.bind_guid(&guid_a, &fp_a).await.expect("bind_guid on a free guid");
    store.bind_guid(&guid_a, &fp_a).await.expect("bind_guid again with the same fingerprint succeeds");
    assert_eq!(store.fingerprint_for_guid(&guid_a).await.expect("fingerprint_for_guid"), Some(fp_a));
    let clash = store.bind_guid(&guid_a, &fp_b).await;
    assert!(is_conflict(&clash), "bind_guid of a bound guid to another fingerprint must be Conflict, got {clash:?}");
    assert_eq!(
        store.fingerprint_for_guid(&guid_a).await.expect("fingerprint_for_guid"),
        Some(fp_a),
        "bind_guid: the first binding wins"
    );
    assert_eq!(store.fingerprint_for_guid(&guid_b).await.expect("fingerprint_for_guid"), None, "other guids unbound");

    let id = store.allocate_id(&fp_a).await.expect("allocate_id");
    let subject = unique_subject("guid-unbind");
    store.add_version(&row(&subject, 1, id, fp_a)).await.expect("create_version");
    hard_delete(store, &subject, &[Version(1)]).await.expect("hard delete unbinds fp_a");
    assert_eq!(
        store.fingerprint_for_guid(&guid_a).await.expect("fingerprint_for_guid"),
        Some(fp_a),
        "a guid stays bound after its fingerprint loses its id"
    );
}

/// `create_version_assigning_id` allocates an ID for an unbound fingerprint and binds the guid with
/// it, reuses the bound ID after; `carried_id_for_guid` answers (fingerprint, ID) while a row
/// carries the ID, `None` once the last carrier is hard-deleted (`hard_delete_versions` or
/// `delete_version`), and the new ID after the schema is registered again. A guid bound to another
/// fingerprint keeps its binding.
pub async fn guid_resolves_to_the_carried_id(store: &dyn Store) {
    let (fingerprint, body) = stored_body(store, &unique_name("guid-id")).await;
    let guid = Guid::of(&body);
    let new_row = |subject: &Subject, version: i32, fingerprint: Fingerprint| UnassignedRow {
        subject: subject.clone(),
        version: Version(version),
        fingerprint,
        references: vec![],
        registered_at_ms: 1_700_000_000_000,
    };
    let (first, second) = (unique_subject("guid-id-a"), unique_subject("guid-id-b"));
    assert_eq!(carried(store, &guid).await, None, "an unbound guid");
    let assigned = assign(store, &new_row(&first, 1, fingerprint), &guid).await;
    let (id, allocated) = assigned.expect("create_version_assigning_id of a new schema");
    assert!(allocated, "an unbound fingerprint gets a new id");
    assert_eq!(store.fingerprint_for_guid(&guid).await.expect("fingerprint_for_guid"), Some(fingerprint));
    assert_eq!(store.id_for_fingerprint(&fingerprint).await.expect("id_for_fingerprint"), Some(id));
    assert_eq!(store.fingerprint_for_id(id).await.expect("fingerprint_for_id"), Some(fingerprint));
    assert_eq!(carried(store, &guid).await, Some((fingerprint, id)));
    let assigned = assign(store, &new_row(&second, 1, fingerprint), &guid).await;
    assert_eq!(assigned.expect("create_version_assigning_id of a bound schema"), (id, false), "the bound id is reused");
    let clash = assign(store, &new_row(&second, 1, fingerprint), &guid).await;
    assert!(is_conflict(&clash), "a taken version is Conflict, got {clash:?}");

    hard_delete(store, &first, &[Version(1)]).await.expect("hard delete, id kept elsewhere");
    assert_eq!(carried(store, &guid).await, Some((fingerprint, id)), "still carried by the other subject");
    hard_delete(store, &second, &[Version(1)]).await.expect("hard delete of the last carrier");
    assert_eq!(carried(store, &guid).await, None, "no row carries the id");
    let assigned = assign(store, &new_row(&first, 2, fingerprint), &guid).await;
    let (again, allocated) = assigned.expect("create_version_assigning_id after the hard delete");
    assert!(allocated && again > id, "registered again: a new id ({again}), never {id}");
    assert_eq!(carried(store, &guid).await, Some((fingerprint, again)));
    store.delete_version(&first, Version(2)).await.expect("delete_version of the last carrier");
    assert_eq!(carried(store, &guid).await, None, "no row carries the id after delete_version");

    let (other, _) = stored_body(store, &unique_name("guid-id-other")).await;
    let third = unique_subject("guid-id-c");
    let assigned = assign(store, &new_row(&third, 1, other), &guid).await;
    let (other_id, _) = assigned.expect("create_version_assigning_id of another schema with a bound guid");
    assert_ne!(other_id, again);
    assert_eq!(store.fingerprint_for_guid(&guid).await.expect("fingerprint_for_guid"), Some(fingerprint));
    assert_eq!(carried(store, &guid).await, None, "the guid keeps its first fingerprint, which no row carries");
}

async fn carried(store: &dyn Store, guid: &Guid) -> Option<(Fingerprint, SchemaId)> {
    let found = store.carried_id_for_guid(guid).await.expect("carried_id_for_guid")?;
    assert_eq!(found.context, Context::DEFAULT, "a schema of the default context is found there");
    Some((found.fingerprint, found.id))
}

/// `carried_id_for_guid` finds a schema held only in named contexts under the ID of the first
/// (by name) that carries it, and the default context's ID once the default context holds it
/// too; a named context's last carrier hard-deleted, the next one's.
pub async fn guid_resolves_in_named_contexts(store: &dyn Store) {
    let (fingerprint, body) = stored_body(store, &unique_name("guid-ctx")).await;
    let guid = Guid::of(&body);
    let name = unique_name("guid-ctx");
    let (first, second) = (
        Context::parse(&format!("{name}-a")).expect("a context name"),
        Context::parse(&format!("{name}-b")).expect("a context name"),
    );
    let in_context = |context: &Context, version: i32| UnassignedRow {
        subject: Subject::new(context.qualify("orders")).expect("a qualified subject"),
        version: Version(version),
        fingerprint,
        references: vec![],
        registered_at_ms: 1_700_000_000_000,
    };
    let found = |carried: Option<crate::store::GuidCarried>| carried.map(|c| (c.context, c.id));
    let (second_id, _) = assign(store, &in_context(&second, 1), &guid).await.expect("register in b");
    let carried = store.carried_id_for_guid(&guid).await.expect("carried_id_for_guid");
    assert_eq!(carried.as_ref().map(|c| c.fingerprint), Some(fingerprint));
    assert_eq!(found(carried), Some((second.clone(), second_id)), "only b holds it");
    let (first_id, _) = assign(store, &in_context(&first, 1), &guid).await.expect("register in a");
    let carried = store.carried_id_for_guid(&guid).await.expect("carried_id_for_guid");
    assert_eq!(found(carried), Some((first.clone(), first_id)), "a comes first");
    let subject = in_context(&first, 1).subject;
    hard_delete(store, &subject, &[Version(1)]).await.expect("hard delete a's carrier");
    let carried = store.carried_id_for_guid(&guid).await.expect("carried_id_for_guid");
    assert_eq!(found(carried), Some((second.clone(), second_id)), "then b again");
    let default_subject = unique_subject("guid-ctx-default");
    let default_row = UnassignedRow { subject: default_subject, ..in_context(&second, 1) };
    let (default_id, _) = assign(store, &default_row, &guid).await.expect("register in the default context");
    let carried = store.carried_id_for_guid(&guid).await.expect("carried_id_for_guid");
    assert_eq!(found(carried), Some((Context::DEFAULT, default_id)), "the default context first");
}

/// `create_version` creates if absent, `Conflict` otherwise; `versions` lists ascending.
pub async fn create_version_is_create_if_absent(store: &dyn Store) {
    let subject = unique_subject("create");
    let (id, fp) = fresh_id(store, &unique_name("create")).await;
    assert!(store.versions(&subject).await.expect("versions").is_empty(), "new subject has no rows");
    for version in [3, 1, 2] {
        store.add_version(&row(&subject, version, id, fp)).await.expect("create_version");
    }
    let (other_id, other_fp) = fresh_id(store, &unique_name("create-other")).await;
    let clash = store.add_version(&row(&subject, 2, other_id, other_fp)).await;
    assert!(is_conflict(&clash), "create_version on an existing version must be Conflict, got {clash:?}");
    let rows = store.versions(&subject).await.expect("versions");
    let numbers: Vec<i32> = rows.iter().map(|r| r.version.0).collect();
    assert_eq!(numbers, vec![1, 2, 3], "versions ascending");
    assert!(rows.iter().all(|r| r.id == id && r.fingerprint == fp), "the losing write changed nothing");
    let fetched = store.get_version(&subject, Version(2)).await.expect("get_version");
    assert_eq!(fetched, Some(row(&subject, 2, id, fp)), "get_version round trip");
    assert_eq!(store.get_version(&subject, Version(4)).await.expect("get_version"), None);
}

/// `versions_page` pages one subject's rows ascending (soft-deleted ones included), strictly after
/// the cursor, never more than asked, and never into another subject.
pub async fn versions_page_pages_one_subject(store: &dyn Store) {
    let subject = unique_subject("page");
    let neighbour = Subject::new(format!("{subject}-next")).expect("subject");
    let (id, fp) = fresh_id(store, &unique_name("page")).await;
    for version in [1, 2, 3, 5, 8] {
        store.add_version(&row(&subject, version, id, fp)).await.expect("create_version");
    }
    store.add_version(&row(&neighbour, 4, id, fp)).await.expect("create_version");
    store.set_version_deleted(&subject, Version(3), true).await.expect("soft delete");
    let numbers = |rows: Vec<crate::model::VersionRow>| rows.iter().map(|r| r.version.0).collect::<Vec<i32>>();
    let page = |after, limit| store.versions_page(VersionsPage { subject: &subject, after, limit });
    assert_eq!(numbers(page(None, 2).await.expect("page")), [1, 2]);
    let third = page(Some(Version(2)), 2).await.expect("page");
    assert!(third[0].deleted, "soft-deleted rows are listed with their flag");
    assert_eq!(numbers(third), [3, 5]);
    assert_eq!(numbers(page(Some(Version(5)), 10).await.expect("page")), [8]);
    assert!(page(Some(Version(8)), 10).await.expect("page").is_empty());
    assert!(page(Some(Version(i32::MAX)), 10).await.expect("page").is_empty());
    assert!(page(None, 0).await.expect("page").is_empty());
    assert_eq!(numbers(page(None, 100).await.expect("page")), [1, 2, 3, 5, 8], "no rows of another subject");
    let missing = unique_subject("page-none");
    assert!(
        store.versions_page(VersionsPage { subject: &missing, after: None, limit: 10 }).await.expect("page").is_empty()
    );
}

/// `set_version_deleted` flips only from the other state; `Conflict` when missing or already there.
pub async fn set_version_deleted_rules(store: &dyn Store) {
    let subject = unique_subject("soft");
    let (id, fp) = fresh_id(store, &unique_name("soft")).await;
    store.add_version(&row(&subject, 1, id, fp)).await.expect("create_version");
    store.set_version_deleted(&subject, Version(1), true).await.expect("soft delete a live row");
    let row1 = store.get_version(&subject, Version(1)).await.expect("get_version").expect("row still there");
    assert!(row1.deleted, "soft delete sets deleted");
    let twice = store.set_version_deleted(&subject, Version(1), true).await;
    assert!(is_conflict(&twice), "soft delete of a deleted row must be Conflict, got {twice:?}");
    let listed =
        |filter| store.list_subjects(SubjectsPage { prefix: subject.as_str(), filter, after: None, limit: 10 });
    assert!(listed(DeletedFilter::LiveOnly).await.expect("list_subjects").is_empty(), "no live row: not live");
    assert_eq!(listed(DeletedFilter::DeletedOnly).await.expect("list_subjects"), std::slice::from_ref(&subject));
    store.set_version_deleted(&subject, Version(1), false).await.expect("undelete a deleted row");
    let live_again = listed(DeletedFilter::LiveOnly).await.expect("list_subjects");
    assert_eq!(live_again, std::slice::from_ref(&subject), "live again");
    let live = store.set_version_deleted(&subject, Version(1), false).await;
    assert!(is_conflict(&live), "undelete of a live row must be Conflict, got {live:?}");
    let missing = store.set_version_deleted(&subject, Version(9), true).await;
    assert!(is_conflict(&missing), "set_version_deleted on a missing row must be Conflict, got {missing:?}");
}

/// `delete_version` removes the row from every index and succeeds when it is already gone.
pub async fn delete_version_is_idempotent(store: &dyn Store) {
    let subject = unique_subject("hard");
    let (id, fp) = fresh_id(store, &unique_name("hard")).await;
    store.add_version(&row(&subject, 1, id, fp)).await.expect("create_version");
    store.add_version(&row(&subject, 2, id, fp)).await.expect("create_version");
    store.delete_version(&subject, Version(1)).await.expect("delete_version");
    store.delete_version(&subject, Version(1)).await.expect("delete_version of a missing row succeeds");
    assert_eq!(store.get_version(&subject, Version(1)).await.expect("get_version"), None);
    let left: Vec<i32> = store.versions(&subject).await.expect("versions").iter().map(|r| r.version.0).collect();
    assert_eq!(left, vec![2]);
    let with_id = store.rows_with_id(id).await.expect("rows_with_id");
    assert_eq!(with_id.iter().map(|r| r.version.0).collect::<Vec<_>>(), vec![2], "hard delete leaves rows_with_id");
    store.set_version_deleted(&subject, Version(2), true).await.expect("soft delete");
    store.delete_version(&subject, Version(2)).await.expect("delete_version of a soft-deleted row");
    let page = SubjectsPage { prefix: subject.as_str(), filter: DeletedFilter::IncludeDeleted, after: None, limit: 10 };
    let listed = store.list_subjects(page).await;
    assert!(listed.expect("list_subjects").is_empty(), "a subject without rows is not listed");
    assert_eq!(store.fingerprint_for_id(id).await.expect("fingerprint_for_id"), Some(fp), "the id stays bound");
    store.add_version(&row(&subject, 1, id, fp)).await.expect("a hard-deleted version number can be created again");
}

/// `rows_with_id`: every row carrying the id, live or soft-deleted, sorted by (subject, version).
pub async fn rows_with_id_index(store: &dyn Store) {
    let prefix = unique_name("by-id");
    let s1 = Subject::new(format!("{prefix}-b")).expect("subject");
    let s2 = Subject::new(format!("{prefix}-a")).expect("subject");
    let (id, fp) = fresh_id(store, &prefix).await;
    let (other, other_fp) = fresh_id(store, &unique_name("by-id-other")).await;
    store.add_version(&row(&s1, 2, id, fp)).await.expect("create_version");
    store.add_version(&row(&s1, 1, other, other_fp)).await.expect("create_version");
    store.add_version(&row(&s2, 3, id, fp)).await.expect("create_version");
    store.add_version(&row(&s2, 1, id, fp)).await.expect("create_version");
    store.set_version_deleted(&s2, Version(1), true).await.expect("soft delete");
    let rows = store.rows_with_id(id).await.expect("rows_with_id");
    let keys: Vec<(String, i32)> = rows.iter().map(|r| (r.subject.to_string(), r.version.0)).collect();
    assert_eq!(
        keys,
        vec![(s2.to_string(), 1), (s2.to_string(), 3), (s1.to_string(), 2)],
        "rows_with_id sorted by (subject, version), soft-deleted included"
    );
    assert!(rows[0].deleted, "rows_with_id reports the deleted flag");
    let (unused, _) = fresh_id(store, &unique_name("by-id-unused")).await;
    assert!(store.rows_with_id(unused).await.expect("rows_with_id").is_empty());

    // `rows_with_id_page`: pages in (subject, version) order, bytewise, whatever the subject's
    // characters (" " and "#" sort between "-a" and "-b"; "-a" is a prefix of the others).
    for (suffix, version) in [("-a#", 1), ("-a b", 2)] {
        let subject = Subject::new(format!("{prefix}{suffix}")).expect("subject");
        store.add_version(&row(&subject, version, id, fp)).await.expect("create_version");
    }
    let mut expected = store.rows_with_id(id).await.expect("rows_with_id");
    expected.sort_by(|a, b| (&a.subject, a.version).cmp(&(&b.subject, b.version)));
    assert_eq!(expected.len(), 5);
    for size in [1, 2, 5, 7] {
        assert_eq!(rows_with_id_by_pages(store, id, "", size).await, expected, "pages of {size}");
    }
    let page = IdRowsPage { id: unused, prefix: "", after: None, limit: 5 };
    assert!(store.rows_with_id_page(page).await.expect("rows_with_id_page").is_empty());

    // With a subject prefix: only that run of subjects, paged the same way ("-a" starts three of
    // the five rows' subjects, "-a#" one; "-b" sorts after all of them).
    let run = |prefix: String| expected.iter().filter(move |r| r.subject.as_str().starts_with(&prefix)).cloned();
    for (suffix, count) in [("-a", 4), ("-a#", 1), ("-b", 1), ("-c", 0)] {
        let wanted: Vec<VersionRow> = run(format!("{prefix}{suffix}")).collect();
        assert_eq!(wanted.len(), count, "{suffix}");
        let run_prefix = format!("{prefix}{suffix}");
        for size in [1, 2, 5] {
            let paged = rows_with_id_by_pages(store, id, &run_prefix, size).await;
            assert_eq!(paged, wanted, "prefix {suffix}, pages of {size}");
        }
    }
    let behind = (&s1, Version(2));
    let run_prefix = format!("{prefix}-a");
    let page = IdRowsPage { id, prefix: &run_prefix, after: Some(behind), limit: 5 };
    let page = store.rows_with_id_page(page).await.expect("rows_with_id_page");
    assert!(page.is_empty(), "a cursor past the run");
}

/// Every row carrying `id` whose subject starts with `prefix`, read with `rows_with_id_page` from
/// the start, `size` rows a page, each page's last row the next page's cursor; asserts no page
/// holds more than `size` rows.
async fn rows_with_id_by_pages(store: &dyn Store, id: SchemaId, prefix: &str, size: usize) -> Vec<VersionRow> {
    let mut paged: Vec<VersionRow> = Vec::new();
    loop {
        let after = paged.last().map(|r| (&r.subject, r.version));
        let page =
            store.rows_with_id_page(IdRowsPage { id, prefix, after, limit: size }).await.expect("rows_with_id_page");
        assert!(page.len() <= size, "page of {} rows, asked {size}", page.len());
        let done = page.len() < size;
        paged.extend(page);
        if done {
            return paged;
        }
    }
}

/// `referrers`: rows whose references include (subject, version), sorted by ID.
pub async fn referrers_index(store: &dyn Store) {
    let target = unique_subject("ref-target");
    let (target_id, target_fp) = fresh_id(store, &unique_name("ref-target")).await;
    store.add_version(&row(&target, 1, target_id, target_fp)).await.expect("create_version");
    store.add_version(&row(&target, 2, target_id, target_fp)).await.expect("create_version");
    let (low, low_fp) = fresh_id(store, &unique_name("ref-low")).await;
    let (high, high_fp) = fresh_id(store, &unique_name("ref-high")).await;
    let referrer = unique_subject("ref-referrer");
    store.add_version(&row_referencing(&referrer, 1, high, high_fp, &[(&target, 1)])).await.expect("create_version");
    store
        .add_version(&row_referencing(&referrer, 2, low, low_fp, &[(&target, 2), (&target, 1)]))
        .await
        .expect("create_version");
    store.set_version_deleted(&referrer, Version(2), true).await.expect("soft delete");
    let to_v1 = store.referrers(&target, Version(1)).await.expect("referrers");
    assert_eq!(to_v1.iter().map(|r| r.id).collect::<Vec<_>>(), vec![low, high], "referrers sorted by id");
    assert!(to_v1[0].deleted, "soft-deleted referrers are returned with their flag");
    let to_v2 = store.referrers(&target, Version(2)).await.expect("referrers");
    assert_eq!(to_v2.iter().map(|r| r.id).collect::<Vec<_>>(), vec![low]);
    assert!(store.referrers(&target, Version(3)).await.expect("referrers").is_empty());
    let (twice, twice_fp) = fresh_id(store, &unique_name("ref-twice")).await;
    let doubled = row_referencing(&unique_subject("ref-twice"), 1, twice, twice_fp, &[(&target, 2), (&target, 2)]);
    store.add_version(&doubled).await.expect("create_version");
    let to_v2 = store.referrers(&target, Version(2)).await.expect("referrers");
    assert_eq!(to_v2.iter().map(|r| r.id).collect::<Vec<_>>(), vec![low, twice], "one entry per referring row");
    store.delete_version(&doubled.subject, doubled.version).await.expect("delete_version");
    store.delete_version(&referrer, Version(2)).await.expect("delete_version");
    let after = store.referrers(&target, Version(2)).await.expect("referrers");
    assert!(after.is_empty(), "a hard-deleted referrer leaves the index");
}

/// `list_subjects`: prefix, live/deleted filters, `after` and `limit` paging, ascending.
pub async fn list_subjects_paging_and_filters(store: &dyn Store) {
    let prefix = unique_name("list");
    let name = |suffix: &str| Subject::new(format!("{prefix}-{suffix}")).expect("subject");
    let (id, fp) = fresh_id(store, &prefix).await;
    for suffix in ["d", "a", "c", "b"] {
        store.add_version(&row(&name(suffix), 1, id, fp)).await.expect("create_version");
    }
    store.add_version(&row(&name("c"), 2, id, fp)).await.expect("create_version");
    store.set_version_deleted(&name("b"), Version(1), true).await.expect("soft delete");
    store.set_version_deleted(&name("c"), Version(1), true).await.expect("soft delete");
    let prefix = prefix.as_str();
    let list = |filter, after: Option<Subject>, limit| async move {
        list_suffixes(store, SubjectsPage { prefix, filter, after: after.as_ref(), limit }).await
    };
    assert_eq!(list(DeletedFilter::LiveOnly, None, 100).await, ["a", "c", "d"], "live: b is all soft-deleted");
    assert_eq!(list(DeletedFilter::IncludeDeleted, None, 100).await, ["a", "b", "c", "d"]);
    assert_eq!(list(DeletedFilter::DeletedOnly, None, 100).await, ["b"]);
    assert_eq!(list(DeletedFilter::LiveOnly, None, 2).await, ["a", "c"], "limit");
    assert_eq!(list(DeletedFilter::LiveOnly, Some(name("c")), 2).await, ["d"], "after is exclusive");
    assert_eq!(list(DeletedFilter::IncludeDeleted, Some(name("a")), 2).await, ["b", "c"]);
    assert!(list(DeletedFilter::LiveOnly, Some(name("d")), 2).await.is_empty(), "past the end");
    assert!(list(DeletedFilter::IncludeDeleted, None, 0).await.is_empty(), "limit 0");
    let other_prefix = format!("{prefix}-x");
    let page = SubjectsPage { prefix: &other_prefix, filter: DeletedFilter::IncludeDeleted, after: None, limit: 100 };
    let other = store.list_subjects(page).await;
    assert!(other.expect("list_subjects").is_empty(), "prefix filters");
}

async fn list_suffixes(store: &dyn Store, page: SubjectsPage<'_>) -> Vec<String> {
    let page = store.list_subjects(page).await.expect("list_subjects");
    page.iter().map(|s| s.as_str().rsplit('-').next().unwrap_or_default().to_string()).collect()
}

/// `subjects_with_config`: the subjects holding a config, versions or none, by prefix, `after`
/// and `limit`, ascending; a subject with only a mode, a context's own config and the global one
/// are not listed, and a removed config leaves the listing.
pub async fn subjects_with_config_pages(store: &dyn Store) {
    let prefix = unique_name("configured");
    let name = |suffix: &str| Subject::new(format!("{prefix}-{suffix}")).expect("subject");
    let config = ConfigRecord { compatibility_level: Some(CompatibilityLevel::Full), ..ConfigRecord::default() };
    let (id, fp) = fresh_id(store, &prefix).await;
    store.add_version(&row(&name("b"), 1, id, fp)).await.expect("create_version");
    for suffix in ["d", "a", "b", "c"] {
        store.put_config(&Scope::Subject(name(suffix)), &config).await.expect("put_config");
    }
    store.put_mode(&Scope::Subject(name("e")), Mode::ReadOnly).await.expect("put_mode");
    let context = Context::parse(&format!(".{prefix}")).expect("context");
    store.put_config(&Scope::of_context(&context), &config).await.expect("context config");
    let prefix = format!("{prefix}-");
    let list = |after: Option<Subject>, limit| {
        let prefix = prefix.clone();
        async move {
            let page = ConfiguredPage { prefix: &prefix, after: after.as_ref(), limit };
            let page = store.subjects_with_config(page).await.expect("subjects_with_config");
            page.iter().map(|s| s.as_str().rsplit('-').next().unwrap_or_default().to_string()).collect::<Vec<_>>()
        }
    };
    assert_eq!(list(None, 100).await, ["a", "b", "c", "d"], "with versions or none, not a mode alone");
    assert_eq!(list(None, 2).await, ["a", "b"], "limit");
    assert_eq!(list(Some(name("b")), 100).await, ["c", "d"], "after is exclusive");
    assert!(list(Some(name("d")), 100).await.is_empty(), "past the end");
    assert!(list(None, 0).await.is_empty(), "limit 0");
    store.delete_config(&Scope::Subject(name("c"))).await.expect("delete_config");
    assert_eq!(list(None, 100).await, ["a", "b", "d"], "a removed config leaves the listing");
    let everything = store.subjects_with_config(ConfiguredPage { prefix: "", after: None, limit: usize::MAX }).await;
    let everything = everything.expect("subjects_with_config");
    assert!(
        everything.iter().all(|subject| !subject.as_str().ends_with(':')),
        "a context's own config is no subject: {everything:?}"
    );
    store.delete_config(&Scope::of_context(&context)).await.expect("delete context config");
}

/// Config get/put/delete at subject and global scope (the global value is restored).
pub async fn config_crud(store: &dyn Store) {
    let scope = Scope::Subject(unique_subject("config"));
    assert_eq!(store.get_config(&scope).await.expect("get_config"), None);
    let full = ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::Full),
        normalize: Some(true),
        ..ConfigRecord::default()
    };
    store.put_config(&scope, &full).await.expect("put_config");
    assert_eq!(store.get_config(&scope).await.expect("get_config"), Some(full.clone()));
    let none = ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::None),
        normalize: None,
        ..ConfigRecord::default()
    };
    store.put_config(&scope, &none).await.expect("put_config replaces");
    assert_eq!(store.get_config(&scope).await.expect("get_config"), Some(none.clone()));
    assert_eq!(store.delete_config(&scope).await.expect("delete_config"), Some(none));
    assert_eq!(store.delete_config(&scope).await.expect("delete_config"), None, "delete of nothing");
    assert_eq!(store.get_config(&scope).await.expect("get_config"), None);

    let global = store.get_config(&Scope::Global).await.expect("get_config");
    store.put_config(&Scope::Global, &full).await.expect("put_config global");
    assert_eq!(store.get_config(&Scope::Global).await.expect("get_config"), Some(full.clone()));
    assert_eq!(store.get_config(&scope).await.expect("get_config"), None, "global does not leak into subjects");
    match global {
        Some(previous) => store.put_config(&Scope::Global, &previous).await.expect("restore global config"),
        None => {
            assert_eq!(store.delete_config(&Scope::Global).await.expect("delete_config"), Some(full));
        }
    }
}

/// Mode get/put/delete at subject and global scope (the global value is restored).
pub async fn mode_crud(store: &dyn Store) {
    let scope = Scope::Subject(unique_subject("mode"));
    assert_eq!(store.get_mode(&scope).await.expect("get_mode"), None);
    store.put_mode(&scope, Mode::ReadOnly).await.expect("put_mode");
    assert_eq!(store.get_mode(&scope).await.expect("get_mode"), Some(Mode::ReadOnly));
    store.put_mode(&scope, Mode::Import).await.expect("put_mode replaces");
    assert_eq!(store.get_mode(&scope).await.expect("get_mode"), Some(Mode::Import));
    assert_eq!(store.delete_mode(&scope).await.expect("delete_mode"), Some(Mode::Import));
    assert_eq!(store.delete_mode(&scope).await.expect("delete_mode"), None, "delete of nothing");

    let global = store.get_mode(&Scope::Global).await.expect("get_mode");
    store.put_mode(&Scope::Global, Mode::ReadOnlyOverride).await.expect("put_mode global");
    assert_eq!(store.get_mode(&Scope::Global).await.expect("get_mode"), Some(Mode::ReadOnlyOverride));
    assert_eq!(store.get_mode(&scope).await.expect("get_mode"), None, "global does not leak into subjects");
    match global {
        Some(previous) => store.put_mode(&Scope::Global, previous).await.expect("restore global mode"),
        None => {
            assert_eq!(store.delete_mode(&Scope::Global).await.expect("delete_mode"), Some(Mode::ReadOnlyOverride));
        }
    }
}

/// The usage marker: absent until marked, moves forward only (an older day is ignored, not an
/// error), is kept per subject, and survives a hard delete of the subject's rows.
pub async fn usage_marker_moves_forward_only(store: &dyn Store) {
    let subject = unique_subject("usage");
    let other = unique_subject("usage-other");
    assert_eq!(store.last_used(&subject).await.expect("last_used"), None, "never marked");
    store.mark_used(&subject, 20_000).await.expect("mark_used");
    assert_eq!(store.last_used(&subject).await.expect("last_used"), Some(20_000));
    store.mark_used(&subject, 20_000).await.expect("same day again is success");
    store.mark_used(&subject, 19_990).await.expect("an older day is success");
    assert_eq!(store.last_used(&subject).await.expect("last_used"), Some(20_000), "never moves back");
    store.mark_used(&subject, 20_003).await.expect("newer day");
    assert_eq!(store.last_used(&subject).await.expect("last_used"), Some(20_003));
    assert_eq!(store.last_used(&other).await.expect("last_used"), None, "markers are per subject");

    let (id, fp) = fresh_id(store, &unique_name("usage")).await;
    store.add_version(&row(&subject, 1, id, fp)).await.expect("create_version");
    let deletion = HardDeletion {
        subject: &subject,
        versions: &[Version(1)],
        remove_subject_settings: true,
        preconditions: &Preconditions::default(),
    };
    store.hard_delete_versions(deletion).await.expect("hard delete");
    assert_eq!(store.versions(&subject).await.expect("versions"), Vec::new());
    assert_eq!(store.last_used(&subject).await.expect("last_used"), Some(20_003), "rows and marker are separate");
}

/// `soft_delete_versions` is all-or-nothing: `Conflict` and no change when one version is
/// missing or already soft-deleted; otherwise every listed version becomes soft-deleted.
pub async fn soft_delete_versions_is_all_or_nothing(store: &dyn Store) {
    let subject = unique_subject("soft-batch");
    let (id, fp) = fresh_id(store, &unique_name("soft-batch")).await;
    for version in 1..=3 {
        store.add_version(&row(&subject, version, id, fp)).await.expect("create_version");
    }
    store.set_version_deleted(&subject, Version(2), true).await.expect("soft delete");
    let deleted = |rows: Vec<crate::model::VersionRow>| rows.iter().map(|r| r.deleted).collect::<Vec<_>>();
    let clash = soft_delete(store, &subject, &[Version(1), Version(2), Version(3)]).await;
    assert!(is_conflict(&clash), "soft_delete_versions over a deleted version must be Conflict, got {clash:?}");
    let missing = soft_delete(store, &subject, &[Version(1), Version(7)]).await;
    assert!(is_conflict(&missing), "soft_delete_versions over a missing version must be Conflict, got {missing:?}");
    assert_eq!(deleted(store.versions(&subject).await.expect("versions")), [false, true, false], "nothing changed");
    soft_delete(store, &subject, &[Version(1), Version(3)]).await.expect("soft_delete_versions");
    assert_eq!(deleted(store.versions(&subject).await.expect("versions")), [true, true, true]);
    let page = SubjectsPage { prefix: subject.as_str(), filter: DeletedFilter::DeletedOnly, after: None, limit: 10 };
    let listed = store.list_subjects(page).await;
    assert_eq!(listed.expect("list_subjects"), [subject], "every row soft-deleted: listed as deleted");
}

/// `hard_delete_versions` removes the listed rows (skipping missing ones) and, when asked,
/// the subject's config and mode; other subjects keep theirs.
pub async fn hard_delete_versions_removes_rows_and_settings(store: &dyn Store) {
    let subject = unique_subject("hard-batch");
    let other = unique_subject("hard-batch-other");
    let (id, fp) = fresh_id(store, &unique_name("hard-batch")).await;
    for version in 1..=3 {
        store.add_version(&row(&subject, version, id, fp)).await.expect("create_version");
    }
    let none = ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::None),
        normalize: None,
        ..ConfigRecord::default()
    };
    for s in [&subject, &other] {
        store.put_config(&Scope::Subject(s.clone()), &none).await.expect("put_config");
        store.put_mode(&Scope::Subject(s.clone()), Mode::ReadOnly).await.expect("put_mode");
    }
    hard_delete(store, &subject, &[Version(1), Version(9)]).await.expect("hard_delete_versions");
    let left: Vec<i32> = store.versions(&subject).await.expect("versions").iter().map(|r| r.version.0).collect();
    assert_eq!(left, [2, 3], "listed rows removed, missing ones skipped");
    let scope = Scope::Subject(subject.clone());
    assert_eq!(store.get_config(&scope).await.expect("get_config"), Some(none.clone()), "settings kept");
    let deletion = HardDeletion {
        subject: &subject,
        versions: &[Version(2), Version(3)],
        remove_subject_settings: true,
        preconditions: &Preconditions::default(),
    };
    store.hard_delete_versions(deletion).await.expect("hard_delete_versions");
    assert!(store.versions(&subject).await.expect("versions").is_empty());
    assert_eq!(store.get_config(&scope).await.expect("get_config"), None, "subject config removed");
    assert_eq!(store.get_mode(&scope).await.expect("get_mode"), None, "subject mode removed");
    let kept = Scope::Subject(other);
    assert_eq!(store.get_config(&kept).await.expect("get_config"), Some(none), "other subjects keep config");
    assert_eq!(store.get_mode(&kept).await.expect("get_mode"), Some(Mode::ReadOnly), "other subjects keep mode");
    let with_id = store.rows_with_id(id).await.expect("rows_with_id");
    assert!(with_id.is_empty(), "hard-deleted rows leave rows_with_id");
}

/// `layered_write_context` reads the config and mode of every scope of [`Scope::settings_read`]
/// (a subject's context's own settings among them) with the subject's revision; a settings write
/// or a new version conditioned on what it saw conflicts once a context-level setting changed.
pub async fn layered_write_context_reads_every_level(store: &dyn Store) {
    let context = Context::parse(&unique_name("layers")).expect("generated context names are valid");
    let subject = Subject::new(context.qualify("orders")).expect("a qualified subject");
    let scope = Scope::Subject(subject.clone());
    let before = store.layered_write_context(&scope, &[]).await.expect("layered_write_context");
    let read: Vec<Scope> = before.levels.iter().map(|level| level.scope.clone()).collect();
    assert_eq!(read, scope.settings_read(), "layered_write_context: every level, in order");
    let own = Scope::of_context(&context);
    assert_eq!(before.at(&own).and_then(|level| level.mode), None);

    let readonly = SettingChange::Mode(Some(Mode::ReadOnly));
    let none = Preconditions::default();
    let write = SettingWrite { scope: &own, change: &readonly, preconditions: &none };
    store.write_setting(write).await.expect("write_setting at a context");
    let after = store.layered_write_context(&scope, &[]).await.expect("layered_write_context");
    assert_eq!(after.at(&own).and_then(|level| level.mode), Some(Mode::ReadOnly), "the context's mode is read");

    let (fingerprint, _) = stored_body(store, &unique_name("layers-row")).await;
    let id = store.allocate_id_in(&context, &fingerprint).await.expect("allocate_id_in");
    let new_row = row(&subject, 1, id, fingerprint);
    let stale =
        Preconditions { revision: Some(before.revision), settings: before.seen.clone(), ..Preconditions::default() };
    assert!(
        is_conflict(&store.create_version(&new_row, &stale, &crate::CommitHints::default()).await),
        "a new version sees a context-level change"
    );
    let fresh =
        Preconditions { revision: Some(after.revision), settings: after.seen.clone(), ..Preconditions::default() };
    store
        .create_version(&new_row, &fresh, &crate::CommitHints::default())
        .await
        .expect("create_version under what was read");

    let config = SettingChange::Config(Some(Box::new(ConfigRecord {
        compatibility_level: Some(CompatibilityLevel::None),
        ..ConfigRecord::default()
    })));
    let stale = Preconditions { settings: before.seen.clone(), ..Preconditions::default() };
    let write = SettingWrite { scope: &scope, change: &config, preconditions: &stale };
    assert!(is_conflict(&store.write_setting(write).await), "a context-level change is seen");
    let fresh = Preconditions { settings: after.seen.clone(), ..Preconditions::default() };
    store
        .write_setting(SettingWrite { preconditions: &fresh, ..write })
        .await
        .expect("write_setting under what was read");
    for (at, change) in [(&scope, SettingChange::Config(None)), (&own, SettingChange::Mode(None))] {
        let write = SettingWrite { scope: at, change: &change, preconditions: &none };
        store.write_setting(write).await.expect("write_setting: clean up");
    }
}
