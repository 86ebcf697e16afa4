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
