//! AWS calls per registry operation, counted by the store's interceptor, must not grow with the
//! number of subjects. Prints the figures (`cargo test -p registry-store-aws --test calls -- --nocapture`).

mod support;

use registry_core::testkit::StoreTestExt;
use registry_core::{
    Context, Guid, NewVersion, SchemaBody, SchemaId, Store, Subject, UnassignedRow, Version, VersionRow,
};
use registry_store_aws::AwsStore;
use support::{body, calls_of, row, subject, with_store};

/// Register (new or existing) as the registry does it: lookup under the subject, body, then the
/// version with its ID and guid bindings.
async fn register(store: &AwsStore, subject: &Subject, body: &SchemaBody) -> (SchemaId, Version) {
    let fp = body.fingerprint();
    let rows = store.versions(subject).await.unwrap_or_else(|e| panic!("{e}"));
    if let Some(found) = rows.iter().find(|r| r.fingerprint == fp && !r.deleted) {
        return (found.id, found.version);
    }
    store.put_body(&fp, body).await.unwrap_or_else(|e| panic!("{e}"));
    let next = rows.last().map_or(1, |r| r.version.0 + 1);
    let new = row(subject.as_str(), next, 0, fp);
    let unassigned = UnassignedRow {
        subject: new.subject,
        version: new.version,
        fingerprint: fp,
        references: new.references,
        registered_at_ms: new.registered_at_ms,
    };
    let preconditions = registry_core::Preconditions::default();
    let guid = Guid::of(body);
    let version = NewVersion {
        row: &unassigned,
        guid: &guid,
        preconditions: &preconditions,
        hints: &registry_core::CommitHints::default(),
    };
    let assigned = store.create_version_assigning_id(version).await;
    (assigned.unwrap_or_else(|e| panic!("{e}")).0, Version(next))
}

/// Lookup under a subject: the subject's rows, then the body of the match.
async fn lookup(store: &AwsStore, subject: &Subject, body: &SchemaBody) -> Option<SchemaId> {
    let fp = body.fingerprint();
    let rows = store.versions(subject).await.unwrap_or_else(|e| panic!("{e}"));
    let found = rows.iter().find(|r| r.fingerprint == fp && !r.deleted)?;
    store.get_body(&found.fingerprint).await.unwrap_or_else(|e| panic!("{e}"))?;
    Some(found.id)
}

/// Get by id in `context` as the registry does it on a cold instance: id → fingerprint while a
/// row carries the ID (one read), then the body.
async fn get_by_id(store: &AwsStore, context: &Context, id: SchemaId) -> Option<SchemaBody> {
    let fp = store.fingerprint_for_carried_id_in(context, id).await.unwrap_or_else(|e| panic!("{e}"))?;
    store.get_body(&fp).await.unwrap_or_else(|e| panic!("{e}"))
}

/// Get by guid as the registry does it: guid → fingerprint and the ID a row carries, the body.
async fn get_by_guid(store: &AwsStore, guid: &Guid) -> Option<SchemaId> {
    let found = store.carried_id_for_guid(guid).await.unwrap_or_else(|e| panic!("{e}"))?;
    store.get_body(&found.fingerprint).await.unwrap_or_else(|e| panic!("{e}"))?;
    Some(found.id)
}

/// (register new, re-register, lookup, get by id, get by guid) with `existing` subjects already
/// registered and the schema then shared by `sharing` more, every subject in the default context.
async fn costs(store: &AwsStore, existing: usize, sharing: usize, round: usize) -> [u64; 5] {
    let [new, again, lookup, get] = costs_in(store, &Context::DEFAULT, existing, sharing, round).await;
    let (guid_calls, by_guid) = calls_of(store, get_by_guid(store, &Guid::of(&round_schema(round)))).await;
    assert!(by_guid.is_some());
    [new, again, lookup, get, guid_calls]
}

/// The schema `costs` registers in `round`.
fn round_schema(round: usize) -> SchemaBody {
    body(&format!("{{\"type\":\"fixed\",\"name\":\"F{round}\",\"size\":4}}"))
}

/// (register new, re-register, lookup, get by id) as [`costs`], every subject in `context`.
async fn costs_in(store: &AwsStore, context: &Context, existing: usize, sharing: usize, round: usize) -> [u64; 4] {
    let subject = |name: String| subject(&context.qualify(&name));
    for i in 0..existing {
        register(store, &subject(format!("filler-{round}-{i}")), &body(&format!("\"filler-{round}-{i}\""))).await;
    }
    let target = subject(format!("orders-{round}-value"));
    let schema = round_schema(round);
    let (new_calls, (id, _)) = calls_of(store, register(store, &target, &schema)).await;
    let (again_calls, (again_id, _)) = calls_of(store, register(store, &target, &schema)).await;
    assert_eq!(again_id, id);
    let (lookup_calls, found) = calls_of(store, lookup(store, &target, &schema)).await;
    assert_eq!(found, Some(id));
    // The schema is then shared by `sharing` more subjects (a common key schema, say): reads by
    // ID and guid must not read every subject that carries it (over 100 carriers would take a
    // second BatchGetItem).
    for i in 0..sharing {
        let (shared_id, _) = register(store, &subject(format!("shared-{round}-{i}")), &schema).await;
        assert_eq!(shared_id, id);
    }
    let (get_calls, got) = calls_of(store, get_by_id(store, context, id)).await;
    assert_eq!(got, Some(schema));
    [new_calls, again_calls, lookup_calls, get_calls]
}

