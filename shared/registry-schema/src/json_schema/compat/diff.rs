//! Confluent's `SchemaDiff` walk (with its `Context`): class changes, singleton and sum/product special
//! cases, common keywords, and the string, number, enum, const, combined and `not` rules.

use super::decimal::Decimal;
use super::difference::{ChangeType, ChangeType::*, Difference, RelativePath};
use super::model::{Criterion, Graph, Kind, NodeId, NumberRules, StringRules};
use crate::json_value::{Number, Value};
use regex::Regex;
use std::collections::{HashMap, HashSet};
use std::rc::Rc;

/// Deepest nesting of schema comparisons followed; deeper pairs are not compared (stack guard).
const MAX_DEPTH: usize = 512;

/// Confluent's `Context`: the current JSON path and the differences found so far.
#[derive(Debug, Default)]
pub struct Ctx {
    path: Vec<String>,
    pub diffs: Diffs,
}

impl Ctx {
    /// A context at the same path with no differences (`getSubcontext`).
    pub fn sub(&self) -> Ctx {
        Ctx { path: self.path.clone(), diffs: Diffs::default() }
    }

    /// Pushes one path segment (may itself contain `/`, as `items/0`).
    pub fn enter(&mut self, segment: impl Into<String>) {
        self.path.push(segment.into());
    }

    /// Pops the last path segment.
    pub fn leave(&mut self) {
        self.path.pop();
    }

    /// Records `change` at the current path.
    pub fn add(&mut self, change: ChangeType) {
        self.diffs.push(Difference { change, relative: RelativePath::new(self.path.join("/")) });
    }

    /// Records `change` at the current path plus `attribute`.
    pub fn add_at(&mut self, attribute: &str, change: ChangeType) {
        self.enter(attribute);
        self.add(change);
        self.leave();
    }

    /// Whether every difference so far is a compatible one.
    pub fn is_compatible(&self) -> bool {
        self.diffs.is_compatible()
    }

    /// Adds a memoized pair's differences (relative to the pair) at the current path: shared, not copied.
    fn extend_rebased(&mut self, relative: &Rc<Diffs>) {
        self.diffs.push_shared(self.path.join("/").into(), relative);
    }
}

/// The differences of a comparison in Confluent's order. A memoized pair's differences are kept once and
/// referred to wherever the pair is met again (as a part rebased under the path it is met at), so reusing a
/// pair costs one step whatever it found; [`Diffs::flatten`] writes them out once, at the end. Whether all
/// of them are compatible is known without looking through them.
#[derive(Debug, Clone, Default)]
pub struct Diffs {
    parts: Vec<Part>,
    incompatible: bool,
}

#[derive(Debug, Clone)]
enum Part {
    One(Difference),
    /// Differences relative to a pair, under `prefix` (the path the pair was met at).
    Shared {
        prefix: Rc<str>,
        diffs: Rc<Diffs>,
    },
}

impl Diffs {
    fn push(&mut self, difference: Difference) {
        self.incompatible |= !difference.change.is_compatible();
        self.parts.push(Part::One(difference));
    }

    fn push_shared(&mut self, prefix: Rc<str>, diffs: &Rc<Diffs>) {
        if diffs.parts.is_empty() {
            return;
        }
        self.incompatible |= diffs.incompatible;
        self.parts.push(Part::Shared { prefix, diffs: Rc::clone(diffs) });
    }

    /// Appends `other`'s differences after these.
    pub fn extend(&mut self, other: Diffs) {
        self.incompatible |= other.incompatible;
        self.parts.extend(other.parts);
    }

    pub fn is_compatible(&self) -> bool {
        !self.incompatible
    }

