//! The reader/writer walk: a port of Apache Avro Java's `SchemaCompatibility.ReaderWriterCompatibilityChecker`
//! (release 1.11/1.12), including its memo of (reader, writer) pairs, its JSON-pointer locations and its quirks.
//!
//! Logical types are ignored (a `decimal` on `bytes` is `bytes`), names are compared unqualified, aliases are
//! read on the reader side only, and a pair already under check counts as compatible, so recursive types end.

use super::view::{NodeId, View, node_id, resolve, view};
use crate::SchemaError;
use crate::limits::Meter;
use apache_avro::Schema;
use apache_avro::schema::{EnumSchema, FixedSchema, RecordField, RecordSchema};
use std::collections::{HashMap, HashSet};
use std::sync::Arc;

/// Reader/writer pairs open at once before the walk gives up (reported as an aborted check) instead of
/// growing the stack further. Parsed schemas nest at most 128 JSON levels, so real schemas stay far below;
/// 200 keeps a debug build well inside a 2 MiB thread stack (about 4 KiB per level measured).
const MAX_DEPTH: usize = 200;

/// Avro's `SchemaIncompatibilityType`: why a reader cannot decode what a writer wrote.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum IncompatibilityKind {
    /// Two named types whose unqualified names differ and no reader alias names the writer.
    NameMismatch,
    /// Two `fixed` types of different sizes.
    FixedSizeMismatch,
    /// The writer enum has symbols the reader lacks, and the reader enum has no default.
    MissingEnumSymbols,
    /// A reader field absent from the writer record has no default.
    ReaderFieldMissingDefaultValue,
    /// The types cannot be resolved (no promotion applies).
    TypeMismatch,
    /// A writer type matches no branch of the reader union.
    MissingUnionBranch,
}

impl IncompatibilityKind {
    /// Avro's enum constant name, which Confluent prints as `errorType`.
    pub fn as_str(self) -> &'static str {
        match self {
            IncompatibilityKind::NameMismatch => "NAME_MISMATCH",
            IncompatibilityKind::FixedSizeMismatch => "FIXED_SIZE_MISMATCH",
            IncompatibilityKind::MissingEnumSymbols => "MISSING_ENUM_SYMBOLS",
            IncompatibilityKind::ReaderFieldMissingDefaultValue => "READER_FIELD_MISSING_DEFAULT_VALUE",
            IncompatibilityKind::TypeMismatch => "TYPE_MISMATCH",
            IncompatibilityKind::MissingUnionBranch => "MISSING_UNION_BRANCH",
        }
    }
}

/// One finding, as Avro's `SchemaCompatibility.Incompatibility`. Its texts are shared by its copies
/// (a memoised pair's findings are copied wherever the pair recurs), so a copy costs a few words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// What is wrong.
    pub kind: IncompatibilityKind,
    /// JSON pointer into the reader schema (`/fields/1/type`), as `Incompatibility.getLocation()`.
    pub location: Arc<str>,
    /// Avro's detail message (`reader type: INT not compatible with writer type: STRING`, a field name, ...).
    pub message: Arc<str>,
}

/// A schema plus the named types in scope, used to resolve `Schema::Ref` (full name → definition).
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The root schema.
    pub schema: &'a Schema,
    /// Every named type the schema may refer to, by full name.
    pub names: &'a HashMap<String, Schema>,
}

/// Where Java would have thrown (Confluent then answers "Unexpected exception during compatibility check").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Aborted(pub String);

/// Why a walk stopped without an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Stopped {
    /// Where Java would have thrown.
    Aborted(Aborted),
    /// The work budget is spent (see [`crate::limits`]).
    OverBudget(SchemaError),
}

impl From<Aborted> for Stopped {
    fn from(aborted: Aborted) -> Self {
        Stopped::Aborted(aborted)
    }
}

impl From<SchemaError> for Stopped {
    fn from(error: SchemaError) -> Self {
        Stopped::OverBudget(error)
    }
}

