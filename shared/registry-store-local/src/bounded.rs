//! Reads whose size is checked before they are run inline: at most a constant number of rows, or
//! `None` so the caller moves the full read to the blocking pool.

use crate::codec::{self, VERSION_COLUMNS};
use crate::error::LocalResult;
use registry_core::{Subject, VersionRow};
use rusqlite::{Connection, params};

/// Most rows a read run on the async thread may return.
pub(crate) const INLINE_ROWS: usize = 32;

/// Every row of `subject`, ascending, if there are at most `limit`; `None` otherwise.
pub(crate) fn versions_upto(
    conn: &Connection,
    subject: &Subject,
    limit: usize,
) -> LocalResult<Option<Vec<VersionRow>>> {
    let sql = format!("SELECT {VERSION_COLUMNS} FROM versions WHERE subject = ?1 ORDER BY version LIMIT ?2");
    let probe = i64::try_from(limit).unwrap_or(i64::MAX - 1) + 1;
    let mut stmt = conn.prepare_cached(&sql)?;
    let raw =
        stmt.query_map(params![subject.as_str(), probe], codec::raw_version_row)?.collect::<Result<Vec<_>, _>>()?;
    if raw.len() > limit {
        return Ok(None);
    }
    raw.into_iter().map(codec::version_row).collect::<LocalResult<Vec<_>>>().map(Some)
}