#[tokio::test]
async fn calls_per_operation_do_not_grow_with_subjects() {
    with_store(|store, _| async move {
        let few = costs(&store, 1, 1, 0).await;
        let many = costs(&store, 40, 120, 1).await;
        println!("AWS calls per operation [register new, re-register, lookup, get by id, get by guid]: {few:?} (1 other subject, the schema in 2 subjects), {many:?} (40 other subjects, the schema in 121)");
        assert_eq!(few, many, "calls must not depend on the number of subjects");
        // Register new: Query rows, S3 PutObject body, BatchGetItem of the fingerprint's binding,
        // the guid and the counter, S3 PutObject ledger claim, one TransactWriteItems (row, ID, guid).
        // Get by id: one Query of the ID's partition (its binding and first edge), S3 GetObject.
        // Get by guid: GetItem guid (it carries the ID while a row does), S3 GetObject.
        assert_eq!(few, [5, 1, 2, 2, 2]);
    })
    .await;
}

/// A named context has its own counter, bindings and ledger, written and read by the same calls
/// as the default context's: each operation costs what it costs there.
#[tokio::test]
async fn a_named_context_costs_what_the_default_context_costs() {
    with_store(|store, _| async move {
        let team = Context::parse(".team").unwrap_or_else(|e| panic!("{e}"));
        let default = costs_in(&store, &Context::DEFAULT, 1, 1, 0).await;
        let named = costs_in(&store, &team, 1, 1, 0).await;
        let named_many = costs_in(&store, &team, 40, 120, 1).await;
        println!("AWS calls per operation [register new, re-register, lookup, get by id]: default context {default:?}, .team {named:?}, .team with 40 other subjects and the schema in 121 {named_many:?}");
        assert_eq!(named, default, "a named context costs what the default context costs");
        assert_eq!(named_many, named, "calls must not depend on the number of subjects");
        assert_eq!(named, [5, 1, 2, 2]);
        let default_id = store.id_for_fingerprint(&round_schema(0).fingerprint()).await.unwrap_or_else(|e| panic!("{e}"));
        let named_id = store.id_for_fingerprint_in(&team, &round_schema(0).fingerprint()).await;
        assert_eq!((default_id, named_id.unwrap_or_else(|e| panic!("{e}"))), (Some(SchemaId(2)), Some(SchemaId(2))), "each context's own sequence");
        let (listing, listed) = calls_of(&store, store.list_contexts()).await;
        assert_eq!((listing, listed.unwrap_or_else(|e| panic!("{e}"))), (1, vec![team]), "GET /contexts: one Query");
    })
    .await;
}

#[tokio::test]
async fn each_store_call_is_one_aws_call_except_allocation() {
    with_store(|store, _| async move {
        let fp = body("\"x\"").fingerprint();
        let (allocate, _) = calls_of(&store, store.allocate_id(&fp)).await;
        let (create, _) = calls_of(&store, store.create_version(&row("s", 1, 1, fp), &registry_core::Preconditions::default(), &registry_core::CommitHints::default())).await;
        let (get, _) = calls_of(&store, store.get_version(&subject("s"), Version(1))).await;
        let (soft, _) = calls_of(&store, store.set_version_deleted(&subject("s"), Version(1), true)).await;
        let (hard, _) = calls_of(&store, store.delete_version(&subject("s"), Version(1))).await;
        let guid = Guid::of(&body("\"x\""));
        let (bind_guid, _) = calls_of(&store, store.bind_guid(&guid, &fp)).await;
        let (by_guid, _) = calls_of(&store, store.fingerprint_for_guid(&guid)).await;
        println!(
            "allocate_id {allocate}, create_version {create}, get_version {get}, soft delete {soft}, hard delete {hard}, bind_guid {bind_guid}, fingerprint_for_guid {by_guid}"
        );
        // Allocation: GetItem counter, the ledger claim (S3 PutObject), TransactWriteItems. Hard
        // delete of one row: GetItem row, GetItem fingerprint binding (the guid it names), TransactWriteItems.
        assert_eq!([allocate, create, get, soft, hard, bind_guid, by_guid], [3, 1, 1, 1, 3, 1, 1]);
    })
    .await;
}

