//! How a field name, a type name or a schema text matches a search query, as AxonOps defines the
//! modes: `exact` (naming-convention variants, case-insensitive), `fuzzy` (normalized Levenshtein
//! similarity at or above a threshold) and `regex`. Regexes are compiled with a size limit and
//! the `regex` crate matches in linear time, so a hostile pattern costs bounded time.

use regex::{Regex, RegexBuilder};
use std::fmt;

/// Largest compiled regex (bytes of program), well above any sensible field pattern.
const REGEX_SIZE_LIMIT: usize = 1 << 20;
/// Longest query accepted.
pub const MAX_QUERY_CHARS: usize = 1000;

/// A query that cannot be used (HTTP 400).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MatchError(pub String);

impl fmt::Display for MatchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// How `POST /schemas/search/field` compares names.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum FieldMode {
    #[default]
    Exact,
    Fuzzy,
    Regex,
}

impl FieldMode {
    /// `exact`, `fuzzy` or `regex`.
    pub fn parse(text: &str) -> Result<Self, MatchError> {
        match text {
            "" | "exact" => Ok(FieldMode::Exact),
            "fuzzy" => Ok(FieldMode::Fuzzy),
            "regex" => Ok(FieldMode::Regex),
            other => Err(MatchError(format!("unknown mode '{other}': use exact, fuzzy or regex"))),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FieldMode::Exact => "exact",
            FieldMode::Fuzzy => "fuzzy",
            FieldMode::Regex => "regex",
        }
    }
}

/// A compiled query: `score` answers the match score (1.0 for exact and regex) or `None`.
#[derive(Debug, Clone)]
pub enum Matcher {
    /// Any of these lower-case spellings.
    Variants(Vec<String>),
    /// Case-insensitive whole-string equality.
    Equal(String),
    /// Case-insensitive substring.
    Contains(String),
    Fuzzy {
        query: String,
        threshold: f64,
    },
    Pattern(Regex),
}

impl Matcher {
    /// The field-name matcher of `query` in `mode`.
    pub fn field(query: &str, mode: FieldMode, threshold: f64) -> Result<Self, MatchError> {
        checked(query)?;
        Ok(match mode {
            FieldMode::Exact => Matcher::Variants(variants(query)),
            FieldMode::Fuzzy => Matcher::Fuzzy { query: query.to_lowercase(), threshold },
            FieldMode::Regex => Matcher::Pattern(compile(query)?),
        })
    }

    /// The type matcher: the type name exactly (case-insensitive), or a regex.
    pub fn type_name(query: &str, regex: bool) -> Result<Self, MatchError> {
        checked(query)?;
        Ok(if regex { Matcher::Pattern(compile(query)?) } else { Matcher::Equal(query.to_lowercase()) })
    }

    /// The schema-text matcher: a substring (case-insensitive), or a regex.
    pub fn text(query: &str, regex: bool) -> Result<Self, MatchError> {
        checked(query)?;
        Ok(if regex { Matcher::Pattern(compile(query)?) } else { Matcher::Contains(query.to_lowercase()) })
    }

    /// The score of `candidate`, when it matches.
    pub fn score(&self, candidate: &str) -> Option<f64> {
        match self {
            Matcher::Variants(spellings) => {
                let lower = candidate.to_lowercase();
                spellings.contains(&lower).then_some(1.0)
            }
            Matcher::Equal(wanted) => (candidate.to_lowercase() == *wanted).then_some(1.0),
            Matcher::Contains(wanted) => candidate.to_lowercase().contains(wanted.as_str()).then_some(1.0),
            Matcher::Fuzzy { query, threshold } => {
                let score = similarity(query, &candidate.to_lowercase());
                (score >= *threshold).then_some(score)
            }
            Matcher::Pattern(regex) => regex.is_match(candidate).then_some(1.0),
        }
    }
}

fn checked(query: &str) -> Result<(), MatchError> {
    if query.is_empty() {
        return Err(MatchError("the query must not be empty".into()));
    }
    if query.chars().count() > MAX_QUERY_CHARS {
        return Err(MatchError(format!("the query is longer than {MAX_QUERY_CHARS} characters")));
    }
    Ok(())
}

fn compile(pattern: &str) -> Result<Regex, MatchError> {
    RegexBuilder::new(pattern)
        .size_limit(REGEX_SIZE_LIMIT)
        .build()
        .map_err(|error| MatchError(format!("invalid regex: {error}")))
}

/// The words of a name written in any of the usual conventions (`userName`, `user_name`,
/// `UserName`, `user-name`), lower-case.
fn words(name: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for c in name.chars() {
        if c == '_' || c == '-' || c == ' ' || c == '.' {
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = false;
            continue;
        }
        if c.is_uppercase() && previous_lower && !current.is_empty() {
            words.push(std::mem::take(&mut current));
        }
        previous_lower = c.is_lowercase() || c.is_ascii_digit();
        current.extend(c.to_lowercase());
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// `name` in snake_case (`userName` → `user_name`): how the diff pairs fields across versions.
pub fn snake_case(name: &str) -> String {
    words(name).join("_")
}

/// The lower-case spellings of `name` in snake_case, camelCase, PascalCase and kebab-case.
fn variants(name: &str) -> Vec<String> {
    let words = words(name);
    let joined = words.concat();
    let mut out = vec![name.to_lowercase(), words.join("_"), words.join("-"), joined];
    out.sort();
    out.dedup();
    out
}

/// `1 - distance / longer length`, over characters.
fn similarity(a: &str, b: &str) -> f64 {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let longest = a.len().max(b.len());
    if longest == 0 {
        return 1.0;
    }
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = (above + 1).min(row[j] + 1).min(diagonal + usize::from(ca != cb));
            diagonal = above;
        }
    }
    1.0 - row[b.len()] as f64 / longest as f64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_matches_naming_variants() {
        let matcher = Matcher::field("userName", FieldMode::Exact, 0.6).unwrap_or_else(|e| panic!("{e}"));
        for name in ["user_name", "UserName", "user-name", "USERNAME", "username"] {
            assert_eq!(matcher.score(name), Some(1.0), "{name}");
        }
        assert_eq!(matcher.score("user_names"), None);
    }

    #[test]
    fn fuzzy_scores_by_edit_distance() {
        let matcher = Matcher::field("customer_id", FieldMode::Fuzzy, 0.8).unwrap_or_else(|e| panic!("{e}"));
        assert!(matcher.score("customer_ids").is_some_and(|s| s > 0.9 && s < 1.0));
        assert_eq!(matcher.score("order_total"), None);
    }

    #[test]
    fn bad_regex_and_empty_query_are_refused() {
        assert!(Matcher::field("(", FieldMode::Regex, 0.0).is_err());
        assert!(Matcher::type_name("", false).is_err());
        assert_eq!(FieldMode::parse("glob"), Err(MatchError("unknown mode 'glob': use exact, fuzzy or regex".into())));
    }

    #[test]
    fn snake_case_of_conventions() {
        assert_eq!(snake_case("userName"), "user_name");
        assert_eq!(snake_case("UserName"), "user_name");
        assert_eq!(snake_case("user-name"), "user_name");
        assert_eq!(similarity("kitten", "sitting"), 1.0 - 3.0 / 7.0);
    }
}
