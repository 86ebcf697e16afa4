//! AWS calls per registry operation, counted by the store's interceptor, must not grow with the
//! number of subjects. Prints the figures (`cargo test -p registry-store-aws --test calls -- --nocapture`).

mod support;

use registry_core::{Guid, SchemaBody, SchemaId, Store, Subject, Version};
use registry_store_aws::AwsStore;
use support::{body, row, subject, with_store};

/// Register (new or existing) as the registry does it: lookup under the subject, body, guid, ID, version.
async fn register(store: &AwsStore, subject: &Subject, body: &SchemaBody) -> (SchemaId, Version) {
    let fp = body.fingerprint();
    let rows = store.versions(subject).await.unwrap_or_else(|e| panic!("{e}"));
    if let Some(found) = rows.iter().find(|r| r.fingerprint == fp && !r.deleted) {
        return (found.id, found.version);
    }
    store.put_body(&fp, body).await.unwrap_or_else(|e| panic!("{e}"));
    store.bind_guid(&Guid::of(body), &fp).await.unwrap_or_else(|e| panic!("{e}"));
    let id = match store.id_for_fingerprint(&fp).await.unwrap_or_else(|e| panic!("{e}")) {
        Some(id) => id,
        None => store.allocate_id(&fp).await.unwrap_or_else(|e| panic!("{e}")),
    };
    let next = rows.last().map_or(1, |r| r.version.0 + 1);
    store
        .create_version(&row(subject.as_str(), next, id.0, fp), &registry_core::Preconditions::default())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (id, Version(next))
}

/// Lookup under a subject: the subject's rows, then the body of the match.
async fn lookup(store: &AwsStore, subject: &Subject, body: &SchemaBody) -> Option<SchemaId> {
    let fp = body.fingerprint();
    let rows = store.versions(subject).await.unwrap_or_else(|e| panic!("{e}"));
    let found = rows.iter().find(|r| r.fingerprint == fp && !r.deleted)?;
    store.get_body(&found.fingerprint).await.unwrap_or_else(|e| panic!("{e}"))?;
    Some(found.id)
}

/// Get by id as the registry does it on a cold instance: id → fingerprint while a row carries
/// the ID (one read), then the body.
async fn get_by_id(store: &AwsStore, id: SchemaId) -> Option<SchemaBody> {
    let fp = store.fingerprint_for_carried_id(id).await.unwrap_or_else(|e| panic!("{e}"))?;
    store.get_body(&fp).await.unwrap_or_else(|e| panic!("{e}"))
}

/// Get by guid as the registry does it: guid → fingerprint → id, a row carrying it, the body.
async fn get_by_guid(store: &AwsStore, guid: &Guid) -> Option<SchemaId> {
    let fp = store.fingerprint_for_guid(guid).await.unwrap_or_else(|e| panic!("{e}"))?;
    let id = store.id_for_fingerprint(&fp).await.unwrap_or_else(|e| panic!("{e}"))?;
    store.fingerprint_for_carried_id(id).await.unwrap_or_else(|e| panic!("{e}"))?;
    store.get_body(&fp).await.unwrap_or_else(|e| panic!("{e}"))?;
    Some(id)
}

/// Calls made by `op`.
async fn count<T>(store: &AwsStore, op: impl std::future::Future<Output = T>) -> (u64, T) {
    let before = store.calls().get();
    let out = op.await;
    (store.calls().get() - before, out)
}

/// (register new, re-register, lookup, get by id, get by guid) with `existing` subjects already
/// registered and the schema then shared by `sharing` more.
async fn costs(store: &AwsStore, existing: usize, sharing: usize, round: usize) -> [u64; 5] {
    for i in 0..existing {
        register(store, &subject(&format!("filler-{round}-{i}")), &body(&format!("\"filler-{round}-{i}\""))).await;
    }
    let target = subject(&format!("orders-{round}-value"));
    let schema = body(&format!("{{\"type\":\"fixed\",\"name\":\"F{round}\",\"size\":4}}"));
    let (new_calls, (id, _)) = count(store, register(store, &target, &schema)).await;
    let (again_calls, (again_id, _)) = count(store, register(store, &target, &schema)).await;
    assert_eq!(again_id, id);
    let (lookup_calls, found) = count(store, lookup(store, &target, &schema)).await;
    assert_eq!(found, Some(id));
    // The schema is then shared by `sharing` more subjects (a common key schema, say): reads by
    // ID and guid must not read every subject that carries it (over 100 carriers would take a
    // second BatchGetItem).
    for i in 0..sharing {
        let (shared_id, _) = register(store, &subject(&format!("shared-{round}-{i}")), &schema).await;
        assert_eq!(shared_id, id);
    }
    let (get_calls, got) = count(store, get_by_id(store, id)).await;
    let (guid_calls, by_guid) = count(store, get_by_guid(store, &Guid::of(&schema))).await;
    assert_eq!(by_guid, Some(id));
    assert_eq!(got, Some(schema));
    [new_calls, again_calls, lookup_calls, get_calls, guid_calls]
}