/// `unlist_context` (`DELETE /contexts/{ctx}`): GetItem of the context's revision (its pseudo-subject's
/// index item), GetItem of its counter, one Query page of one subject, then the TransactWriteItems
/// conditioned on that revision; a context holding a subject is refused after the Query.
#[tokio::test]
async fn unlisting_a_context_reads_its_revision_its_counter_and_one_subject() {
    with_store(|store, _| async move {
        let context = |name: &str| Context::parse(name).unwrap_or_else(|e| panic!("{e}"));
        let (empty, used) = (context(".empty"), context(".used"));
        let bound = store.allocate_id_in(&empty, &body("\"e\"").fingerprint()).await;
        assert!(bound.is_ok(), "{bound:?}");
        let fp = body("\"u\"").fingerprint();
        let id = store.allocate_id_in(&used, &fp).await.unwrap_or_else(|e| panic!("{e}"));
        let created = store
            .create_version(
                &row(":.used:s", 1, id.0, fp),
                &registry_core::Preconditions::default(),
                &registry_core::CommitHints::default(),
            )
            .await;
        assert!(created.is_ok(), "{created:?}");
        let (unlisted, answer) = calls_of(&store, store.unlist_context(&empty)).await;
        assert!(answer.is_ok(), "{answer:?}");
        let (refused, answer) = calls_of(&store, store.unlist_context(&used)).await;
        assert!(matches!(answer, Err(registry_core::StoreError::Conflict(_))), "{answer:?}");
        println!("unlist_context: empty {unlisted}, holding a subject {refused}");
        assert_eq!([unlisted, refused], [4, 3]);
        assert_eq!(store.list_contexts().await.unwrap_or_else(|e| panic!("{e}")), vec![used]);
    })
    .await;
}

/// The registry itself over the cached store, as the functions run it: a cold instance answers a
/// by-ID read with one item read and one body read, and a warm one repeats it from memory.
#[tokio::test]
async fn by_id_reads_take_two_calls_cold_and_none_warm() {
    use registry_core::{CachedStore, NewSchema, RegisterOptions, Registry, RegistrySettings};
    use std::sync::Arc;
    with_store(|store, _| async move {
        let schema = NewSchema { schema: Some("\"string\"".into()), ..NewSchema::default() };
        let writer = Registry::new(Arc::new(store.clone()), RegistrySettings::default());
        let registered = writer.register("orders-value", schema, RegisterOptions::default()).await;
        let id = registered.unwrap_or_else(|e| panic!("{e}")).id;
        let cold = Registry::new(Arc::new(CachedStore::new(store.clone())), RegistrySettings::default());
        let (first, answer) = calls_of(&store, cold.schema_by_id(id.0)).await;
        let (again, _) = calls_of(&store, cold.schema_by_id(id.0)).await;
        assert_eq!(answer.unwrap_or_else(|e| panic!("{e}")).id, id);
        let (missing, answer) = calls_of(&store, cold.schema_by_id(id.0 + 1)).await;
        assert!(answer.is_err(), "an unknown ID is 40403");
        // An ID allocated by a registration that crashed before its commit: bound, carried by no row.
        let orphan = store.allocate_id(&body("\"bytes\"").fingerprint()).await.unwrap_or_else(|e| panic!("{e}"));
        let (uncarried, answer) = calls_of(&store, cold.schema_by_id(orphan.0)).await;
        assert!(answer.is_err(), "an ID no row carries is 40403");
        println!("GET /schemas/ids/{{id}}: cold {first}, warm {again}, unknown {missing}, uncarried {uncarried}");
        assert_eq!([first, again, missing, uncarried], [2, 0, 1, 1]);
    })
    .await;
}

/// A registry as one function instance runs it: over the cached store, nothing in memory yet.
fn cold_instance(store: &AwsStore) -> registry_core::Registry {
    use registry_core::{CachedStore, Registry, RegistrySettings};
    Registry::new(std::sync::Arc::new(CachedStore::new(store.clone())), RegistrySettings::default())
}

fn avro(text: &str) -> registry_core::NewSchema {
    registry_core::NewSchema { schema: Some(text.to_string()), ..registry_core::NewSchema::default() }
}

/// (register new, re-register, lookup, get by id, get by guid) through the registry itself, each on
/// a cold instance, with `existing` other subjects and the schema then shared by `sharing` more;
/// and the warm repeats of get by id and get by guid.
async fn registry_costs(store: &AwsStore, existing: usize, sharing: usize, round: usize) -> ([u64; 5], [u64; 2]) {
    registry_costs_in(store, &Context::DEFAULT, existing, sharing, round).await
}

