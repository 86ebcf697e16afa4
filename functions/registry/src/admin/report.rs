//! `registry report`: subjects by context, then owner, with last registration, last use and live
//! version count, as a table or JSON. Works on the configured store or `--url` (over the API the
//! last-used marker is not exposed, so that column is empty there).

use super::AdminError;
use super::api::Api;
use super::contexts::{Selection, context_of};
use serde::Serialize;
use std::io::Write;

/// Milliseconds per day (the last-used marker counts days since the Unix epoch).
const DAY_MS: i64 = 86_400_000;

/// One subject's row.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Row {
    /// The subject's context (`.` for the default one).
    pub context: String,
    /// The subject as the registry lists it (`:.ctx:name` in a named context).
    pub subject: String,
    /// The latest live version's owner property (`None`: unowned).
    pub owner: Option<String>,
    /// Registration time of the newest version, ms since the Unix epoch.
    pub last_registered_ms: Option<i64>,
    /// Start of the last-used marker's day, ms since the Unix epoch (configured store only).
    pub last_used_ms: Option<i64>,
    /// Live versions.
    pub versions: usize,
}

/// Rows for every selected subject (soft-deleted ones too), ordered by context, then owner
/// (unowned last), then subject.
pub async fn rows(api: &Api, owner_property: &str, selection: &Selection) -> Result<Vec<Row>, AdminError> {
    let mut rows = Vec::new();
    for subject in api.subjects().await?.into_iter().filter(|s| selection.subject(s)) {
        let all = api.versions(&subject, true).await?;
        let live = api.versions(&subject, false).await?;
        let owner = match live.last() {
            Some(version) => {
                let answer = api.version(&subject, *version).await?;
                answer
                    .pointer(&format!("/metadata/properties/{}", escape(owner_property)))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            }
            None => None,
        };
        let last_registered_ms = match all.last() {
            Some(version) => api.version(&subject, *version).await?.get("ts").and_then(|v| v.as_i64()),
            None => None,
        };
        let last_used_ms = match api {
            Api::Local { .. } => api.last_used(&subject).await?.map(|day| i64::from(day) * DAY_MS),
            Api::Remote { .. } => None,
        };
        let context = context_of(&subject).name().to_string();
        rows.push(Row { context, subject, owner, last_registered_ms, last_used_ms, versions: live.len() });
    }
    rows.sort_by(|a, b| {
        (&a.context, a.owner.is_none(), &a.owner, &a.subject).cmp(&(
            &b.context,
            b.owner.is_none(),
            &b.owner,
            &b.subject,
        ))
    });
    Ok(rows)
}

/// JSON pointer escaping of one reference token.
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Writes `rows` as an aligned table (context, owner, subject, versions, last registration, last
/// use; UTC dates).
pub fn write_table(out: &mut impl Write, rows: &[Row]) -> std::io::Result<()> {
    let header = ["CONTEXT", "OWNER", "SUBJECT", "VERSIONS", "LAST REGISTERED", "LAST USED"];
    let cells: Vec<[String; 6]> = rows
        .iter()
        .map(|r| {
            [
                r.context.clone(),
                r.owner.clone().unwrap_or_else(|| "-".to_string()),
                r.subject.clone(),
                r.versions.to_string(),
                r.last_registered_ms.map_or_else(|| "-".to_string(), date),
                r.last_used_ms.map_or_else(|| "-".to_string(), date),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &cells {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let line = |out: &mut dyn Write, row: [&str; 6]| -> std::io::Result<()> {
        let padded: Vec<String> = row.iter().zip(widths).map(|(c, w)| format!("{c:<w$}")).collect();
        writeln!(out, "{}", padded.join("  ").trim_end())
    };
    line(out, header)?;
    for row in &cells {
        line(out, [&row[0], &row[1], &row[2], &row[3], &row[4], &row[5]])?;
    }
    Ok(())
}

/// `YYYY-MM-DD` (UTC) of a time in ms since the Unix epoch (civil-from-days, proleptic Gregorian).
fn date(ms: i64) -> String {
    let (year, month, day) = registry_core::registry::civil_date(ms.div_euclid(DAY_MS));
    format!("{year:04}-{month:02}-{day:02}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_utc_calendar_days() {
        assert_eq!(date(0), "1970-01-01");
        assert_eq!(date(951_782_400_000), "2000-02-29");
        assert_eq!(date(1_767_225_599_000), "2025-12-31");
    }

    #[test]
    fn table_aligns_columns_and_marks_unknowns() {
        let rows = vec![
            Row {
                context: ".".into(),
                subject: "orders".into(),
                owner: Some("team-a".into()),
                last_registered_ms: Some(0),
                last_used_ms: None,
                versions: 2,
            },
            Row {
                context: ".team-a".into(),
                subject: ":.team-a:x".into(),
                owner: None,
                last_registered_ms: None,
                last_used_ms: None,
                versions: 0,
            },
        ];
        let mut out = Vec::new();
        write_table(&mut out, &rows).unwrap_or_else(|e| panic!("{e}"));
        let text = String::from_utf8(out).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "CONTEXT  OWNER   SUBJECT     VERSIONS  LAST REGISTERED  LAST USED");
        assert_eq!(lines[1], ".        team-a  orders      2         1970-01-01       -");
        assert_eq!(lines[2], ".team-a  -       :.team-a:x  0         -                -");
    }
}