    /// The differences written out in order, each under the paths it was reused at, one work unit each
    /// (`spend` answers `false` once the budget is gone: the list is then cut short). A pair met on many
    /// paths is written out once per path, as Confluent's lists hold it.
    pub fn flatten(&self, spend: &mut impl FnMut(usize) -> bool) -> Vec<Difference> {
        let mut out = Vec::new();
        let mut stack: Vec<(&Diffs, usize, Vec<Rc<str>>)> = vec![(self, 0, Vec::new())];
        while let Some((diffs, index, prefixes)) = stack.pop() {
            let Some(part) = diffs.parts.get(index) else { continue };
            stack.push((diffs, index + 1, prefixes.clone()));
            match part {
                Part::One(difference) => {
                    if !spend(1) {
                        return out;
                    }
                    let relative =
                        prefixes.iter().rev().fold(difference.relative.clone(), |path, prefix| path.under(prefix));
                    out.push(Difference { change: difference.change, relative });
                }
                Part::Shared { prefix, diffs } => {
                    let mut nested = prefixes;
                    nested.push(Rc::clone(prefix));
                    stack.push((diffs, 0, nested));
                }
            }
        }
        out
    }
}

/// A compared pair: whether the graphs' roles are exchanged (under `not`), the original node, the update node.
type Pair = (bool, NodeId, NodeId);

/// One comparison of an original graph against an update graph, with the pair memo and cycle guard.
pub struct Differ<'g> {
    pub(super) original: &'g Graph,
    pub(super) update: &'g Graph,
    swapped: bool,
    depth: usize,
    memo: HashMap<Pair, Rc<Diffs>>,
    in_progress: HashSet<Pair>,
    /// Pairs an earlier pass found incompatible, with their differences: a cycle back into one of them
    /// reports them instead of assuming the cycle compatible (Confluent's `incompatibleSeed`).
    seed: HashMap<Pair, Rc<Diffs>>,
    /// Whether this pass assumed a cycle compatible; a pass that did not is exact.
    optimistic: bool,
    patterns: HashMap<String, Option<Regex>>,
    /// Work units spent: pairs met (compared or reused from the memo or seed) and differences written out.
    work: u64,
    /// Past this many units no further pair is compared (the caller reports the budget spent).
    limit: u64,
}

impl<'g> Differ<'g> {
    /// A differ of `original` (the schema data was written with) against `update`.
    pub fn new(original: &'g Graph, update: &'g Graph) -> Self {
        Self::within(original, update, u64::MAX)
    }

    /// A differ that stops comparing once `limit` work units are spent.
    pub fn within(original: &'g Graph, update: &'g Graph, limit: u64) -> Self {
        Differ {
            original,
            update,
            swapped: false,
            depth: 0,
            memo: HashMap::new(),
            in_progress: HashSet::new(),
            seed: HashMap::new(),
            optimistic: false,
            patterns: HashMap::new(),
            work: 0,
            limit,
        }
    }

    /// Every difference between the two roots, in Confluent's order.
    pub fn differences(self) -> Vec<Difference> {
        self.differences_and_work().0
    }

    /// [`Differ::differences`] and the work units spent; the list is incomplete when the work passed the limit.
    ///
    /// As Confluent's `SchemaDiff.compare`: a pass that assumed some cycle compatible is repeated, knowing
    /// the pairs it found incompatible, until that set stops growing (it grows monotonically and is
    /// bounded by the pairs, and every pass is charged to the same work limit).
    pub fn differences_and_work(mut self) -> (Vec<Difference>, u64) {
        loop {
            let mut ctx = Ctx::default();
            let (original, update) = (self.original.root(), self.update.root());
            self.compare(&mut ctx, Some(original), Some(update));
            if !self.optimistic || self.work > self.limit {
                return self.written_out(&ctx.diffs);
            }
            let incompatible: HashMap<Pair, Rc<Diffs>> =
                std::mem::take(&mut self.memo).into_iter().filter(|(_, found)| !found.is_compatible()).collect();
            if incompatible.len() == self.seed.len() && incompatible.keys().all(|key| self.seed.contains_key(key)) {
                return self.written_out(&ctx.diffs);
            }
            self.seed = incompatible;
            self.optimistic = false;
        }
    }

    /// `diffs` written out, charged to the work spent.
    fn written_out(mut self, diffs: &Diffs) -> (Vec<Difference>, u64) {
        let written = diffs.flatten(&mut |units| self.spend(units));
        (written, self.work)
    }