/// [`registry_costs`] with every subject in `context`.
async fn registry_costs_in(
    store: &AwsStore,
    context: &Context,
    existing: usize,
    sharing: usize,
    round: usize,
) -> ([u64; 5], [u64; 2]) {
    use registry_core::{LookupOptions, RegisterOptions};
    let seed = cold_instance(store);
    for i in 0..existing {
        let filler = context.qualify(&format!("rfiller-{round}-{i}"));
        let registered = seed
            .register(
                &filler,
                avro(&format!("{{\"type\":\"fixed\",\"name\":\"RF{round}x{i}\",\"size\":1}}")),
                RegisterOptions::default(),
            )
            .await;
        registered.unwrap_or_else(|e| panic!("{e}"));
    }
    let target = context.qualify(&format!("rorders-{round}-value"));
    let text = format!("{{\"type\":\"fixed\",\"name\":\"R{round}\",\"size\":4}}");
    let (new_calls, registered) =
        calls_of(store, cold_instance(store).register(&target, avro(&text), RegisterOptions::default())).await;
    let id = registered.unwrap_or_else(|e| panic!("{e}")).id;
    let (again_calls, again) =
        calls_of(store, cold_instance(store).register(&target, avro(&text), RegisterOptions::default())).await;
    assert_eq!(again.unwrap_or_else(|e| panic!("{e}")).id, id);
    let (lookup_calls, found) =
        calls_of(store, cold_instance(store).lookup(&target, avro(&text), LookupOptions::default())).await;
    assert_eq!(found.unwrap_or_else(|e| panic!("{e}")).id, id);
    for i in 0..sharing {
        let shared = seed
            .register(&context.qualify(&format!("rshared-{round}-{i}")), avro(&text), RegisterOptions::default())
            .await;
        assert_eq!(shared.unwrap_or_else(|e| panic!("{e}")).id, id);
    }
    let guid = Guid::of(&body(&text)).to_string();
    let reader = cold_instance(store);
    let (get_calls, got) = calls_of(store, reader.schema_by_id_in(context, id.0)).await;
    assert_eq!(got.unwrap_or_else(|e| panic!("{e}")).body.schema, text);
    let (warm_get, _) = calls_of(store, reader.schema_by_id_in(context, id.0)).await;
    let reader = cold_instance(store);
    let (guid_calls, by_guid) = calls_of(store, reader.schema_by_guid(&guid)).await;
    assert_eq!(by_guid.unwrap_or_else(|e| panic!("{e}")).id, id);
    let (warm_guid, _) = calls_of(store, reader.schema_by_guid(&guid)).await;
    ([new_calls, again_calls, lookup_calls, get_calls, guid_calls], [warm_get, warm_guid])
}

#[tokio::test]
async fn registry_calls_per_operation_on_a_cold_instance() {
    with_store(|store, _| async move {
        let (few, few_warm) = registry_costs(&store, 1, 1, 0).await;
        let (many, many_warm) = registry_costs(&store, 40, 120, 1).await;
        println!("AWS calls per operation through the registry, cold instance [register new, re-register, lookup, get by id, get by guid]: {few:?} (1 other subject, the schema in 2 subjects), {many:?} (40 other subjects, the schema in 121); warm repeats [get by id, get by guid]: {few_warm:?}, {many_warm:?}");
        assert_eq!(few, many, "calls must not depend on the number of subjects");
        assert_eq!(few_warm, many_warm);
        // Register new: BatchGetItem of the write context with the posted schema's fingerprint
        // binding, guid and the counter, Query rows, S3 PutObject body, S3 PutObject ledger claim,
        // TransactWriteItems (row, ID, guid); no usage marker (the new row's time is the activity
        // `registry prune` reads).
        // Re-register: the same BatchGetItem, which also reads the subject's record of the posted
        // schema's live version (written with the version, trusted at the subject's revision read
        // with it) and its guid item (the index repair check): no rows read; the answer's body is
        // the posted one (same fingerprint), and the version was registered today, so no usage marker.
        // Lookup: Query rows, BatchGetItem of the subject and global config (normalize); no body read,
        // no marker, as above.
        // Get by id: Query of the ID's partition, S3 GetObject; get by guid: GetItem guid (it
        // carries the ID while a row does), S3 GetObject. Warm, both answer from memory (the body
        // is immutable; the ID's carriers are trusted for the answer-memory TTL, as by ID).
        assert_eq!((few, few_warm), ([5, 1, 2, 2, 2], [0, 0]));
    })
    .await;
}

/// Re-registration (through the registry, cold instance each time) with its answer and calls.
async fn reregister(store: &AwsStore, subject: &str, text: &str) -> (u64, registry_core::SchemaRecord) {
    let (calls, again) =
        calls_of(store, cold_instance(store).register(subject, avro(text), registry_core::RegisterOptions::default()))
            .await;
    (calls, again.unwrap_or_else(|e| panic!("{e}")))
}

