//! Confluent's `ObjectSchemaDiff` and `ArraySchemaDiff`: content models (open, closed, partially open),
//! properties and items added or removed, `required`, dependencies, and the size keywords.
//!
//! Confluent walks property names through Java `HashSet`s; [`java_hash_order`] reproduces that order so
//! the differences come out in the order Confluent lists them.

use super::diff::{Ctx, Differ, compare_bound};
use super::difference::ChangeType::*;
use super::model::{ArrayRules, Graph, Kind, NodeId, ObjectRules};

impl Differ<'_> {
    pub(super) fn compare_objects(&mut self, ctx: &mut Ctx, a: &ObjectRules, b: &ObjectRules) {
        self.compare_required(ctx, a, b);
        self.compare_properties(ctx, a, b);
        self.compare_dependencies(ctx, a, b);
        ctx.enter("additionalProperties");
        if a.permits_additional != b.permits_additional {
            ctx.add(if b.permits_additional { ADDITIONAL_PROPERTIES_ADDED } else { ADDITIONAL_PROPERTIES_REMOVED });
        } else if a.additional.is_none() && b.additional.is_some() {
            ctx.add(ADDITIONAL_PROPERTIES_NARROWED);
        } else if b.additional.is_none() && a.additional.is_some() {
            ctx.add(ADDITIONAL_PROPERTIES_EXTENDED);
        } else {
            self.compare(ctx, a.additional, b.additional);
        }
        ctx.leave();
        let unevaluated = [
            UNEVALUATED_PROPERTIES_ADDED,
            UNEVALUATED_PROPERTIES_REMOVED,
            UNEVALUATED_PROPERTIES_EXTENDED,
            UNEVALUATED_PROPERTIES_NARROWED,
        ];
        self.compare_unevaluated(ctx, "unevaluatedProperties", a.unevaluated, b.unevaluated, unevaluated);
        let max = [MAX_PROPERTIES_ADDED, MAX_PROPERTIES_REMOVED, MAX_PROPERTIES_INCREASED, MAX_PROPERTIES_DECREASED];
        compare_bound(ctx, "maxProperties", a.max_properties, b.max_properties, max);
        let min = [MIN_PROPERTIES_ADDED, MIN_PROPERTIES_REMOVED, MIN_PROPERTIES_INCREASED, MIN_PROPERTIES_DECREASED];
        compare_bound(ctx, "minProperties", a.min_properties, b.min_properties, min);
    }

    fn compare_required(&mut self, ctx: &mut Ctx, a: &ObjectRules, b: &ObjectRules) {
        ctx.enter("required");
        for name in java_hash_order(a.properties.iter().map(|(name, _)| name.as_str()), 16) {
            if !b.properties.iter().any(|(other, _)| other == name) {
                continue;
            }
            let (before, after) = (a.required.iter().any(|r| r == name), b.required.iter().any(|r| r == name));
            if before && !after {
                ctx.add_at(name, REQUIRED_ATTRIBUTE_REMOVED);
            } else if !before && after {
                let defaulted =
                    property(&b.properties, name).is_some_and(|&id| self.update.node(id).common.default.is_some());
                ctx.add_at(
                    name,
                    if defaulted { REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED } else { REQUIRED_ATTRIBUTE_ADDED },
                );
            }
        }
        ctx.leave();
    }

    fn compare_properties(&mut self, ctx: &mut Ctx, a: &ObjectRules, b: &ObjectRules) {
        ctx.enter("properties");
        for name in hash_set_union(&a.properties, &b.properties) {
            ctx.enter(name);
            match (property(&a.properties, name).copied(), property(&b.properties, name).copied()) {
                (Some(original), None) => self.property_removed(ctx, original, b, name),
                (None, Some(update)) => self.property_added(ctx, update, a, b, name),
                (original, update) => self.compare(ctx, original, update),
            }
            ctx.leave();
        }
        ctx.leave();
    }

    fn property_removed(&mut self, ctx: &mut Ctx, original: NodeId, update: &ObjectRules, name: &str) {
        if is_open_object(self.update, update) {
            return ctx.add(PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL);
        }
        if let Some(partial) = self.partial_object_schema(update, name, false) {
            let mut sub = ctx.sub();
            self.compare(&mut sub, Some(original), Some(partial));
            let covered = sub.is_compatible();
            ctx.diffs.extend(sub.diffs);
            ctx.add(if covered {
                PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            } else {
                PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            });
        } else if matches!(self.original.node(original).kind, Kind::False) {
            ctx.add(PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL);
        } else {
            ctx.add(PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL);
        }
    }

    fn property_added(&mut self, ctx: &mut Ctx, update: NodeId, a: &ObjectRules, b: &ObjectRules, name: &str) {
        if is_open_object(self.original, a) {
            let node = self.update.node(update);
            let required = b.required.iter().any(|r| r == name);
            return ctx.add(match (node.kind.is_empty_schema(), required, node.common.default.is_some()) {
                (true, _, _) => PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL,
                (false, true, true) => REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL,
                (false, true, false) => REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
                (false, false, _) => OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
            });
        }
        if let Some(partial) = self.partial_object_schema(a, name, true) {
            let mut sub = ctx.sub();
            self.compare(&mut sub, Some(partial), Some(update));
            let covered = sub.is_compatible();
            ctx.diffs.extend(sub.diffs);
            ctx.add(if covered {
                PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            } else {
                PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            });
        }
        if b.required.iter().any(|r| r == name) {
            let defaulted = self.update.node(update).common.default.is_some();
            ctx.add(if defaulted {
                REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
            } else {
                REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL
            });
        } else {
            ctx.add(OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL);
        }
    }

    /// The schema a partially open object gives `name`: first matching pattern property, else
    /// `additionalProperties`, else a non-trivial `unevaluatedProperties`.
    fn partial_object_schema(&mut self, rules: &ObjectRules, name: &str, in_original: bool) -> Option<NodeId> {
        for (pattern, schema) in &rules.pattern_properties {
            if self.pattern_finds(pattern, name) {
                return Some(*schema);
            }
        }
        let graph = if in_original { self.original } else { self.update };
        rules.additional.or_else(|| {
            let open_trivially = |id: NodeId| matches!(graph.node(id).kind, Kind::False | Kind::Empty | Kind::True);
            rules.unevaluated.filter(|&id| rules.permits_additional && !open_trivially(id))
        })
    }

    fn compare_dependencies(&mut self, ctx: &mut Ctx, a: &ObjectRules, b: &ObjectRules) {
        ctx.enter("dependencies");
        for name in hash_set_union(&a.property_dependencies, &b.property_dependencies) {
            let (before, after) = (property(&a.property_dependencies, name), property(&b.property_dependencies, name));
            let change = match (before, after) {
                (_, None) => DEPENDENCY_ARRAY_REMOVED,
                (None, Some(_)) => DEPENDENCY_ARRAY_ADDED,
                (Some(x), Some(y)) => {
                    let (grows, shrinks) = (x.iter().all(|v| y.contains(v)), y.iter().all(|v| x.contains(v)));
                    match (grows, shrinks) {
                        (true, true) => continue,
                        (true, false) => DEPENDENCY_ARRAY_EXTENDED,
                        (false, true) => DEPENDENCY_ARRAY_NARROWED,
                        (false, false) => DEPENDENCY_ARRAY_CHANGED,
                    }
                }
            };
            ctx.add_at(name, change);
        }
        for name in hash_set_union(&a.schema_dependencies, &b.schema_dependencies) {
            ctx.enter(name);
            match (property(&a.schema_dependencies, name).copied(), property(&b.schema_dependencies, name).copied()) {
                (_, None) => ctx.add(DEPENDENCY_SCHEMA_REMOVED),
                (None, Some(_)) => ctx.add(DEPENDENCY_SCHEMA_ADDED),
                (original, update) => self.compare(ctx, original, update),
            }
            ctx.leave();
        }
        ctx.leave();
    }

    pub(super) fn compare_arrays(&mut self, ctx: &mut Ctx, a: &ArrayRules, b: &ArrayRules) {
        ctx.enter("items");
        self.compare(ctx, a.all_items, b.all_items);
        ctx.leave();
        self.compare_item_lists(ctx, a, b);
        ctx.enter("additionalItems");
        if a.permits_additional != b.permits_additional {
            ctx.add(if a.permits_additional { ADDITIONAL_ITEMS_REMOVED } else { ADDITIONAL_ITEMS_ADDED });
        } else if a.additional.is_none() && b.additional.is_some() {
            ctx.add(ADDITIONAL_ITEMS_NARROWED);
        } else if b.additional.is_none() && a.additional.is_some() {
            ctx.add(ADDITIONAL_ITEMS_EXTENDED);
        } else {
            self.compare(ctx, a.additional, b.additional);
        }
        ctx.leave();
        let unevaluated = [
            UNEVALUATED_ITEMS_ADDED,
            UNEVALUATED_ITEMS_REMOVED,
            UNEVALUATED_ITEMS_EXTENDED,
            UNEVALUATED_ITEMS_NARROWED,
        ];
        self.compare_unevaluated(ctx, "unevaluatedItems", a.unevaluated, b.unevaluated, unevaluated);
        compare_bound(
            ctx,
            "maxItems",
            a.max_items,
            b.max_items,
            [MAX_ITEMS_ADDED, MAX_ITEMS_REMOVED, MAX_ITEMS_INCREASED, MAX_ITEMS_DECREASED],
        );
        compare_bound(
            ctx,
            "minItems",
            a.min_items,
            b.min_items,
            [MIN_ITEMS_ADDED, MIN_ITEMS_REMOVED, MIN_ITEMS_INCREASED, MIN_ITEMS_DECREASED],
        );
        if a.unique_items != b.unique_items {
            ctx.add_at("uniqueItems", if a.unique_items { UNIQUE_ITEMS_REMOVED } else { UNIQUE_ITEMS_ADDED });
        }
        let max_contains = [MAX_CONTAINS_ADDED, MAX_CONTAINS_REMOVED, MAX_CONTAINS_INCREASED, MAX_CONTAINS_DECREASED];
        compare_bound(ctx, "maxContains", a.max_contains, b.max_contains, max_contains);
        let min_contains = [MIN_CONTAINS_ADDED, MIN_CONTAINS_REMOVED, MIN_CONTAINS_INCREASED, MIN_CONTAINS_DECREASED];
        compare_bound(ctx, "minContains", a.min_contains, b.min_contains, min_contains);
    }

    fn compare_item_lists(&mut self, ctx: &mut Ctx, a: &ArrayRules, b: &ArrayRules) {
        let longest = a.item_schemas.len().max(b.item_schemas.len());
        for index in 0..longest {
            ctx.enter(format!("items/{index}"));
            match (a.item_schemas.get(index).copied(), b.item_schemas.get(index).copied()) {
                (Some(original), None) => self.item_removed(ctx, original, b),
                (None, Some(update)) => self.item_added(ctx, update, a),
                (original, update) => self.compare(ctx, original, update),
            }
            ctx.leave();
        }
    }

    fn item_removed(&mut self, ctx: &mut Ctx, original: NodeId, update: &ArrayRules) {
        if is_open_array(self.update, update) {
            return ctx.add(ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL);
        }
        if let Some(partial) = partial_array_schema(self.update, update) {
            let mut sub = ctx.sub();
            self.compare(&mut sub, Some(original), Some(partial));
            let covered = sub.is_compatible();
            ctx.diffs.extend(sub.diffs);
            ctx.add(if covered {
                ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            } else {
                ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            });
        } else if matches!(self.original.node(original).kind, Kind::False) {
            ctx.add(ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL);
        } else {
            ctx.add(ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL);
        }
    }

    fn item_added(&mut self, ctx: &mut Ctx, update: NodeId, original: &ArrayRules) {
        if is_open_array(self.original, original) {
            let empty = self.update.node(update).kind.is_empty_schema();
            return ctx.add(if empty {
                ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
            } else {
                ITEM_ADDED_TO_OPEN_CONTENT_MODEL
            });
        }
        if let Some(partial) = partial_array_schema(self.original, original) {
            let mut sub = ctx.sub();
            self.compare(&mut sub, Some(partial), Some(update));
            let covered = sub.is_compatible();
            ctx.diffs.extend(sub.diffs);
            ctx.add(if covered {
                ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            } else {
                ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            });
        } else {
            ctx.add(ITEM_ADDED_TO_CLOSED_CONTENT_MODEL);
        }
    }

    /// `compareUnevaluatedItems` (and its property twin): `false`, absent, empty and schema states.
    fn compare_unevaluated(
        &mut self,
        ctx: &mut Ctx,
        keyword: &str,
        a: Option<NodeId>,
        b: Option<NodeId>,
        [added, removed, extended, narrowed]: [super::difference::ChangeType; 4],
    ) {
        if a.is_none() && b.is_none() {
            return;
        }
        let is_false =
            |graph: &Graph, id: Option<NodeId>| id.is_some_and(|id| matches!(graph.node(id).kind, Kind::False));
        let is_empty = |graph: &Graph, id: Option<NodeId>| id.is_some_and(|id| graph.node(id).kind.is_empty_schema());
        let (a_false, b_false) = (is_false(self.original, a), is_false(self.update, b));
        let (a_empty, b_empty) = (is_empty(self.original, a), is_empty(self.update, b));
        ctx.enter(keyword);
        match (a, b) {
            (None, _) => ctx.add(if b_false { removed } else { narrowed }),
            (_, None) => ctx.add(if a_false { added } else { extended }),
            _ if a_false && !b_false => ctx.add(added),
            _ if !a_false && b_false => ctx.add(removed),
            _ if a_empty && !b_empty => ctx.add(narrowed),
            _ if !a_empty && b_empty => ctx.add(extended),
            _ => self.compare(ctx, a, b),
        }
        ctx.leave();
    }
}

