//! CONTEXTS section: each context has its own ID space. Store-level cases check the `_in` calls
//! directly; a registry-level race registers into two contexts at once.

use super::StoreTestExt;
use super::{hard_delete, row, stored_body, unique_name};
use crate::model::{Context, SchemaId, Subject, Version};
use crate::registry::{NewSchema, RegisterOptions, Registry, RegistrySettings};
use crate::store::{IdRowsPage, Preconditions, Store, StoreError};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A named context no other case, run or process uses.
pub fn unique_context(case: &str) -> Context {
    Context::parse(&unique_name(case)).expect("generated context names are valid")
}

/// `name` in `context`.
fn subject_in(context: &Context, name: &str) -> Subject {
    Subject::new(context.qualify(name)).expect("generated subject names are valid")
}

/// The same schema in two fresh contexts gets an ID from each context's own counter (both start
/// at 1), one ID names different schemas in two contexts, bindings and `bind_id` clashes (with an
/// ID a row carries) are per context, and the default context's bindings are untouched.
pub async fn contexts_have_independent_id_spaces(store: &dyn Store) {
    let (a, b) = (unique_context("ctx-a"), unique_context("ctx-b"));
    let (shared, _) = stored_body(store, &unique_name("ctx-shared")).await;
    let (only_a, _) = stored_body(store, &unique_name("ctx-only-a")).await;
    let (only_b, _) = stored_body(store, &unique_name("ctx-only-b")).await;

    let in_a = store.allocate_id_in(&a, &shared).await.expect("allocate_id_in a");
    let in_b = store.allocate_id_in(&b, &shared).await.expect("allocate_id_in b");
    assert_eq!((in_a, in_b), (SchemaId(1), SchemaId(1)), "contexts: a fresh context's first id is 1");
    assert_eq!(store.id_for_fingerprint(&shared).await.expect("id_for_fingerprint"), None, "default untouched");
    let again = store.allocate_id_in(&a, &shared).await;
    assert!(matches!(again, Err(StoreError::Conflict(_))), "contexts: bound in a, got {again:?}");

    let second_a = store.allocate_id_in(&a, &only_a).await.expect("allocate_id_in a");
    let second_b = store.allocate_id_in(&b, &only_b).await.expect("allocate_id_in b");
    assert_eq!((second_a, second_b), (SchemaId(2), SchemaId(2)), "contexts: counters advance independently");
    assert_eq!(store.fingerprint_for_id_in(&a, SchemaId(2)).await.expect("fingerprint_for_id_in"), Some(only_a));
    assert_eq!(store.fingerprint_for_id_in(&b, SchemaId(2)).await.expect("fingerprint_for_id_in"), Some(only_b));
    assert_eq!(store.id_for_fingerprint_in(&b, &only_a).await.expect("id_for_fingerprint_in"), None);
    assert_eq!(store.max_id_in(&a).await.expect("max_id_in"), Some(SchemaId(2)));

    let holder = subject_in(&b, &unique_name("ctx-holder"));
    let carrier = row(&holder, 1, SchemaId(2), only_b);
    store.add_version(&carrier).await.expect("create_version in b");
    let clash = store.bind_id_in(&b, SchemaId(2), &only_a).await;
    assert!(matches!(clash, Err(StoreError::Conflict(_))), "contexts: id 2 of b is only_b's, got {clash:?}");
    store.bind_id_in(&a, SchemaId(2), &only_a).await.expect("bind_id_in: same binding again succeeds");
    store.bind_id_in(&b, SchemaId(10), &only_a).await.expect("bind_id_in: a free id of b");
    assert_eq!(store.max_id_in(&b).await.expect("max_id_in"), Some(SchemaId(10)), "bind_id_in raises b only");
    assert_eq!(store.max_id_in(&a).await.expect("max_id_in"), Some(SchemaId(2)));

    let listed = store.list_contexts().await.expect("list_contexts");
    assert!(listed.contains(&a) && listed.contains(&b), "contexts: both listed, got {listed:?}");
    assert!(!listed.contains(&Context::DEFAULT), "contexts: the default context is not in the store's list");
    assert!(listed.windows(2).all(|w| w[0] < w[1]), "contexts: listed in ascending order: {listed:?}");
}