/// Writes `schema` as version 1 of `subject_name` straight through the store, as the registry
/// wrote it before guid items carried IDs and subjects recorded their live versions: its body, its
/// guid binding (`with_guid`), an ID allocated in the subject's context and the row conditioned on
/// that binding, registered at `registered_at_ms` (`None`: the fixture row's, in 2023). The ID.
async fn write_as_before(
    store: &AwsStore,
    subject_name: &str,
    schema: &SchemaBody,
    with_guid: bool,
    registered_at_ms: Option<i64>,
) -> SchemaId {
    let fp = schema.fingerprint();
    store.put_body(&fp, schema).await.unwrap_or_else(|e| panic!("{e}"));
    if with_guid {
        store.bind_guid(&Guid::of(schema), &fp).await.unwrap_or_else(|e| panic!("{e}"));
    }
    let id = store.allocate_id_in(&subject(subject_name).context(), &fp).await.unwrap_or_else(|e| panic!("{e}"));
    let bound = registry_core::Preconditions { binding: Some((fp, id)), ..Default::default() };
    let fixture = row(subject_name, 1, id.0, fp);
    let row = VersionRow { registered_at_ms: registered_at_ms.unwrap_or(fixture.registered_at_ms), ..fixture };
    let hints = registry_core::CommitHints::default();
    store.create_version(&row, &bound, &hints).await.unwrap_or_else(|e| panic!("{e}"));
    id
}

/// A table written before subjects recorded their live versions (rows and bindings only, the
/// revision raised by 1 per write) answers re-registrations from the rows, records what they
/// said once, and from then on answers them in one call.
#[tokio::test]
async fn a_table_without_live_version_records_upgrades_in_place() {
    with_store(|store, _| async move {
        let text = "{\"type\":\"fixed\",\"name\":\"Before\",\"size\":5}";
        let since_epoch = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH);
        let now_ms = i64::try_from(since_epoch.map(|d| d.as_millis()).unwrap_or(0)).unwrap_or(i64::MAX);
        let id = write_as_before(&store, "before-value", &body(text), true, Some(now_ms)).await;
        let (first, found) = reregister(&store, "before-value", text).await;
        assert_eq!((found.id, found.version), (id, Version(1)));
        let (second, found) = reregister(&store, "before-value", text).await;
        assert_eq!((found.id, found.version), (id, Version(1)));
        println!("re-register on a subject written without live version records: first {first} calls, then {second}");
        // BatchGetItem (no record), Query rows, TransactWriteItems (the record, under the revision
        // read); then the BatchGetItem alone.
        assert_eq!([first, second], [3, 1]);
    })
    .await;
}

/// A soft delete (as every write that does not keep the records: hard deletes, IMPORT, the admin
/// tools, older code) leaves the subject's records untrusted: the schema registers again as a new
/// version, from the rows, and that one is answered in one call once recorded.
#[tokio::test]
async fn a_record_is_not_trusted_after_a_delete() {
    use registry_core::VersionSelector;
    with_store(|store, _| async move {
        let text = "{\"type\":\"fixed\",\"name\":\"Deleted\",\"size\":6}";
        let (_, first) = reregister(&store, "deleted-value", text).await;
        let (calls, again) = reregister(&store, "deleted-value", text).await;
        assert_eq!((calls, again.version), (1, first.version));
        let deleter = cold_instance(&store);
        let deleted = deleter.delete_version("deleted-value", VersionSelector::Number(first.version), false).await;
        deleted.unwrap_or_else(|e| panic!("{e}"));
        let (_, reborn) = reregister(&store, "deleted-value", text).await;
        assert_eq!((reborn.id, reborn.version), (first.id, Version(2)), "a new version, the schema's ID");
        let rows = store.versions(&subject("deleted-value")).await.unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(rows.iter().map(|r| (r.version.0, r.deleted)).collect::<Vec<_>>(), [(2, false)], "version 1 purged");
        let (from_rows, found) = reregister(&store, "deleted-value", text).await;
        assert_eq!(found.version, Version(2));
        let (recorded, found) = reregister(&store, "deleted-value", text).await;
        assert_eq!(found.version, Version(2));
        println!(
            "re-register after a delete and a new version: {from_rows} calls (rows, then the record), then {recorded}"
        );
        assert_eq!([from_rows, recorded], [3, 1]);
    })
    .await;
}

#[tokio::test]
async fn registry_calls_in_a_named_context_on_a_cold_instance() {
    with_store(|store, _| async move {
        let team = Context::parse(".team").unwrap_or_else(|e| panic!("{e}"));
        let (default, default_warm) = registry_costs_in(&store, &Context::DEFAULT, 1, 1, 0).await;
        // Schemas the default context does not hold: get by guid finds .team's ID on the guid item.
        let (named, named_warm) = registry_costs_in(&store, &team, 1, 1, 2).await;
        let (many, _) = registry_costs_in(&store, &team, 40, 120, 3).await;
        println!("AWS calls per operation through the registry, cold instance [register new, re-register, lookup, get by id, get by guid]: default context {default:?} (warm by id, by guid {default_warm:?}), .team {named:?} (warm {named_warm:?}), .team with 40 other subjects and the schema in 121 {many:?}");
        assert_eq!(named, default, "every operation, get by guid too, costs the same in .team");
        assert_eq!(named, many, "calls must not depend on the number of subjects");
        assert_eq!(named_warm[0], default_warm[0]);
    })
    .await;
}