fn property<'r, T>(entries: &'r [(String, T)], name: &str) -> Option<&'r T> {
    entries.iter().find(|(key, _)| key == name).map(|(_, value)| value)
}

/// `isOpenContentModel` for objects: no pattern properties, no schema for additional properties, additional
/// properties permitted, and `unevaluatedProperties` absent or trivially true.
fn is_open_object(graph: &Graph, rules: &ObjectRules) -> bool {
    let unevaluated_open = rules.unevaluated.is_none_or(|id| graph.node(id).kind.is_empty_schema());
    rules.pattern_properties.is_empty() && rules.additional.is_none() && rules.permits_additional && unevaluated_open
}

/// `ArraySchemaDiff.isOpenContentModel`.
fn is_open_array(graph: &Graph, rules: &ArrayRules) -> bool {
    rules.permits_additional
        && rules.additional.is_none()
        && rules.unevaluated.is_none_or(|id| graph.node(id).kind.is_empty_schema())
}

/// `ArraySchemaDiff.schemaFromPartiallyOpenContentModel`.
fn partial_array_schema(graph: &Graph, rules: &ArrayRules) -> Option<NodeId> {
    rules.additional.or_else(|| {
        let trivial = |id: NodeId| matches!(graph.node(id).kind, Kind::False | Kind::Empty | Kind::True);
        rules.unevaluated.filter(|&id| rules.permits_additional && !trivial(id))
    })
}

