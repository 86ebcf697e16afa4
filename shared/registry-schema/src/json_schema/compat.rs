//! JSON Schema compatibility as Confluent's json-schema-provider `SchemaDiff`.
//!
//! Backward means the new schema reads what the old one wrote: diff(old → new) may contain only changes in
//! Confluent's compatible set; forward is diff(new → old); full is both, forward findings first (Confluent's
//! `mutualReadStrategy`). Each incompatible change becomes Confluent's `Difference.toString()` with the
//! reader/writer labels of `SchemaValidatorBuilder`, e.g. `{errorType:"TYPE_CHANGED", description:"A type at
//! path '#/properties/foo' is different between the new schema and the old schema"}`. Documents are modelled
//! as Everit (Confluent's JSON Schema library) models them ([`model`]); `$ref`s resolve inside the document and
//! into the schema's references.

mod decimal;
mod diff;
pub mod difference;
mod load;
pub mod model;
mod structure;

use super::JsonSchema;
use crate::compat::Direction;
use crate::limits::Meter;
use crate::{Incompatibility, SchemaError};
pub use difference::{ChangeType, Difference};
use model::Graph;

/// Incompatibilities of `new` against `old` in `direction`; empty when compatible. The diffs' work
/// (pairs compared, differences copied from the memo) is charged to `work`.
///
/// `previous_index` of each result is 0; [`crate::compat::check_pair`] sets the real one.
pub fn check(
    direction: Direction,
    new: &JsonSchema,
    old: &JsonSchema,
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    let (new, old) = (graph(new), graph(old));
    Ok(match direction {
        Direction::Backward => incompatible(&old, &new, ("new", "old"), work)?,
        Direction::Forward => incompatible(&new, &old, ("old", "new"), work)?,
        Direction::Full => {
            let mut found = incompatible(&new, &old, ("old", "new"), work)?;
            found.extend(incompatible(&old, &new, ("new", "old"), work)?);
            found
        }
    })
}

/// Every difference Confluent's `SchemaDiff.compare(original, update)` reports, compatible ones included,
/// in Confluent's order.
pub fn differences(original: &JsonSchema, update: &JsonSchema) -> Vec<Difference> {
    diff::Differ::new(&graph(original), &graph(update)).differences()
}

fn graph(schema: &JsonSchema) -> Graph {
    Graph::load(schema.document(), schema.draft(), schema.dependencies())
}

fn incompatible(
    original: &Graph,
    update: &Graph,
    (reader, writer): (&str, &str),
    work: &mut Meter,
) -> Result<Vec<Incompatibility>, SchemaError> {
    let (differences, spent) = diff::Differ::within(original, update, work.remaining()).differences_and_work();
    work.charge(spent)?;
    Ok(differences
        .into_iter()
        .filter(|d| !d.change.is_compatible())
        .map(|d| Incompatibility {
            previous_index: 0,
            path: d.json_path(),
            kind: d.change.as_str().to_string(),
            message: d.message(reader, writer),
        })
        .collect())
}