fn carried(
    found: Result<Option<registry_core::GuidCarried>, registry_core::StoreError>,
) -> Option<(registry_core::Fingerprint, Context, SchemaId)> {
    found.unwrap_or_else(|e| panic!("{e}")).map(|found| (found.fingerprint, found.context, found.id))
}

/// Get by guid of a schema written in `context` as before guid items carried IDs
/// ([`write_as_before`]), then after its registration under another subject there (which reuses
/// the bound ID): the calls each cost, each answer asserted to name the schema's ID in `context`.
async fn get_by_guid_before_and_after_a_registration(store: &AwsStore, context: &Context, name: &str) -> [u64; 2] {
    let schema = body(&format!("{{\"type\":\"fixed\",\"name\":\"{name}\",\"size\":2}}"));
    let (fp, guid) = (schema.fingerprint(), Guid::of(&schema));
    let id = write_as_before(store, &context.qualify("old-value"), &schema, true, None).await;
    let (old_way, found) = calls_of(store, store.carried_id_for_guid(&guid)).await;
    assert_eq!(carried(found), Some((fp, context.clone(), id)));
    let (again, _) = register(store, &subject(&context.qualify("new-value")), &schema).await;
    assert_eq!(again, id, "the bound ID is reused");
    let (new_way, found) = calls_of(store, store.carried_id_for_guid(&guid)).await;
    assert_eq!(carried(found), Some((fp, context.clone(), id)));
    [old_way, new_way]
}

/// A table written before guid items carried the ID (bind_guid, allocate_id, create_version, as
/// the registry wrote them) keeps answering get by guid, the longer way (GetItem guid, GetItem
/// fingerprint, Query of the ID's partition), until the schema's next registration gives the
/// guid item its ID.
#[tokio::test]
async fn guid_items_without_the_id_still_resolve() {
    with_store(|store, _| async move {
        let [old_way, new_way] = get_by_guid_before_and_after_a_registration(&store, &Context::DEFAULT, "Old").await;
        println!("get by guid on an item without the ID: {old_way} calls; after a registration: {new_way}");
        assert_eq!([old_way, new_way], [3, 1]);
    })
    .await;
}

/// The same in place for a schema held only in a named context (whose ID guid items did not
/// carry before): the longer way (GetItem guid, GetItem default binding, Query of the listed
/// contexts, GetItem the context's binding, Query of its ID partition) until the schema's next
/// registration there gives the guid item the context's ID.
#[tokio::test]
async fn guid_items_without_a_named_contexts_id_still_resolve() {
    with_store(|store, _| async move {
        let team = Context::parse(".team").unwrap_or_else(|e| panic!("{e}"));
        let [old_way, new_way] = get_by_guid_before_and_after_a_registration(&store, &team, "OldTeam").await;
        println!("get by guid in .team on an item without its ID: {old_way} calls; after a registration: {new_way}");
        assert_eq!([old_way, new_way], [5, 1]);
    })
    .await;
}

/// The usage marker costs one write per subject per day for the whole fleet, not one per cold
/// instance: the write context a lookup reads anyway brings the stored marker, so after one
/// instance wrote today's, the others write nothing.
#[tokio::test]
async fn a_usage_marker_written_by_one_instance_spares_the_others() {
    use registry_core::LookupOptions;
    with_store(|store, _| async move {
        // `dormant`'s only version was registered in 2023 (so its registration is no activity today).
        let text = "{\"type\":\"fixed\",\"name\":\"Dormant\",\"size\":3}";
        let id = write_as_before(&store, "dormant", &body(text), false, None).await;
        let lookup = |registry: registry_core::Registry| async move {
            registry.lookup("dormant", avro(text), LookupOptions::default()).await.map(|found| found.id)
        };
        let (first, found) = calls_of(&store, lookup(cold_instance(&store))).await;
        assert_eq!(found.unwrap_or_else(|e| panic!("{e}")), id);
        let (second, found) = calls_of(&store, lookup(cold_instance(&store))).await;
        assert_eq!(found.unwrap_or_else(|e| panic!("{e}")), id);
        let today = registry_core::registry::epoch_day(std::time::SystemTime::now());
        assert_eq!(store.last_used(&subject("dormant")).await.unwrap_or_else(|e| panic!("{e}")), Some(today));
        println!("cold lookups of a subject last registered in 2023: first instance {first} calls, second {second}");
        // Query rows, BatchGetItem config (with the marker), UpdateItem marker; then no marker write.
        assert_eq!([first, second], [3, 2]);
    })
    .await;
}