    fn spend(&mut self, units: usize) -> bool {
        self.work = self.work.saturating_add(units as u64);
        self.work <= self.limit
    }

    /// Whether `pattern` (a Java regex) finds a match in `text`; patterns Rust cannot compile never match.
    pub(super) fn pattern_finds(&mut self, pattern: &str, text: &str) -> bool {
        let compiled = self.patterns.entry(pattern.to_string()).or_insert_with(|| Regex::new(pattern).ok());
        compiled.as_ref().is_some_and(|regex| regex.is_match(text))
    }

    /// `SchemaDiff.compare(ctx, original, update)`: memoized per pair, cycles count as compatible.
    pub fn compare(&mut self, ctx: &mut Ctx, original: Option<NodeId>, update: Option<NodeId>) {
        let (original, update) = match (original, update) {
            (None, None) => return,
            (None, Some(_)) => return ctx.add(SCHEMA_ADDED),
            (Some(_), None) => return ctx.add(SCHEMA_REMOVED),
            (Some(o), Some(u)) => (self.original.resolve(o), self.update.resolve(u)),
        };
        if !self.spend(1) {
            return;
        }
        let key = (self.swapped, original, update);
        if let Some(found) = self.memo.get(&key) {
            let found = Rc::clone(found);
            return ctx.extend_rebased(&found);
        }
        if self.depth >= MAX_DEPTH {
            return;
        }
        if !self.in_progress.insert(key) {
            match self.seed.get(&key).map(Rc::clone) {
                Some(found) => ctx.extend_rebased(&found),
                None => self.optimistic = true,
            }
            return;
        }
        self.depth += 1;
        let mut pair = Ctx::default();
        self.compare_resolved(&mut pair, original, update);
        self.depth -= 1;
        self.in_progress.remove(&key);
        let found = Rc::new(pair.diffs);
        ctx.extend_rebased(&found);
        self.memo.insert(key, found);
    }

    /// Compares with the roles of the two graphs exchanged (for `not`), then restores them.
    fn compare_reversed(&mut self, ctx: &mut Ctx, original: NodeId, update: NodeId) {
        std::mem::swap(&mut self.original, &mut self.update);
        self.swapped = !self.swapped;
        self.compare(ctx, Some(original), Some(update));
        std::mem::swap(&mut self.original, &mut self.update);
        self.swapped = !self.swapped;
    }

    /// Compares `original` with `update` in a context of its own: when they are compatible, keeps
    /// its differences in `ctx` and answers `true`; otherwise `ctx` is left as it was.
    fn compatible_aside(&mut self, ctx: &mut Ctx, original: NodeId, update: NodeId) -> bool {
        let mut sub = ctx.sub();
        self.compare(&mut sub, Some(original), Some(update));
        let compatible = sub.is_compatible();
        if compatible {
            ctx.diffs.extend(sub.diffs);
        }
        compatible
    }

