//! JSON records beside their revision (the key store's `keks` and `deks`, the `exporters`): each
//! read selects the record's JSON and revision, in that order, and decodes them.

use crate::LocalStore;
use crate::error::LocalResult;
use registry_core::StoreResult;
use rusqlite::{Connection, OptionalExtension, Params, Row};

/// A record's JSON and revision, decoded into what the store answers.
pub(crate) type Decode<T> = fn(&str, i64) -> LocalResult<T>;

/// The record's columns: its JSON and its revision.
fn columns(row: &Row<'_>) -> rusqlite::Result<(String, i64)> {
    Ok((row.get(0)?, row.get(1)?))
}

/// The record `sql` selects with `params`, if any.
fn read_record<T>(conn: &Connection, sql: &str, params: impl Params, decode: Decode<T>) -> LocalResult<Option<T>> {
    let row = conn.query_row(sql, params, columns).optional()?;
    row.map(|(json, revision)| decode(&json, revision)).transpose()
}

impl LocalStore {
    /// The record `sql` selects with `name` as `?1`, if any: a point read.
    pub(crate) async fn record_named<T: Send + 'static>(
        &self,
        sql: &'static str,
        name: &str,
        decode: Decode<T>,
    ) -> StoreResult<Option<T>> {
        let name = name.to_owned();
        self.read(move |conn| read_record(conn, sql, [&name], decode)).await
    }
}

/// Every record `sql` selects with `params`, in its order.
pub(crate) fn read_records<T>(
    conn: &Connection,
    sql: &str,
    params: impl Params,
    decode: Decode<T>,
) -> LocalResult<Vec<T>> {
    let mut statement = conn.prepare_cached(sql)?;
    let rows = statement.query_map(params, columns)?;
    rows.map(|row| {
        let (json, revision) = row?;
        decode(&json, revision)
    })
    .collect()
}