/// Reads in a read region of a multi-region registry, through the applications its function
/// serves (`registry_http::regional::app` over a cold registry on `CachedStore<RegionalStore>`, the
/// home's on `CachedStore<AwsStore>` of the home region), two regions of the emulator kept apart,
/// replicated by the test-only replicator when the test says.
mod read_region {
    use super::support;
    use axum::body::Body;
    use axum::http::{Method, Request, StatusCode};
    use registry_core::{CachedStore, Registry, RegistrySettings, Store};
    use registry_store_aws::AwsStore;
    use registry_store_aws::regions::RegionalStore;
    use registry_store_aws::testing::replicator::{Replicator, Site};
    use serde_json::{Value, json};
    use std::sync::Arc;
    use tower::ServiceExt;

    const HOME: &str = "us-east-1";
    const READ: &str = "eu-west-1";

    /// The home and read sites (one table name, a bucket each), deleted after `test`.
    async fn with_regions<F, Fut>(test: F)
    where
        F: FnOnce(Site, Site) -> Fut,
        Fut: std::future::Future<Output = ()>,
    {
        support::with_regions("calls-regions", HOME, READ, test).await
    }

    /// A cold instance's application over `store` (the function's wiring: nothing in memory yet).
    fn cold_app(store: impl Store + 'static) -> axum::Router {
        let registry = Registry::new(Arc::new(CachedStore::new(store)), RegistrySettings::default());
        registry_http::app(registry, registry_http::AppOptions::default())
    }

    async fn call(app: axum::Router, method: Method, path: &str, body: Option<&Value>) -> (StatusCode, Value) {
        let mut request = Request::builder().method(method).uri(path);
        if body.is_some() {
            request = request.header("content-type", "application/vnd.schemaregistry.v1+json");
        }
        let body = body.map_or_else(Body::empty, |b| Body::from(b.to_string()));
        let request = request.body(body).unwrap_or_else(|e| panic!("{e}"));
        let response = app.oneshot(request).await.unwrap_or_else(|never| match never {});
        let status = response.status();
        let bytes = axum::body::to_bytes(response.into_body(), usize::MAX).await.unwrap_or_else(|e| panic!("{e}"));
        (status, serde_json::from_slice(&bytes).unwrap_or(Value::Null))
    }

    /// The reads measured: by ID, a version by number, `latest`, a lookup.
    fn reads(id: i64, schema: &str) -> Vec<(&'static str, Method, String, Option<Value>)> {
        vec![
            ("GET /schemas/ids/{id}", Method::GET, format!("/schemas/ids/{id}"), None),
            ("GET /subjects/{s}/versions/1", Method::GET, "/subjects/orders-value/versions/1".into(), None),
            ("GET /subjects/{s}/versions/latest", Method::GET, "/subjects/orders-value/versions/latest".into(), None),
            (
                "POST /subjects/{s} (lookup)",
                Method::POST,
                "/subjects/orders-value".into(),
                Some(json!({"schema": schema})),
            ),
        ]
    }

    /// Calls of each read on a cold instance: at home `[home]`; in the read region `[local, home]`.
    async fn costs(home: &Site, read: &Site, id: i64, schema: &str) -> (Vec<u64>, Vec<[u64; 2]>) {
        let (mut at_home, mut in_read) = (Vec::new(), Vec::new());
        for (name, method, path, body) in reads(id, schema) {
            let store = home.store();
            let (status, answer) = call(cold_app(store.clone()), method.clone(), &path, body.as_ref()).await;
            assert_eq!(status, StatusCode::OK, "{name} at home: {answer}");
            assert_eq!(answer["id"].as_i64().or(Some(id)), Some(id), "{name} at home: {answer}");
            at_home.push(store.calls().get());

            let writes: AwsStore = home.store().fenced_by(HOME);
            let reads = RegionalStore::new(read.store(), writes.clone());
            let app = registry_http::regional::app(cold_app(reads.clone()), cold_app(writes));
            let (status, answer) = call(app, method, &path, body.as_ref()).await;
            assert_eq!(status, StatusCode::OK, "{name} in the read region: {answer}");
            assert_eq!(answer["id"].as_i64().or(Some(id)), Some(id), "{name} in the read region: {answer}");
            in_read.push([reads.local().calls().get(), reads.home().calls().get()]);
        }
        (at_home, in_read)
    }