    fn compare_resolved(&mut self, ctx: &mut Ctx, original: NodeId, update: NodeId) {
        let (graph_o, graph_u) = (self.original, self.update);
        let (o, u) = (graph_o.node(original), graph_u.node(update));
        match (&o.kind, &u.kind) {
            (kind, Kind::Combined { criterion, subschemas }) if !matches!(kind, Kind::Combined { .. }) => {
                if let [single] = subschemas[..] {
                    if self.compatible_aside(ctx, original, single) {
                        return;
                    }
                } else if matches!(criterion, Criterion::AnyOf | Criterion::OneOf)
                    && subschemas.iter().any(|&subschema| self.compatible_aside(ctx, original, subschema))
                {
                    return ctx.add(SUM_TYPE_EXTENDED);
                }
            }
            (Kind::Combined { criterion, subschemas }, kind) if !matches!(kind, Kind::Combined { .. }) => {
                if let [single] = subschemas[..] {
                    if self.compatible_aside(ctx, single, update) {
                        return;
                    }
                } else if *criterion == Criterion::AllOf
                    && subschemas.iter().any(|&subschema| self.compatible_aside(ctx, subschema, update))
                {
                    return ctx.add(PRODUCT_TYPE_NARROWED);
                }
            }
            _ => {}
        }
        if !o.kind.same_class(&u.kind) {
            // Two Kafka Connect `bytes` schemas are one type whatever their JSON type (Confluent's tolerance
            // for the JSON converter's change of decimal representation).
            let bytes = Some(Value::String("bytes".to_string()));
            let connect_bytes = o.common.connect_type == bytes && u.common.connect_type == bytes;
            if !matches!(o.kind, Kind::False) && !u.kind.is_empty_schema() && !connect_bytes {
                ctx.add(TYPE_CHANGED);
            }
            return;
        }
        let common = [
            (&o.common.id, &u.common.id, ID_CHANGED),
            (&o.common.title, &u.common.title, TITLE_CHANGED),
            (&o.common.description, &u.common.description, DESCRIPTION_CHANGED),
            (&o.common.default, &u.common.default, DEFAULT_CHANGED),
        ];
        for (before, after, change) in common {
            if before != after {
                ctx.add(change);
            }
        }
        match (&o.kind, &u.kind) {
            (Kind::String(a), Kind::String(b)) => compare_strings(ctx, a, b),
            (Kind::Number(a), Kind::Number(b)) => compare_numbers(ctx, a, b),
            (Kind::Enum(a), Kind::Enum(b)) => compare_enums(ctx, a, b),
            (Kind::Const(a), Kind::Const(b)) if a != b => ctx.add_at("const", ENUM_ARRAY_CHANGED),
            (Kind::Combined { criterion: ca, subschemas: sa }, Kind::Combined { criterion: cb, subschemas: sb }) => {
                self.compare_combined(ctx, (*ca, sa), (*cb, sb));
            }
            (Kind::Not(a), Kind::Not(b)) => {
                ctx.enter("not");
                let mut sub = ctx.sub();
                self.compare_reversed(&mut sub, *b, *a);
                ctx.add(if sub.is_compatible() { NOT_TYPE_NARROWED } else { NOT_TYPE_EXTENDED });
                ctx.leave();
            }
            (Kind::Object(a), Kind::Object(b)) => self.compare_objects(ctx, a, b),
            (Kind::Array(a), Kind::Array(b)) => self.compare_arrays(ctx, a, b),
            _ => {}
        }
    }

    fn compare_combined(&mut self, ctx: &mut Ctx, original: (Criterion, &[NodeId]), update: (Criterion, &[NodeId])) {
        let change = combined_criteria_change(original, update);
        if let Some(change) = change {
            ctx.add(change);
            if change == COMBINED_TYPE_CHANGED {
                return;
            }
        }
        let originals = distinct(self.original, original.1);
        let updates = distinct(self.update, update.1);
        let sizes = (originals.len(), updates.len());
        // Growth is named by the update's criterion, shrinking by the original's (`CombinedSchemaDiff`).
        match sizes.0.cmp(&sizes.1) {
            std::cmp::Ordering::Less if update.0 == Criterion::AllOf => ctx.add(PRODUCT_TYPE_EXTENDED),
            std::cmp::Ordering::Less => ctx.add(SUM_TYPE_EXTENDED),
            std::cmp::Ordering::Greater if original.0 == Criterion::AllOf => ctx.add(PRODUCT_TYPE_NARROWED),
            std::cmp::Ordering::Greater => ctx.add(SUM_TYPE_NARROWED),
            std::cmp::Ordering::Equal => {}
        }
        let mut edges: Vec<Vec<(usize, Diffs)>> = Vec::with_capacity(originals.len());
        for (index, &o) in originals.iter().enumerate() {
            ctx.enter(format!("{}/{index}", original.0.as_str()));
            let mut compatible = Vec::new();
            for (j, &u) in updates.iter().enumerate() {
                let mut sub = ctx.sub();
                self.compare(&mut sub, Some(o), Some(u));
                if sub.is_compatible() {
                    compatible.push((j, sub.diffs));
                }
            }
            edges.push(compatible);
            ctx.leave();
        }
        let matched = maximum_matching(&edges, updates.len());
        for (i, j) in matched.iter().enumerate().filter_map(|(i, j)| j.map(|j| (i, j))) {
            if let Some((_, diffs)) = edges[i].iter().find(|(target, _)| *target == j) {
                ctx.diffs.extend(diffs.clone());
            }
        }
        if matched.iter().flatten().count() < sizes.0.min(sizes.1) {
            ctx.add(COMBINED_TYPE_SUBSCHEMAS_CHANGED);
        }
    }
}