#[tokio::test]
async fn calls_per_operation_do_not_grow_with_subjects() {
    with_store(|store, _| async move {
        let few = costs(&store, 1, 1, 0).await;
        let many = costs(&store, 40, 120, 1).await;
        println!("AWS calls per operation [register new, re-register, lookup, get by id, get by guid]: {few:?} (1 other subject, the schema in 2 subjects), {many:?} (40 other subjects, the schema in 121)");
        assert_eq!(few, many, "calls must not depend on the number of subjects");
        // Register new: Query rows, S3 PutObject body, PutItem guid, GetItem fingerprint, then
        // allocation (GetItem counter, S3 PutObject ledger claim, TransactWriteItems), TransactWriteItems row.
        // Get by id: one Query of the ID's partition (its binding and first edge), S3 GetObject.
        // Get by guid: GetItem guid, GetItem fingerprint, the Query of the ID's partition, S3 GetObject.
        assert_eq!(few, [8, 1, 2, 2, 4]);
    })
    .await;
}

#[tokio::test]
async fn each_store_call_is_one_aws_call_except_allocation() {
    with_store(|store, _| async move {
        let fp = body("\"x\"").fingerprint();
        let (allocate, _) = count(&store, store.allocate_id(&fp)).await;
        let (create, _) = count(&store, store.create_version(&row("s", 1, 1, fp), &registry_core::Preconditions::default())).await;
        let (get, _) = count(&store, store.get_version(&subject("s"), Version(1))).await;
        let (soft, _) = count(&store, store.set_version_deleted(&subject("s"), Version(1), true)).await;
        let (hard, _) = count(&store, store.delete_version(&subject("s"), Version(1))).await;
        let guid = Guid::of(&body("\"x\""));
        let (bind_guid, _) = count(&store, store.bind_guid(&guid, &fp)).await;
        let (by_guid, _) = count(&store, store.fingerprint_for_guid(&guid)).await;
        println!(
            "allocate_id {allocate}, create_version {create}, get_version {get}, soft delete {soft}, hard delete {hard}, bind_guid {bind_guid}, fingerprint_for_guid {by_guid}"
        );
        // Allocation: GetItem counter, the ledger claim (S3 PutObject), TransactWriteItems.
        assert_eq!([allocate, create, get, soft, hard, bind_guid, by_guid], [3, 1, 1, 1, 2, 1, 1]);
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
        let (first, answer) = count(&store, cold.schema_by_id(id.0)).await;
        let (again, _) = count(&store, cold.schema_by_id(id.0)).await;
        assert_eq!(answer.unwrap_or_else(|e| panic!("{e}")).id, id);
        let (missing, answer) = count(&store, cold.schema_by_id(id.0 + 1)).await;
        assert!(answer.is_err(), "an unknown ID is 40403");
        // An ID allocated by a registration that crashed before its commit: bound, carried by no row.
        let orphan = store.allocate_id(&body("\"bytes\"").fingerprint()).await.unwrap_or_else(|e| panic!("{e}"));
        let (uncarried, answer) = count(&store, cold.schema_by_id(orphan.0)).await;
        assert!(answer.is_err(), "an ID no row carries is 40403");
        println!("GET /schemas/ids/{{id}}: cold {first}, warm {again}, unknown {missing}, uncarried {uncarried}");
        assert_eq!([first, again, missing, uncarried], [2, 0, 1, 1]);
    })
    .await;
}
