//! `reserved` and `extensions` statements: values grouped per statement as written (Wire keeps
//! each statement), `N`, `N to M`, `N to max`, quoted names; normalized: one value per
//! statement, sorted by start.

use super::index;
use crate::protobuf::source::{self, SourceIndex};

const MAX_FIELD_NUMBER: i32 = 536_870_911;

/// `reserved`/`extensions` statement bodies: ranges grouped by statement as written, names
/// quoted. `tags` are the (range, name) field numbers under `path`; `end_exclusive` for
/// message ranges (enum ranges are inclusive).
pub(super) fn statements(
    index_of: &SourceIndex<'_>,
    normalize: bool,
    path: &[i32],
    tags: (i32, i32),
    ranges: &[(i32, i32)],
    names: &[String],
    end_exclusive: bool,
) -> Vec<String> {
    if ranges.is_empty() && names.is_empty() {
        return Vec::new();
    }
    let max = if end_exclusive { MAX_FIELD_NUMBER } else { i32::MAX };
    let span_of = |extra: &[i32]| {
        let full = [path, extra].concat();
        index_of.span(&full).map(<[i32]>::to_vec)
    };
    let item = |i: usize, (start, end): (i32, i32)| {
        let last = if end_exclusive { end - 1 } else { end };
        let single = match (span_of(&[tags.0, index(i)]), span_of(&[tags.0, index(i), 1])) {
            (Some(whole), Some(start_span)) => whole == start_span,
            _ => start == last,
        };
        match () {
            _ if single || (normalize && start == last) => start.to_string(),
            _ if last >= max => format!("{start} to max"),
            _ => format!("{start} to {last}"),
        }
    };
    let items: Vec<Item> = ranges
        .iter()
        .enumerate()
        .map(|(i, r)| {
            (
                source::span_start(&span_of(&[tags.0, index(i)]).unwrap_or_default()),
                item(i, *r),
                span_of(&[tags.0, index(i)]),
                true,
            )
        })
        .chain(names.iter().enumerate().map(|(i, n)| {
            let span = span_of(&[tags.1, index(i)]);
            (source::span_start(&span.clone().unwrap_or_default()), format!("\"{n}\""), span, false)
        }))
        .collect();
    if normalize {
        let mut keyed: Vec<(i32, String)> = items
            .iter()
            .zip(ranges.iter().map(|r| r.0).chain(std::iter::repeat(i32::MAX)))
            .map(|(item, start)| (start, item.1.clone()))
            .collect();
        keyed.sort();
        return keyed.into_iter().map(|(_, text)| text).collect();
    }
    let mut statements: Vec<(Vec<i32>, bool, Vec<String>)> = index_of
        .children(path)
        .iter()
        .filter_map(|&(p, s)| {
            let tag = p.last().copied();
            (tag == Some(tags.0) || tag == Some(tags.1)).then(|| (s.to_vec(), tag == Some(tags.0), Vec::new()))
        })
        .collect();
    statements.sort_by_key(|(s, _, _)| source::span_start(s));
    let mut loose: Vec<String> = Vec::new();
    for (_, text, span, is_range) in items {
        let home = span
            .and_then(|span| statements.iter_mut().find(|(s, r, _)| *r == is_range && source::span_contains(s, &span)));
        match home {
            Some((_, _, members)) => members.push(text),
            None => loose.push(text),
        }
    }
    let mut out: Vec<String> =
        statements.into_iter().filter(|(_, _, m)| !m.is_empty()).map(|(_, _, m)| m.join(", ")).collect();
    if !loose.is_empty() {
        out.push(loose.join(", "));
    }
    out
}

/// A reserved/extensions value: where it starts in the text, its printed form, its span, and
/// whether it is a number range (else a name).
type Item = ((i32, i32), String, Option<Vec<i32>>, bool);