/// `CombinedSchemaDiff.compareCriteria`: a change of criterion accepts at least what it accepted when the
/// update is `anyOf`, when both are singletons, when a singleton becomes `oneOf`, or when an `allOf` becomes
/// a singleton (`anyOf`/`oneOf` of one subschema asks no more than the `allOf`'s matched part).
fn combined_criteria_change(original: (Criterion, &[NodeId]), update: (Criterion, &[NodeId])) -> Option<ChangeType> {
    let (original_single, update_single) = (original.1.len() == 1, update.1.len() == 1);
    Some(match update.0 {
        u if u == original.0 => return None,
        Criterion::AnyOf => COMBINED_TYPE_EXTENDED,
        _ if original_single && update_single => COMBINED_TYPE_EXTENDED,
        Criterion::OneOf if original_single => COMBINED_TYPE_EXTENDED,
        _ if update_single && original.0 == Criterion::AllOf => COMBINED_TYPE_EXTENDED,
        _ => COMBINED_TYPE_CHANGED,
    })
}

/// Subschemas with content duplicates removed, first occurrence kept (Confluent's `LinkedHashSet<JsonSchema>`,
/// keyed by each subschema's own text: two `$ref`s to different definitions stay two, even when those read alike).
fn distinct(graph: &Graph, subschemas: &[NodeId]) -> Vec<NodeId> {
    let mut seen = HashSet::new();
    subschemas.iter().copied().filter(|&id| seen.insert(graph.content_key(id))).collect()
}

/// Maximum bipartite matching (augmenting paths, originals in order): for each original, its update index.
fn maximum_matching(edges: &[Vec<(usize, Diffs)>], right: usize) -> Vec<Option<usize>> {
    fn augment(i: usize, edges: &[Vec<(usize, Diffs)>], seen: &mut [bool], owner: &mut [Option<usize>]) -> bool {
        for &(j, _) in &edges[i] {
            if seen[j] {
                continue;
            }
            seen[j] = true;
            if owner[j].is_none_or(|other| augment(other, edges, seen, owner)) {
                owner[j] = Some(i);
                return true;
            }
        }
        false
    }
    let mut owner = vec![None; right];
    for i in 0..edges.len() {
        augment(i, edges, &mut vec![false; right], &mut owner);
    }
    let mut matched = vec![None; edges.len()];
    for (j, i) in owner.iter().enumerate() {
        if let Some(i) = i {
            matched[*i] = Some(j);
        }
    }
    matched
}

/// Added / removed / increased / decreased for one optional bound.
pub(super) fn compare_bound(
    ctx: &mut Ctx,
    keyword: &str,
    before: Option<f64>,
    after: Option<f64>,
    changes: [ChangeType; 4],
) {
    let [added, removed, increased, decreased] = changes;
    match (before, after) {
        (None, Some(_)) => ctx.add_at(keyword, added),
        (Some(_), None) => ctx.add_at(keyword, removed),
        (Some(a), Some(b)) if a < b => ctx.add_at(keyword, increased),
        (Some(a), Some(b)) if a > b => ctx.add_at(keyword, decreased),
        _ => {}
    }
}

fn compare_strings(ctx: &mut Ctx, a: &StringRules, b: &StringRules) {
    let max = [MAX_LENGTH_ADDED, MAX_LENGTH_REMOVED, MAX_LENGTH_INCREASED, MAX_LENGTH_DECREASED];
    compare_bound(ctx, "maxLength", a.max_length, b.max_length, max);
    let min = [MIN_LENGTH_ADDED, MIN_LENGTH_REMOVED, MIN_LENGTH_INCREASED, MIN_LENGTH_DECREASED];
    compare_bound(ctx, "minLength", a.min_length, b.min_length, min);
    match (&a.pattern, &b.pattern) {
        (None, Some(_)) => ctx.add_at("pattern", PATTERN_ADDED),
        (Some(_), None) => ctx.add_at("pattern", PATTERN_REMOVED),
        (Some(x), Some(y)) if x != y => ctx.add_at("pattern", PATTERN_CHANGED),
        _ => {}
    }
}