/// Rows are found by ID only in their subject's context; a hard delete unbinds the schema in its
/// own context only; the binding precondition is read in the written subject's context; an
/// unlisted context keeps its counter and is listed again by its next allocation.
pub async fn rows_bindings_and_listing_are_per_context(store: &dyn Store) {
    let none = Preconditions::default();
    let (a, b) = (unique_context("ctx-rows-a"), unique_context("ctx-rows-b"));
    let (fingerprint, _) = stored_body(store, &unique_name("ctx-rows")).await;
    let id_a = store.allocate_id_in(&a, &fingerprint).await.expect("allocate_id_in a");
    let id_b = store.allocate_id_in(&b, &fingerprint).await.expect("allocate_id_in b");
    let (subject_a, subject_b) = (subject_in(&a, "orders"), subject_in(&b, "orders"));
    store
        .create_version(&row(&subject_a, 1, id_a, fingerprint), &none, &crate::CommitHints::default())
        .await
        .expect("create_version a");
    let wrong = Preconditions { binding: Some((fingerprint, SchemaId(id_b.0 + 1))), ..Preconditions::default() };
    let refused =
        store.create_version(&row(&subject_b, 1, id_b, fingerprint), &wrong, &crate::CommitHints::default()).await;
    assert!(matches!(refused, Err(StoreError::Conflict(_))), "contexts: binding read in b, got {refused:?}");
    let right = Preconditions { binding: Some((fingerprint, id_b)), ..Preconditions::default() };
    store
        .create_version(&row(&subject_b, 1, id_b, fingerprint), &right, &crate::CommitHints::default())
        .await
        .expect("create_version b");

    let rows_a = store.rows_with_id_in(&a, id_a).await.expect("rows_with_id_in");
    assert_eq!(rows_a.iter().map(|r| &r.subject).collect::<Vec<_>>(), vec![&subject_a], "contexts: rows of a only");
    let page = IdRowsPage { id: id_b, prefix: "", after: None, limit: 10 };
    let page_b = store.rows_with_id_page_in(&b, page).await.expect("rows_with_id_page_in");
    assert_eq!(page_b.iter().map(|r| &r.subject).collect::<Vec<_>>(), vec![&subject_b], "contexts: rows of b only");
    let prefix_a = a.subject_prefix();
    let other = store.rows_with_id_page_in(&b, IdRowsPage { prefix: &prefix_a, ..page }).await.expect("page");
    assert!(other.is_empty(), "contexts: a prefix of another context finds nothing in b");
    let carried = store.fingerprint_for_carried_id_in(&a, id_a).await.expect("fingerprint_for_carried_id_in");
    assert_eq!(carried, Some(fingerprint));

    hard_delete(store, &subject_a, &[Version(1)]).await.expect("hard delete in a");
    assert_eq!(store.id_for_fingerprint_in(&a, &fingerprint).await.expect("id_for_fingerprint_in"), None);
    assert_eq!(store.fingerprint_for_carried_id_in(&a, id_a).await.expect("carried"), None, "no row of a carries it");
    let kept = store.id_for_fingerprint_in(&b, &fingerprint).await.expect("id_for_fingerprint_in");
    assert_eq!(kept, Some(id_b), "contexts: a hard delete in a leaves b's binding");

    store.unlist_context(&a).await.expect("unlist_context");
    assert!(!store.list_contexts().await.expect("list_contexts").contains(&a), "contexts: a unlisted");
    let next = store.allocate_id_in(&a, &fingerprint).await.expect("allocate_id_in after unlist");
    assert!(next > id_a, "contexts: an unlisted context keeps its counter ({next} after {id_a})");
    assert!(store.list_contexts().await.expect("list_contexts").contains(&a), "contexts: listed again");
}

/// `tasks` registrations at once through a [`Registry`], half into each of two fresh contexts,
/// each half registering the same `tasks / 2` schemas: every context's IDs are exactly
/// 1..=tasks/2 (dense, its own sequence), one ID per schema within a context.
pub async fn race_registrations_in_two_contexts(store: Arc<dyn Store>, tasks: usize) {
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let contexts = [unique_context("race-ctx-a"), unique_context("race-ctx-b")];
    let per_context = tasks / 2;
    let tag = unique_name("race-ctx");
    let handles: Vec<_> = (0..per_context * 2)
        .map(|i| {
            let registry = registry.clone();
            let subject = subject_in(&contexts[i % 2], &format!("{tag}-{}", i / 2));
            let text =
                format!(r#"{{"type":"record","name":"Ctx_{}","fields":[{{"name":"f","type":"string"}}]}}"#, i / 2);
            tokio::spawn(async move {
                let schema = NewSchema { schema: Some(text.clone()), ..NewSchema::default() };
                let record = registry
                    .register(subject.as_str(), schema, RegisterOptions::default())
                    .await
                    .unwrap_or_else(|e| panic!("race: register {subject} failed: {e}"));
                (subject.context(), text, record.id)
            })
        })
        .collect();
    let mut ids: BTreeMap<Context, BTreeMap<String, SchemaId>> = BTreeMap::new();
    for handle in handles {
        let (context, text, id) = handle.await.expect("race task panicked");
        let first = *ids.entry(context).or_default().entry(text).or_insert(id);
        assert_eq!(first, id, "race: one schema got two ids in one context");
    }
    for context in &contexts {
        let mut got: Vec<i32> = ids[context].values().map(|id| id.0).collect();
        got.sort_unstable();
        let dense: Vec<i32> = (1..=per_context as i32).collect();
        assert_eq!(got, dense, "race: the ids of {context} must be its own dense sequence");
    }
}