    /// Replicated, a read in the read region makes the calls it makes at home, all to the local
    /// region; not yet replicated, it is answered by the home region for a few more calls there.
    #[tokio::test]
    async fn reads_in_a_read_region_cost_what_they_cost_at_home_once_replicated() {
        with_regions(|home, read| async move {
            let schema = r#"{"type":"record","name":"Order","fields":[{"name":"id","type":"string"}]}"#;
            let registering = cold_app(home.store().fenced_by(HOME));
            let body = json!({"schema": schema});
            let (status, registered) =
                call(registering, Method::POST, "/subjects/orders-value/versions", Some(&body)).await;
            let id = registered["id"].as_i64().unwrap_or_else(|| panic!("{status} {registered}"));

            let (at_home, fallback) = costs(&home, &read, id, schema).await;
            assert!(Replicator::default().replicate(&home, &read).await > 0);
            let (at_home_again, replicated) = costs(&home, &read, id, schema).await;
            let names: Vec<&str> = reads(id, schema).iter().map(|(name, ..)| *name).collect();
            println!(
                "AWS calls per read {names:?}: at home {at_home:?}; read region [local, home] replicated \
                 {replicated:?}, not yet replicated {fallback:?}"
            );
            assert_eq!(at_home, at_home_again);
            let replicated_local: Vec<u64> = replicated.iter().map(|[local, _]| *local).collect();
            assert_eq!(replicated_local, at_home, "replicated: the calls a home read makes");
            assert!(replicated.iter().all(|[_, home]| *home == 0), "replicated: nothing asked of the home region");
            // At home, cold: by ID, a Query of the ID's partition and the body's GetObject; a
            // version (by number or `latest`), the subject's rows (Query), its settings
            // (BatchGetItem) and the body; a lookup, the rows and the settings (the posted body
            // is the answer's).
            assert_eq!(at_home, [2, 3, 3, 2]);
            // Not yet replicated. The local application reads the local replica alone and
            // answers 404: by ID after the ID's Query misses (1 call), a version or a lookup after
            // finding no row of the subject (3 calls, the named contexts' listing searched too).
            // The home application then answers with exactly the calls it makes at home: the
            // home is asked once per request, nothing is read there twice.
            assert_eq!(fallback, [[1, 2], [3, 3], [3, 3], [3, 2]]);
        })
        .await;
    }
}

/// AWS calls of one `POST /schemas/search/field` through the whole app on a cold instance, scanning
/// `max_subjects` subjects.
async fn search_calls(store: &AwsStore, max_subjects: usize) -> u64 {
    use tower::ServiceExt;
    let app = registry_http::app(cold_instance(store), registry_http::AppOptions::default());
    let body = format!(r#"{{"field":"id","max_subjects":{max_subjects},"limit":1000,"subject_prefix":"search-"}}"#);
    let request = axum::http::Request::post("/schemas/search/field")
        .header("content-type", "application/json")
        .body(axum::body::Body::from(body))
        .unwrap_or_else(|e| panic!("{e}"));
    let (calls, response) = calls_of(store, app.oneshot(request)).await;
    let response = response.unwrap_or_else(|never| match never {});
    assert_eq!(response.status(), 200);
    let bytes = axum::body::to_bytes(response.into_body(), 1 << 24).await.unwrap_or_else(|e| panic!("{e}"));
    let answer: serde_json::Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(answer["subjects_scanned"], max_subjects, "{answer}");
    calls
}

/// A field search reads a bounded number of subjects, whatever the registry holds: its calls grow
/// with `max_subjects` by a fixed cost per subject scanned (the versions Query, the config read and
/// the body), not with the subjects it does not scan.
#[tokio::test]
async fn a_field_search_costs_a_fixed_number_of_calls_per_subject_scanned() {
    with_store(|store, _| async move {
        let seed = cold_instance(&store);
        let register = |range: std::ops::Range<usize>| {
            let seed = &seed;
            async move {
                for n in range {
                    let subject = format!("search-{n:03}");
                    let schema = format!(r#"{{"type":"record","name":"S{n}","fields":[{{"name":"id","type":"long"}}]}}"#);
                    let registered = seed.register(&subject, avro(&schema), registry_core::RegisterOptions::default());
                    registered.await.unwrap_or_else(|e| panic!("{e}"));
                }
            }
        };
        register(0..40).await;
        let (ten, twenty) = (search_calls(&store, 10).await, search_calls(&store, 20).await);
        register(40..80).await;
        let (ten_of_80, twenty_of_80) = (search_calls(&store, 10).await, search_calls(&store, 20).await);
        let per_subject = (twenty - ten) / 10;
        println!(
            "AWS calls per operation [field search scanning 10, 20 subjects, cold instance]: {ten}, {twenty} of 40 subjects; {ten_of_80}, {twenty_of_80} of 80 ({per_subject} per subject scanned)"
        );
        assert_eq!((ten_of_80, twenty_of_80), (ten, twenty), "the subjects not scanned cost nothing");
        assert_eq!(twenty - ten, per_subject * 10, "each subject scanned costs the same");
        assert!(per_subject <= 4, "{per_subject} calls per subject scanned");
    })
    .await;
}