/// `NumberSchemaDiff`'s `multipleOf` rule on exact decimals: a new multiple of the old value narrows what
/// validates (expanded), a divisor of it widens it (reduced). Literals too long to compare exactly count as
/// changed unless their doubles are equal.
fn multiple_of_change(before: Option<&Number>, after: Option<&Number>) -> Option<ChangeType> {
    let (before, after) = match (before, after) {
        (None, None) => return None,
        (None, Some(_)) => return Some(MULTIPLE_OF_ADDED),
        (Some(_), None) => return Some(MULTIPLE_OF_REMOVED),
        (Some(before), Some(after)) => (before, after),
    };
    let (Some(x), Some(y)) = (Decimal::of(before), Decimal::of(after)) else {
        return (before.as_f64() != after.as_f64()).then_some(MULTIPLE_OF_CHANGED);
    };
    Some(match (x.equals(y), y.is_multiple_of(x), x.is_multiple_of(y)) {
        (Some(true), _, _) => return None,
        (_, Some(true), _) => MULTIPLE_OF_EXPANDED,
        (_, _, Some(true)) => MULTIPLE_OF_REDUCED,
        _ => MULTIPLE_OF_CHANGED,
    })
}

fn compare_numbers(ctx: &mut Ctx, a: &NumberRules, b: &NumberRules) {
    compare_bound(
        ctx,
        "maximum",
        a.maximum,
        b.maximum,
        [MAXIMUM_ADDED, MAXIMUM_REMOVED, MAXIMUM_INCREASED, MAXIMUM_DECREASED],
    );
    compare_bound(
        ctx,
        "minimum",
        a.minimum,
        b.minimum,
        [MINIMUM_ADDED, MINIMUM_REMOVED, MINIMUM_INCREASED, MINIMUM_DECREASED],
    );
    let exclusive_max =
        [EXCLUSIVE_MAXIMUM_ADDED, EXCLUSIVE_MAXIMUM_REMOVED, EXCLUSIVE_MAXIMUM_INCREASED, EXCLUSIVE_MAXIMUM_DECREASED];
    compare_bound(ctx, "exclusiveMaximum", a.exclusive_maximum, b.exclusive_maximum, exclusive_max);
    let exclusive_min =
        [EXCLUSIVE_MINIMUM_ADDED, EXCLUSIVE_MINIMUM_REMOVED, EXCLUSIVE_MINIMUM_INCREASED, EXCLUSIVE_MINIMUM_DECREASED];
    compare_bound(ctx, "exclusiveMinimum", a.exclusive_minimum, b.exclusive_minimum, exclusive_min);
    if let Some(change) = multiple_of_change(a.multiple_of.as_ref(), b.multiple_of.as_ref()) {
        ctx.add_at("multipleOf", change);
    }
    if a.requires_integer != b.requires_integer {
        ctx.add(if a.requires_integer { TYPE_EXTENDED } else { TYPE_NARROWED });
    }
}

/// Compares the two value sets by their equality keys: linear in their size, however long the lists.
fn compare_enums(ctx: &mut Ctx, a: &[crate::json_value::Value], b: &[crate::json_value::Value]) {
    let keys = |values: &[crate::json_value::Value]| -> HashSet<String> {
        values.iter().map(crate::json_value::Value::equality_key).collect()
    };
    let (a, b) = (keys(a), keys(b));
    let (grows, shrinks) = (a.is_subset(&b), b.is_subset(&a));
    if grows && shrinks {
        return;
    }
    ctx.add_at(
        "enum",
        if grows {
            ENUM_ARRAY_EXTENDED
        } else if shrinks {
            ENUM_ARRAY_NARROWED
        } else {
            ENUM_ARRAY_CHANGED
        },
    );
}