/// All findings for `reader` reading data written with `writer`; empty when compatible.
///
/// Each (reader, writer) pair is computed once (memoised, as Java does); each pair visited, each record
/// field matched and each finding copied is charged to `work`. Lookups linear in one node (enum symbols,
/// union branches, by hash) are bounded by the node budget instead.
pub fn reader_writer(reader: Scope<'_>, writer: Scope<'_>, work: &mut Meter) -> Result<Vec<Finding>, Stopped> {
    let mut checker = Checker {
        reader_names: reader.names,
        writer_names: writer.names,
        memo: HashMap::new(),
        unions: HashMap::new(),
        depth: 0,
        work,
    };
    checker.fresh(reader.schema, writer.schema)
}

/// One step of a location, rendered only when a finding is made.
#[derive(Debug, Clone, Copy)]
enum Token {
    Root,
    Word(&'static str),
    Index(usize),
}

#[derive(Debug, Clone)]
enum Memo {
    InProgress,
    Done(Vec<Finding>),
}

type Outcome = Result<Vec<Finding>, Stopped>;

struct Checker<'a, 'w> {
    reader_names: &'a HashMap<String, Schema>,
    writer_names: &'a HashMap<String, Schema>,
    memo: HashMap<(NodeId<'a>, NodeId<'a>), Memo>,
    /// Reader unions indexed by branch key, by the address of their branch list.
    unions: HashMap<usize, HashMap<BranchKey<'a>, Vec<usize>>>,
    depth: usize,
    work: &'w mut Meter,
}

/// What a union branch can be found by: its type and, for named types, its unqualified name or one of
/// its aliases (full name). Only a branch found by one of the writer's keys can read the writer's type.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum BranchKey<'a> {
    Kind(&'static str),
    Named(&'static str, &'a str),
    Alias(&'static str, String),
}

/// The reader types a writer type can be promoted to (Java's `checkReaderWriterCompatibility` rules).
fn promotions(writer: &'static str) -> &'static [&'static str] {
    match writer {
        "INT" => &["INT", "LONG", "FLOAT", "DOUBLE"],
        "LONG" => &["LONG", "FLOAT", "DOUBLE"],
        "FLOAT" => &["FLOAT", "DOUBLE"],
        "STRING" => &["STRING", "BYTES"],
        "BYTES" => &["BYTES", "STRING"],
        "NULL" => &["NULL"],
        "BOOLEAN" => &["BOOLEAN"],
        "DOUBLE" => &["DOUBLE"],
        "ARRAY" => &["ARRAY"],
        "MAP" => &["MAP"],
        _ => &[],
    }
}

/// Java's `Incompatibility.getLocation()`: the root token is dropped, the rest joined as a JSON pointer.
fn pointer(location: &[Token]) -> String {
    let tokens: Vec<String> = location
        .iter()
        .skip(1)
        .map(|token| match token {
            Token::Root => String::new(),
            Token::Word(word) => word.replace('~', "~0").replace('/', "~1"),
            Token::Index(index) => index.to_string(),
        })
        .collect();
    format!("/{}", tokens.join("/"))
}

fn finding(kind: IncompatibilityKind, message: String, location: &[Token]) -> Vec<Finding> {
    vec![Finding { kind, location: pointer(location).into(), message: message.into() }]
}

fn type_mismatch(reader: View<'_>, writer: View<'_>, location: &[Token]) -> Vec<Finding> {
    let message =
        format!("reader type: {} not compatible with writer type: {}", reader.type_name(), writer.type_name());
    finding(IncompatibilityKind::TypeMismatch, message, location)
}

impl<'a> Checker<'a, '_> {
    /// Java's two-argument `getCompatibility`: a new location stack, the shared memo.
    fn fresh(&mut self, reader: &'a Schema, writer: &'a Schema) -> Outcome {
        let mut location = Vec::new();
        self.get(Token::Root, reader, writer, &mut location)
    }

    fn get(&mut self, token: Token, reader: &'a Schema, writer: &'a Schema, location: &mut Vec<Token>) -> Outcome {
        if self.depth >= MAX_DEPTH {
            return Err(Aborted(format!("schema nested deeper than {MAX_DEPTH} levels")).into());
        }
        self.work.charge(1)?;
        let reader = resolve(reader, self.reader_names)?;
        let writer = resolve(writer, self.writer_names)?;
        let (reader_view, writer_view) = (view(reader)?, view(writer)?);
        let key = (node_id(reader, reader_view), node_id(writer, writer_view));
        match self.memo.get(&key) {
            Some(Memo::InProgress) => return Ok(Vec::new()),
            Some(Memo::Done(found)) => {
                self.work.charge(found.len() as u64)?;
                return Ok(found.clone());
            }
            None => {}
        }
        self.memo.insert(key, Memo::InProgress);
        location.push(token);
        self.depth += 1;
        let outcome = self.calculate((reader, reader_view), (writer, writer_view), location);
        self.depth -= 1;
        location.pop();
        let found = outcome?;
        self.work.charge(found.len() as u64)?;
        self.memo.insert(key, Memo::Done(found.clone()));
        Ok(found)
    }

    fn calculate(
        &mut self,
        reader: (&'a Schema, View<'a>),
        writer: (&'a Schema, View<'a>),
        location: &mut Vec<Token>,
    ) -> Outcome {
        let ((reader_schema, reader_view), (writer_schema, writer_view)) = (reader, writer);
        if reader_view.same_type(writer_view) {
            return match (reader_view, writer_view) {
                (View::Array(r), View::Array(w)) => self.get(Token::Word("items"), r, w, location),
                (View::Map(r), View::Map(w)) => self.get(Token::Word("values"), r, w, location),
                (View::Fixed(r), View::Fixed(w)) => {
                    let mut found = check_name(NamedView::of_fixed(r), NamedView::of_fixed(w), location);
                    if r.size != w.size {
                        location.push(Token::Word("size"));
                        let message = format!("expected: {}, found: {}", w.size, r.size);
                        found.extend(finding(IncompatibilityKind::FixedSizeMismatch, message, location));
                        location.pop();
                    }
                    Ok(found)
                }
                (View::Enum(r), View::Enum(w)) => {
                    let mut found = check_name(NamedView::of_enum(r), NamedView::of_enum(w), location);
                    found.extend(check_symbols(r, w, location));
                    Ok(found)
                }
                (View::Record(r), View::Record(w)) => {
                    let mut found = check_name(NamedView::of_record(r), NamedView::of_record(w), location);
                    found.extend(self.check_fields(r, (writer_schema, w), location)?);
                    Ok(found)
                }
                (View::Union(_), View::Union(branches)) => {
                    let mut found = Vec::new();
                    for (index, branch) in branches.iter().enumerate() {
                        location.push(Token::Index(index));
                        if !self.fresh(reader_schema, branch)?.is_empty() {
                            let branch_type = view(resolve(branch, self.writer_names)?)?.type_name();
                            let message = format!("reader union lacking writer type: {branch_type}");
                            found.extend(finding(IncompatibilityKind::MissingUnionBranch, message, location));
                        }
                        location.pop();
                    }
                    Ok(found)
                }
                _ => Ok(Vec::new()),
            };
        }
        if let View::Union(branches) = writer_view {
            let mut found = Vec::new();
            for (index, branch) in branches.iter().enumerate() {
                found.extend(self.get(Token::Index(index), reader_schema, branch, location)?);
            }
            return Ok(found);
        }
        let promotable = match reader_view {
            View::Long => matches!(writer_view, View::Int),
            View::Float => matches!(writer_view, View::Int | View::Long),
            View::Double => matches!(writer_view, View::Int | View::Long | View::Float),
            View::Bytes => matches!(writer_view, View::String),
            View::String => matches!(writer_view, View::Bytes),
            View::Union(branches) => {
                for index in self.candidates(branches, writer_view)? {
                    if self.fresh(&branches[index], writer_schema)?.is_empty() {
                        return Ok(Vec::new());
                    }
                }
                let message = format!("reader union lacking writer type: {}", writer_view.type_name());
                return Ok(finding(IncompatibilityKind::MissingUnionBranch, message, location));
            }
            _ => false,
        };
        Ok(if promotable { Vec::new() } else { type_mismatch(reader_view, writer_view, location) })
    }

    /// The branches of the reader union `branches` that can possibly read `writer`, in union order: those
    /// of a type the writer's type promotes to and, for named types, of the same unqualified name or with an
    /// alias naming the writer. Every other branch would fail on type or name, so trying only these gives
    /// Java's answer without comparing every branch with every writer type.
    fn candidates(&mut self, branches: &'a [Schema], writer: View<'a>) -> Result<Vec<usize>, Stopped> {
        let address = branches.as_ptr() as usize;
        if !self.unions.contains_key(&address) {
            let mut index: HashMap<BranchKey<'a>, Vec<usize>> = HashMap::new();
            for (position, branch) in branches.iter().enumerate() {
                for key in branch_keys(view(resolve(branch, self.reader_names)?)?) {
                    index.entry(key).or_default().push(position);
                }
            }
            self.unions.insert(address, index);
        }
        let Some(index) = self.unions.get(&address) else { return Ok(Vec::new()) };
        let mut found: Vec<usize> = match writer {
            View::Record(r) => named_lookups(index, "RECORD", &r.name),
            View::Enum(e) => named_lookups(index, "ENUM", &e.name),
            View::Fixed(f) => named_lookups(index, "FIXED", &f.name),
            other => promotions(other.type_name())
                .iter()
                .filter_map(|kind| index.get(&BranchKey::Kind(kind)))
                .flatten()
                .copied()
                .collect(),
        };
        found.sort_unstable();
        found.dedup();
        Ok(found)
    }

    /// Java's `checkReaderWriterRecordFields`: every reader field is read from the writer field of the same
    /// name (or of one of the reader field's aliases), or has a default.
    fn check_fields(
        &mut self,
        reader: &'a RecordSchema,
        writer: (&'a Schema, &'a RecordSchema),
        location: &mut Vec<Token>,
    ) -> Outcome {
        let (writer_schema, writer_record) = writer;
        let mut found = Vec::new();
        self.work.charge((reader.fields.len() + writer_record.fields.len()) as u64)?;
        let by_name: HashMap<&str, &RecordField> =
            writer_record.fields.iter().map(|field| (field.name.as_str(), field)).collect();
        location.push(Token::Word("fields"));
        for (position, reader_field) in reader.fields.iter().enumerate() {
            location.push(Token::Index(position));
            let mut matches = std::iter::once(reader_field.name.as_str())
                .chain(reader_field.aliases.iter().map(String::as_str))
                .filter_map(|name| by_name.get(name).copied());
            let first = matches.next();
            if matches.next().is_some() {
                return Err(Aborted(format!(
                    "Reader record field {} matches multiple fields in writer record schema {}",
                    reader_field.name,
                    writer_record.name.fullname(None)
                ))
                .into());
            }
            match first {
                Some(writer_field) => {
                    found.extend(self.get(Token::Word("type"), &reader_field.schema, &writer_field.schema, location)?)
                }
                None if reader_field.default.is_some() => {}
                None => {
                    let reader_type = resolve(&reader_field.schema, self.reader_names)?;
                    if matches!(reader_type, Schema::Enum(EnumSchema { default: Some(_), .. })) {
                        found.extend(self.get(Token::Word("type"), reader_type, writer_schema, location)?);
                    } else {
                        let message = reader_field.name.clone();
                        found.extend(finding(IncompatibilityKind::ReaderFieldMissingDefaultValue, message, location));
                    }
                }
            }
            location.pop();
        }
        location.pop();
        Ok(found)
    }
}

/// The naming parts of a record, enum or fixed.
struct NamedView<'s> {
    name: &'s apache_avro::schema::Name,
    aliases: &'s apache_avro::schema::Aliases,
}

impl<'s> NamedView<'s> {
    fn of_record(record: &'s RecordSchema) -> Self {
        NamedView { name: &record.name, aliases: &record.aliases }
    }
    fn of_enum(enumeration: &'s EnumSchema) -> Self {
        NamedView { name: &enumeration.name, aliases: &enumeration.aliases }
    }
    fn of_fixed(fixed: &'s FixedSchema) -> Self {
        NamedView { name: &fixed.name, aliases: &fixed.aliases }
    }
}

/// The keys a reader union branch is indexed by (see [`BranchKey`]).
fn branch_keys(branch: View<'_>) -> Vec<BranchKey<'_>> {
    fn named<'s>(
        kind: &'static str,
        name: &'s apache_avro::schema::Name,
        aliases: &apache_avro::schema::Aliases,
    ) -> Vec<BranchKey<'s>> {
        let mut keys = vec![BranchKey::Named(kind, name.name())];
        keys.extend(aliases.iter().flatten().map(|alias| BranchKey::Alias(kind, alias.fullname(None))));
        keys
    }
    match branch {
        View::Record(r) => named("RECORD", &r.name, &r.aliases),
        View::Enum(e) => named("ENUM", &e.name, &e.aliases),
        View::Fixed(f) => named("FIXED", &f.name, &f.aliases),
        other => vec![BranchKey::Kind(other.type_name())],
    }
}

