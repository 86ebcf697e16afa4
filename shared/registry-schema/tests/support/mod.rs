//! What the compatibility test files share.

use registry_schema::compat::CompatibilityLevel;
use registry_schema::{Incompatibility, ParsedSchema};

/// The check the registry runs, within the default budgets (no case here comes near them).
pub fn check(level: CompatibilityLevel, new: &ParsedSchema, previous: &[&ParsedSchema]) -> Vec<Incompatibility> {
    registry_schema::compat::check(level, new, previous).expect("within the default budgets")
}
