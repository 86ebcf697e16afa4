//! ID BOUNDS: a counter an IMPORT pushed to the top of the ID space (before the registry refused
//! explicit IDs above [`SchemaId::MAX_IMPORTED`]) does not wedge allocation in its context.

use super::{stored_body, unique_context};
use crate::model::{Context, SchemaId};
use crate::store::{Store, StoreError};
use registry_schema::Fingerprint;

/// Attempts [`Store::allocate_id_in`] makes room for: the lowering answers `Conflict` on some
/// backends, a retry allocates.
const ATTEMPTS: usize = 4;

/// [`Store::allocate_id_in`], retried on `Conflict` as the registry does.
async fn allocate(store: &dyn Store, context: &Context, fingerprint: &Fingerprint) -> SchemaId {
    for _ in 0..ATTEMPTS {
        match store.allocate_id_in(context, fingerprint).await {
            Ok(id) => return id,
            Err(StoreError::Conflict(_)) => continue,
            Err(other) => panic!("allocate_id_in {context} with the counter at the top: {other}"),
        }
    }
    panic!("allocate_id_in {context}: still Conflict after {ATTEMPTS} attempts");
}

/// A context holding an allocated ID, an ID imported below the bound and one imported at
/// `i32::MAX`: the next allocations continue after the greatest ID at or below the bound, and
/// the ID at the top stays bound to its schema.
pub async fn counter_at_the_top_restarts_below_imported_ids(store: &dyn Store) {
    let context = unique_context("id-top");
    let (first, _) = stored_body(store, "id-top-first").await;
    let (imported, _) = stored_body(store, "id-top-imported").await;
    let (top, _) = stored_body(store, "id-top-top").await;
    assert_eq!(store.allocate_id_in(&context, &first).await.expect("allocate_id_in"), SchemaId(1));
    store.bind_id_in(&context, SchemaId(1000), &imported).await.expect("bind_id_in 1000");
    store.bind_id_in(&context, SchemaId(i32::MAX), &top).await.expect("bind_id_in i32::MAX");
    assert_eq!(store.max_id_in(&context).await.expect("max_id_in"), Some(SchemaId(i32::MAX)));

    let (next, _) = stored_body(store, "id-top-next").await;
    assert_eq!(allocate(store, &context, &next).await, SchemaId(1001), "the allocation after the top");
    let (after, _) = stored_body(store, "id-top-after").await;
    assert_eq!(allocate(store, &context, &after).await, SchemaId(1002), "the allocation after that");
    assert_eq!(store.max_id_in(&context).await.expect("max_id_in"), Some(SchemaId(1002)));
    let kept = store.fingerprint_for_id_in(&context, SchemaId(i32::MAX)).await.expect("fingerprint_for_id_in");
    assert_eq!(kept, Some(top), "the ID imported at the top stays bound to its schema");
    assert_eq!(
        store.id_for_fingerprint_in(&context, &next).await.expect("id_for_fingerprint_in"),
        Some(SchemaId(1001))
    );
}

/// An empty context whose only ID was imported at the top restarts at 1.
pub async fn counter_at_the_top_with_nothing_below_restarts_at_one(store: &dyn Store) {
    let context = unique_context("id-top-alone");
    let (top, _) = stored_body(store, "id-top-alone").await;
    store.bind_id_in(&context, SchemaId(i32::MAX), &top).await.expect("bind_id_in i32::MAX");
    let (next, _) = stored_body(store, "id-top-alone-next").await;
    assert_eq!(allocate(store, &context, &next).await, SchemaId(1), "the allocation after the top");
    assert_eq!(store.fingerprint_for_id_in(&context, SchemaId(i32::MAX)).await.expect("binding"), Some(top));
}

/// A counter pushed to the top a second time, after the first lowering issued IDs one after
/// another right above an ID imported at [`SchemaId::MAX_IMPORTED`]: the second lowering goes past
/// those IDs ([`id_rules::lowering_floor`](crate::id_rules::lowering_floor)), so allocation
/// continues after them and never issues one of them again, and every ID keeps its schema.
pub async fn counter_at_the_top_again_restarts_past_the_ids_issued_after_the_first_lowering(store: &dyn Store) {
    let context = unique_context("id-top-again");
    let (bound, _) = stored_body(store, "id-top-again-bound").await;
    let (top, _) = stored_body(store, "id-top-again-top").await;
    store.bind_id_in(&context, SchemaId::MAX_IMPORTED, &bound).await.expect("bind_id_in MAX_IMPORTED");
    store.bind_id_in(&context, SchemaId(i32::MAX), &top).await.expect("bind_id_in i32::MAX");

    let after_bound = |n: i32| SchemaId(SchemaId::MAX_IMPORTED.0 + n);
    let mut issued = Vec::new();
    for n in 1..=2 {
        let (fingerprint, _) = stored_body(store, &format!("id-top-again-first-{n}")).await;
        assert_eq!(allocate(store, &context, &fingerprint).await, after_bound(n), "after the first lowering");
        issued.push((after_bound(n), fingerprint));
    }

    store.bind_id_in(&context, SchemaId(i32::MAX), &top).await.expect("bind_id_in i32::MAX again");
    assert_eq!(store.max_id_in(&context).await.expect("max_id_in"), Some(SchemaId(i32::MAX)), "at the top again");
    for n in 3..=4 {
        let (fingerprint, _) = stored_body(store, &format!("id-top-again-second-{n}")).await;
        assert_eq!(allocate(store, &context, &fingerprint).await, after_bound(n), "after the second lowering");
        issued.push((after_bound(n), fingerprint));
    }
    assert_eq!(store.max_id_in(&context).await.expect("max_id_in"), Some(after_bound(4)));

    issued.push((SchemaId::MAX_IMPORTED, bound));
    issued.push((SchemaId(i32::MAX), top));
    for (id, fingerprint) in issued {
        let named = store.fingerprint_for_id_in(&context, id).await.expect("fingerprint_for_id_in");
        assert_eq!(named, Some(fingerprint), "ID {id} keeps its schema");
        let side = store.id_for_fingerprint_in(&context, &fingerprint).await.expect("id_for_fingerprint_in");
        assert_eq!(side, Some(id), "the schema of ID {id} keeps its ID");
    }
}