/// Branches a named writer type may match: same kind and unqualified name, or an alias naming its full name.
fn named_lookups(
    index: &HashMap<BranchKey<'_>, Vec<usize>>,
    kind: &'static str,
    name: &apache_avro::schema::Name,
) -> Vec<usize> {
    let by_name = index.get(&BranchKey::Named(kind, name.name())).into_iter().flatten();
    let by_alias = index.get(&BranchKey::Alias(kind, name.fullname(None))).into_iter().flatten();
    by_name.chain(by_alias).copied().collect()
}

/// Java's `checkSchemaNames`: unqualified names equal, or a reader alias equal to the writer's full name.
fn check_name(reader: NamedView<'_>, writer: NamedView<'_>, location: &mut Vec<Token>) -> Vec<Finding> {
    let writer_full = writer.name.fullname(None);
    let aliased =
        reader.aliases.as_ref().is_some_and(|aliases| aliases.iter().any(|a| a.fullname(None) == writer_full));
    if reader.name.name() == writer.name.name() || aliased {
        return Vec::new();
    }
    location.push(Token::Word("name"));
    let found = finding(IncompatibilityKind::NameMismatch, format!("expected: {writer_full}"), location);
    location.pop();
    found
}

/// Java's `checkReaderEnumContainsAllWriterEnumSymbols`, with the Avro 1.9+ reader-default rescue.
fn check_symbols(reader: &EnumSchema, writer: &EnumSchema, location: &mut Vec<Token>) -> Vec<Finding> {
    let symbols: HashSet<&str> = reader.symbols.iter().map(String::as_str).collect();
    let mut missing: Vec<&str> =
        writer.symbols.iter().map(String::as_str).filter(|symbol| !symbols.contains(symbol)).collect();
    if missing.is_empty() {
        return Vec::new();
    }
    if reader.default.as_deref().is_some_and(|default| symbols.contains(default)) {
        return Vec::new();
    }
    missing.sort_by(|a, b| a.encode_utf16().cmp(b.encode_utf16()));
    missing.dedup();
    location.push(Token::Word("symbols"));
    let found = finding(IncompatibilityKind::MissingEnumSymbols, format!("[{}]", missing.join(", ")), location);
    location.pop();
    found
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::avro::AvroSchema;
    use crate::limits::Budget;
    use crate::{SchemaFormat, Validation};
    use apache_avro::schema::ArraySchema;

    fn parsed(text: &str) -> AvroSchema {
        match AvroSchema::parse(text, &[], Validation::Lenient, false) {
            Ok(schema) => schema,
            Err(e) => panic!("{text}: {e}"),
        }
    }

    fn check(reader: &str, writer: &str) -> Result<Vec<Finding>, Stopped> {
        let (reader, writer) = (parsed(reader), parsed(writer));
        reader_writer(
            Scope { schema: reader.schema(), names: reader.named_types() },
            Scope { schema: writer.schema(), names: writer.named_types() },
            &mut Meter::unlimited(Budget::Work),
        )
    }

    fn work(reader: &str, writer: &str) -> u64 {
        let (reader, writer) = (parsed(reader), parsed(writer));
        let mut meter = Meter::unlimited(Budget::Work);
        let scopes = (
            Scope { schema: reader.schema(), names: reader.named_types() },
            Scope { schema: writer.schema(), names: writer.named_types() },
        );
        let _ = reader_writer(scopes.0, scopes.1, &mut meter);
        meter.used()
    }

    #[test]
    fn union_branches_are_matched_by_name_not_pairwise() {
        let (old, new) = crate::bombs::avro_wide_union(400);
        assert_eq!(check(&new, &old), Ok(Vec::new()));
        let (small_old, small_new) = crate::bombs::avro_wide_union(100);
        let (small, large) = (work(&small_new, &small_old), work(&new, &old));
        // Linear: four times the branches cost about four times the work (pairwise would be sixteen).
        assert!(large <= 5 * small, "100 branches: {small} units, 400 branches: {large} units");
    }

    #[test]
    fn a_union_finds_promotions_and_aliases() {
        let writer = r#"{"type":"record","name":"W","fields":[{"name":"u","type":["int",{"type":"fixed","name":"a.F","size":2}]}]}"#;
        let reader = r#"{"type":"record","name":"W","fields":[{"name":"u","type":["double",{"type":"fixed","name":"b.G","size":2,"aliases":["a.F"]}]}]}"#;
        assert_eq!(check(reader, writer), Ok(Vec::new()));
        let unaliased = reader.replace(r#","aliases":["a.F"]"#, "");
        let found = check(&unaliased, writer).unwrap_or_default();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, IncompatibilityKind::MissingUnionBranch);
    }

    const LIST: &str =
        r#"{"type":"record","name":"L","fields":[{"name":"v","type":"int"},{"name":"next","type":["null","L"]}]}"#;

    #[test]
    fn recursive_types_terminate_and_are_compatible_with_themselves() {
        assert_eq!(check(LIST, LIST), Ok(Vec::new()));
    }

    #[test]
    fn recursion_still_finds_a_change_inside_the_cycle() {
        let narrowed = LIST.replace(r#""type":"int""#, r#""type":"string""#);
        let found = check(&narrowed, LIST).unwrap_or_default();
        assert_eq!(found.len(), 1, "{found:?}");
        assert_eq!(found[0].kind, IncompatibilityKind::TypeMismatch);
        assert_eq!(&*found[0].location, "/fields/0/type");
        assert_eq!(&*found[0].message, "reader type: STRING not compatible with writer type: INT");
    }

    #[test]
    fn a_named_type_reused_by_reference_reports_its_first_location_again() {
        // Java memoises (reader, writer) pairs with their findings, so the second use repeats the first.
        let writer = r#"{"type":"record","name":"R","fields":[
            {"name":"p","type":{"type":"record","name":"P","fields":[{"name":"x","type":"long"}]}},
            {"name":"q","type":"P"}]}"#;
        let reader = writer.replace(r#""type":"long""#, r#""type":"int""#);
        let found = check(&reader, writer).unwrap_or_default();
        let locations: Vec<&str> = found.iter().map(|f| &*f.location).collect();
        assert_eq!(locations, ["/fields/0/type/fields/0/type", "/fields/0/type/fields/0/type"]);
    }

    #[test]
    fn json_pointer_tokens_are_escaped() {
        assert_eq!(pointer(&[Token::Root, Token::Word("a/b"), Token::Word("c~d"), Token::Index(3)]), "/a~1b/c~0d/3");
        assert_eq!(pointer(&[Token::Root]), "/");
    }

    #[test]
    fn nesting_beyond_the_limit_aborts_instead_of_overflowing() {
        let mut deep = Schema::Int;
        for _ in 0..(MAX_DEPTH + 10) {
            deep = Schema::Array(ArraySchema { items: Box::new(deep), attributes: Default::default() });
        }
        let names = HashMap::new();
        let scope = Scope { schema: &deep, names: &names };
        assert!(reader_writer(scope, scope, &mut Meter::unlimited(Budget::Work)).is_err());
    }

    #[test]
    fn an_unresolved_reference_aborts() {
        let names = HashMap::new();
        let dangling =
            Schema::Ref { name: apache_avro::schema::Name::new("Missing").unwrap_or_else(|e| panic!("{e}")) };
        let scope = Scope { schema: &dangling, names: &names };
        let outcome = reader_writer(scope, scope, &mut Meter::unlimited(Budget::Work));
        assert_eq!(outcome, Err(Stopped::Aborted(Aborted("unresolved named type Missing".into()))));
    }
}
