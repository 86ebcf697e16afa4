//! Scoped listings through a [`Registry`] over the store: a caller's subject prefixes are applied
//! in the store queries, before paging, so every page but the last is full and the pages together
//! are exactly the subjects inside the scope, in order.

use super::StoreTestExt;
use super::store_cases::fresh_id;
use super::{row, unique_name};
use crate::model::{Context, DeletedFilter, Subject, Version, VersionRow};
use crate::registry::{Registry, RegistrySettings, SchemasQuery};
use crate::store::Store;
use crate::subject_scope::SubjectScope;
use std::sync::Arc;

/// `subjects_page`, `rows_with_id_page` and `schema_rows_page` with a two-prefix scope, in pages
/// of two: the same items as reading everything and keeping the scope, and no short page before
/// the end (the scope is not applied after paging).
pub async fn scoped_listings_page_inside_the_scope(store: Arc<dyn Store>) {
    let registry = Registry::new(store.clone(), RegistrySettings::default());
    let base = unique_name("scoped");
    let subject = |suffix: &str| Subject::new(format!("{base}-{suffix}")).expect("subject");
    let (id, fingerprint) = fresh_id(store.as_ref(), &base).await;
    for suffix in ["a.1", "b.1", "a.2", "c.1", "d.1", "a.3", "c.2", "c.3", "b.2"] {
        let created = row(&subject(suffix), 1, id, fingerprint);
        store.add_version(&created).await.expect("create_version");
    }
    store.set_version_deleted(&subject("c.3"), Version(1), true).await.expect("soft delete");
    let scope = SubjectScope::prefixes([format!("{base}-c."), format!("{base}-a.")]);
    let in_scope = |suffixes: &[&str]| suffixes.iter().map(|s| subject(s)).collect::<Vec<_>>();

    let mut pages: Vec<Vec<Subject>> = Vec::new();
    loop {
        let after = pages.last().and_then(|page| page.last());
        let page = registry.subjects_page(&scope, "", DeletedFilter::LiveOnly, after, 2).await.expect("subjects_page");
        let done = page.len() < 2;
        pages.push(page);
        if done {
            break;
        }
    }
    let sizes: Vec<usize> = pages.iter().map(Vec::len).collect();
    assert_eq!(sizes, [2, 2, 1], "full pages until the last");
    assert_eq!(pages.concat(), in_scope(&["a.1", "a.2", "a.3", "c.1", "c.2"]));
    let teams_c = format!("{base}-c");
    let narrowed = registry.subjects_page(&scope, &teams_c, DeletedFilter::IncludeDeleted, None, 10).await;
    assert_eq!(narrowed.expect("subjects_page"), in_scope(&["c.1", "c.2", "c.3"]), "the listing's own prefix");

    let mut rows: Vec<VersionRow> = Vec::new();
    loop {
        let after = rows.last().map(|row| (&row.subject, row.version));
        let page =
            registry.rows_with_id_page(&Context::DEFAULT, id.0, &scope, after, 2).await.expect("rows_with_id_page");
        assert!(!page.is_empty() || rows.len() == 6, "no empty page before the end");
        let done = page.len() < 2;
        rows.extend(page);
        if done {
            break;
        }
    }
    let subjects: Vec<Subject> = rows.into_iter().map(|row| row.subject).collect();
    assert_eq!(subjects, in_scope(&["a.1", "a.2", "a.3", "c.1", "c.2", "c.3"]), "rows by ID inside the scope");

    let query = SchemasQuery { subject_prefix: base.clone(), scope: scope.clone(), ..SchemasQuery::default() };
    let (first, next) = registry.schema_rows_page(&query, None, 2).await.expect("schema_rows_page");
    assert_eq!(first.iter().map(|row| row.subject.clone()).collect::<Vec<_>>(), in_scope(&["a.1", "a.2"]));
    let (second, _) = registry.schema_rows_page(&query, next.as_ref(), 2).await.expect("schema_rows_page");
    assert_eq!(second.iter().map(|row| row.subject.clone()).collect::<Vec<_>>(), in_scope(&["a.3", "c.1"]));
    let nothing = SubjectScope::prefixes(Vec::<String>::new());
    let none = registry.subjects_page(&nothing, "", DeletedFilter::IncludeDeleted, None, 10).await;
    assert!(none.expect("subjects_page").is_empty(), "an empty scope names no subject");
}
