//! The registry as a machine-readable catalog: what the analysis endpoints compute over schemas
//! already parsed by `registry-schema` (AxonOps Schema Registry's analysis API).
//!
//! Pure functions only, like `registry-schema`: no I/O, no AWS, no HTTP. The HTTP layer reads the
//! schemas (within the caller's scope and a bounded number of store reads) and hands them here.
//!
//! - [`fields`]: the fields of a schema as dot-separated paths with a type name, per format.
//! - [`matching`]: how a field name, a type or a text matches a query (naming variants, fuzzy,
//!   regex), with bounded regexes.
//! - [`advice`]: quality score, field-set similarity, subject-name strategies and patterns,
//!   migration steps.
//! - [`analysis`]: field diff between two versions, complexity grade, validation and normal form.

pub mod advice;
pub mod analysis;
pub mod fields;
pub mod matching;

pub use advice::{
    NameCheck, Quality, SubjectPattern, check_subject_name, migration_steps, name_set, quality, similarity,
};
pub use analysis::{
    Complexity, FieldChange, FieldDiff, FieldEntry, Normalized, Validated, complexity, diff, normalize, validate,
};
pub use fields::{Field, fields};
pub use matching::{FieldMode, MatchError, Matcher, snake_case};
