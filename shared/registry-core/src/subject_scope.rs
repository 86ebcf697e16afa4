//! The subjects a listing may name: every subject, or only those starting with one of a caller's
//! prefixes (an authenticated principal's scope).
//!
//! Listings apply the scope inside their store queries, before `offset`/`limit`: the subjects
//! starting with one prefix are one contiguous run of names in the stores' order, so a scoped
//! listing reads a few such runs, one after the other, ascending ([`SubjectScope::ranges`]), and
//! pages, streams and counts exactly as an unscoped one does.

/// Which subjects a listing may name.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum SubjectScope {
    /// Every subject.
    #[default]
    All,
    /// Only subjects starting with one of these prefixes: ascending, none a prefix of another
    /// (built by [`SubjectScope::prefixes`]). An empty list names no subject.
    Prefixes(Vec<String>),
}

impl SubjectScope {
    /// The scope of subjects starting with one of `prefixes`, normalised: sorted, and a prefix
    /// that starts with another one dropped (its subjects are already in).
    pub fn prefixes(prefixes: impl IntoIterator<Item = String>) -> Self {
        let mut sorted: Vec<String> = prefixes.into_iter().collect();
        sorted.sort();
        let mut kept: Vec<String> = Vec::with_capacity(sorted.len());
        for prefix in sorted {
            // Names starting with a kept prefix sort right after it, so only the last one can cover this.
            if !kept.last().is_some_and(|last| prefix.starts_with(last.as_str())) {
                kept.push(prefix);
            }
        }
        SubjectScope::Prefixes(kept)
    }

    /// Whether `subject` is inside this scope.
    pub fn contains(&self, subject: &str) -> bool {
        match self {
            SubjectScope::All => true,
            SubjectScope::Prefixes(prefixes) => prefixes.iter().any(|prefix| subject.starts_with(prefix.as_str())),
        }
    }

    /// The prefixes whose runs of names, read in this order, are exactly the subjects inside this
    /// scope that start with `prefix` (a listing's own `subjectPrefix`, `""` for none), ascending
    /// and disjoint: `prefix` itself when the scope holds all of them, else the scope's prefixes
    /// that start with it.
    pub fn ranges(&self, prefix: &str) -> Vec<String> {
        match self {
            SubjectScope::All => vec![prefix.to_string()],
            SubjectScope::Prefixes(prefixes) if prefixes.iter().any(|p| prefix.starts_with(p.as_str())) => {
                vec![prefix.to_string()]
            }
            SubjectScope::Prefixes(prefixes) => prefixes.iter().filter(|p| p.starts_with(prefix)).cloned().collect(),
        }
    }
}

/// Whether every name starting with `range` sorts at or before `after`: a listing resumed after
/// `after` has nothing left to read there.
fn range_is_behind(range: &str, after: &str) -> bool {
    after > range && !after.starts_with(range)
}

/// The first `limit` items of the runs `ranges` names, read one run after the other in their
/// order, skipping the runs wholly behind `after` (the subject a resumed listing stopped at):
/// `read(range, wanted)` reads at most `wanted` items of one run, fewer when the run ends. One
/// range (an unscoped listing) is one read, as without a scope.
pub(crate) async fn read_runs<T, E, F, Fut>(
    ranges: Vec<String>,
    after: Option<&str>,
    limit: usize,
    mut read: F,
) -> Result<Vec<T>, E>
where
    F: FnMut(String, usize) -> Fut,
    Fut: Future<Output = Result<Vec<T>, E>>,
{
    let mut items = Vec::new();
    for range in ranges {
        if items.len() >= limit {
            break;
        }
        if after.is_some_and(|after| range_is_behind(&range, after)) {
            continue;
        }
        let wanted = limit - items.len();
        items.extend(read(range, wanted).await?);
    }
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope(prefixes: &[&str]) -> SubjectScope {
        SubjectScope::prefixes(prefixes.iter().map(|p| p.to_string()))
    }

    #[test]
    fn prefixes_are_sorted_and_nested_ones_dropped() {
        let expected = SubjectScope::Prefixes(vec!["a.".into(), "b".into()]);
        assert_eq!(scope(&["b", "a.x", "a.", "bc", "a.y"]), expected);
        assert!(scope(&["a."]).contains("a.orders"));
        assert!(!scope(&["a."]).contains("b.orders"));
        assert!(!scope(&[]).contains("anything"), "an empty list names nothing");
    }

    #[test]
    fn ranges_intersect_the_scope_with_the_listing_prefix() {
        assert_eq!(SubjectScope::All.ranges("x"), ["x"]);
        let teams = scope(&["team-b.", "team-a.", "shared."]);
        assert_eq!(teams.ranges(""), ["shared.", "team-a.", "team-b."]);
        assert_eq!(teams.ranges("team"), ["team-a.", "team-b."]);
        assert_eq!(teams.ranges("team-a.orders"), ["team-a.orders"], "narrower than a scope prefix");
        assert!(teams.ranges("other").is_empty());
        assert!(scope(&[]).ranges("").is_empty());
    }

    #[test]
    fn a_range_is_behind_a_cursor_past_all_its_names() {
        assert!(range_is_behind("a.", "b"));
        assert!(!range_is_behind("a.", "a.z"), "inside the run");
        assert!(!range_is_behind("b.", "a.z"), "before the run");
        assert!(!range_is_behind("a.", "a."));
    }
}