fn hash_set_union<'r, T>(a: &'r [(String, T)], b: &'r [(String, T)]) -> Vec<&'r str> {
    let first = a.len();
    let mut names: Vec<&str> = a.iter().map(|(name, _)| name.as_str()).collect();
    names.extend(b.iter().map(|(name, _)| name.as_str()).filter(|name| !a.iter().any(|(n, _)| n == name)));
    let initial = ((first as f64 / 0.75) as usize + 1).max(16);
    java_hash_order(names.into_iter(), initial)
}

/// The iteration order of a Java `HashSet<String>`/`HashMap` that received `names` in this order, starting
/// from `initial_capacity`: buckets by `String.hashCode()` spread, ties in insertion order.
pub fn java_hash_order<'n>(names: impl Iterator<Item = &'n str>, initial_capacity: usize) -> Vec<&'n str> {
    let mut distinct: Vec<&str> = Vec::new();
    for name in names {
        if !distinct.contains(&name) {
            distinct.push(name);
        }
    }
    let mut capacity = initial_capacity.next_power_of_two();
    while distinct.len() * 4 > capacity * 3 {
        capacity *= 2;
    }
    let bucket = |name: &str| {
        let hash = name.encode_utf16().fold(0i32, |h, unit| h.wrapping_mul(31).wrapping_add(i32::from(unit))) as u32;
        ((hash ^ (hash >> 16)) as usize) & (capacity - 1)
    };
    distinct.sort_by_key(|name| bucket(name));
    distinct
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_order_matches_hash_buckets() {
        // "bar" hashes to bucket 2 and "foo" to bucket 7 of a 16-slot table, whatever the insertion order.
        assert_eq!(java_hash_order(["foo", "bar"].into_iter(), 16), ["bar", "foo"]);
        assert_eq!(java_hash_order(["bar", "foo", "bar"].into_iter(), 16), ["bar", "foo"]);
    }
}
