//! Confluent's JSON Schema `Difference`: the change types, which of them are compatible, and their messages.

macro_rules! change_types {
    ($($name:ident),* $(,)?) => {
        /// One kind of change between two JSON Schemas, named exactly as Confluent's `Difference.Type`.
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ChangeType { $($name),* }

        impl ChangeType {
            /// Confluent's name for this change (the `errorType` of a verbose message).
            pub fn as_str(self) -> &'static str {
                match self { $(ChangeType::$name => stringify!($name)),* }
            }
        }
    };
}

change_types! {
    ID_CHANGED, DESCRIPTION_CHANGED, TITLE_CHANGED, DEFAULT_CHANGED,
    SCHEMA_ADDED, SCHEMA_REMOVED, TYPE_EXTENDED, TYPE_NARROWED, TYPE_CHANGED,
    MAX_LENGTH_ADDED, MAX_LENGTH_REMOVED, MAX_LENGTH_INCREASED, MAX_LENGTH_DECREASED,
    MIN_LENGTH_ADDED, MIN_LENGTH_REMOVED, MIN_LENGTH_INCREASED, MIN_LENGTH_DECREASED,
    PATTERN_ADDED, PATTERN_REMOVED, PATTERN_CHANGED,
    MAXIMUM_ADDED, MAXIMUM_REMOVED, MAXIMUM_INCREASED, MAXIMUM_DECREASED,
    MINIMUM_ADDED, MINIMUM_REMOVED, MINIMUM_INCREASED, MINIMUM_DECREASED,
    EXCLUSIVE_MAXIMUM_ADDED, EXCLUSIVE_MAXIMUM_REMOVED, EXCLUSIVE_MAXIMUM_INCREASED, EXCLUSIVE_MAXIMUM_DECREASED,
    EXCLUSIVE_MINIMUM_ADDED, EXCLUSIVE_MINIMUM_REMOVED, EXCLUSIVE_MINIMUM_INCREASED, EXCLUSIVE_MINIMUM_DECREASED,
    MULTIPLE_OF_ADDED, MULTIPLE_OF_REMOVED, MULTIPLE_OF_EXPANDED, MULTIPLE_OF_REDUCED, MULTIPLE_OF_CHANGED,
    REQUIRED_ATTRIBUTE_ADDED, REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED, REQUIRED_ATTRIBUTE_REMOVED,
    MAX_PROPERTIES_ADDED, MAX_PROPERTIES_REMOVED, MAX_PROPERTIES_INCREASED, MAX_PROPERTIES_DECREASED,
    MIN_PROPERTIES_ADDED, MIN_PROPERTIES_REMOVED, MIN_PROPERTIES_INCREASED, MIN_PROPERTIES_DECREASED,
    ADDITIONAL_PROPERTIES_ADDED, ADDITIONAL_PROPERTIES_REMOVED,
    ADDITIONAL_PROPERTIES_EXTENDED, ADDITIONAL_PROPERTIES_NARROWED,
    DEPENDENCY_ARRAY_ADDED, DEPENDENCY_ARRAY_REMOVED, DEPENDENCY_ARRAY_EXTENDED,
    DEPENDENCY_ARRAY_NARROWED, DEPENDENCY_ARRAY_CHANGED, DEPENDENCY_SCHEMA_ADDED, DEPENDENCY_SCHEMA_REMOVED,
    PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
    REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL,
    OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL,
    PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL,
    REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
    REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL,
    OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL,
    PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL,
    PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL,
    PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL,
    PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    UNEVALUATED_PROPERTIES_ADDED, UNEVALUATED_PROPERTIES_REMOVED,
    UNEVALUATED_PROPERTIES_EXTENDED, UNEVALUATED_PROPERTIES_NARROWED,
    MAX_ITEMS_ADDED, MAX_ITEMS_REMOVED, MAX_ITEMS_INCREASED, MAX_ITEMS_DECREASED,
    MIN_ITEMS_ADDED, MIN_ITEMS_REMOVED, MIN_ITEMS_INCREASED, MIN_ITEMS_DECREASED,
    MAX_CONTAINS_ADDED, MAX_CONTAINS_REMOVED, MAX_CONTAINS_INCREASED, MAX_CONTAINS_DECREASED,
    MIN_CONTAINS_ADDED, MIN_CONTAINS_REMOVED, MIN_CONTAINS_INCREASED, MIN_CONTAINS_DECREASED,
    UNIQUE_ITEMS_ADDED, UNIQUE_ITEMS_REMOVED,
    ADDITIONAL_ITEMS_ADDED, ADDITIONAL_ITEMS_REMOVED, ADDITIONAL_ITEMS_EXTENDED, ADDITIONAL_ITEMS_NARROWED,
    UNEVALUATED_ITEMS_ADDED, UNEVALUATED_ITEMS_REMOVED, UNEVALUATED_ITEMS_EXTENDED, UNEVALUATED_ITEMS_NARROWED,
    ITEM_ADDED_TO_OPEN_CONTENT_MODEL,
    ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL,
    ITEM_ADDED_TO_CLOSED_CONTENT_MODEL, ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL,
    ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL,
    ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL,
    ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL,
    ENUM_ARRAY_EXTENDED, ENUM_ARRAY_NARROWED, ENUM_ARRAY_CHANGED,
    COMBINED_TYPE_EXTENDED, COMBINED_TYPE_CHANGED,
    PRODUCT_TYPE_EXTENDED, PRODUCT_TYPE_NARROWED, SUM_TYPE_EXTENDED,
    SUM_TYPE_NARROWED, COMBINED_TYPE_SUBSCHEMAS_CHANGED,
    NOT_TYPE_EXTENDED, NOT_TYPE_NARROWED,
}

use ChangeType::*;
use std::rc::Rc;

impl ChangeType {
    /// Whether a reader of the updated schema still accepts every document the original accepted
    /// (Confluent's `SchemaDiff.COMPATIBLE_CHANGES_STRICT`).
    pub fn is_compatible(self) -> bool {
        matches!(
            self,
            ID_CHANGED
                | DESCRIPTION_CHANGED
                | TITLE_CHANGED
                | DEFAULT_CHANGED
                | SCHEMA_REMOVED
                | TYPE_EXTENDED
                | MAX_LENGTH_INCREASED
                | MAX_LENGTH_REMOVED
                | MIN_LENGTH_DECREASED
                | MIN_LENGTH_REMOVED
                | PATTERN_REMOVED
                | MAXIMUM_INCREASED
                | MAXIMUM_REMOVED
                | MINIMUM_DECREASED
                | MINIMUM_REMOVED
                | EXCLUSIVE_MAXIMUM_INCREASED
                | EXCLUSIVE_MAXIMUM_REMOVED
                | EXCLUSIVE_MINIMUM_DECREASED
                | EXCLUSIVE_MINIMUM_REMOVED
                | MULTIPLE_OF_REDUCED
                | MULTIPLE_OF_REMOVED
                | REQUIRED_ATTRIBUTE_WITH_DEFAULT_ADDED
                | REQUIRED_ATTRIBUTE_REMOVED
                | DEPENDENCY_ARRAY_NARROWED
                | DEPENDENCY_ARRAY_REMOVED
                | DEPENDENCY_SCHEMA_REMOVED
                | MAX_PROPERTIES_INCREASED
                | MAX_PROPERTIES_REMOVED
                | MIN_PROPERTIES_DECREASED
                | MIN_PROPERTIES_REMOVED
                | ADDITIONAL_PROPERTIES_ADDED
                | ADDITIONAL_PROPERTIES_EXTENDED
                | PROPERTY_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
                | REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_UNOPEN_CONTENT_MODEL
                | OPTIONAL_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL
                | PROPERTY_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
                | PROPERTY_REMOVED_FROM_OPEN_CONTENT_MODEL
                | PROPERTY_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
                | PROPERTY_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
                | MAX_ITEMS_INCREASED
                | MAX_ITEMS_REMOVED
                | MIN_ITEMS_DECREASED
                | MIN_ITEMS_REMOVED
                | MAX_CONTAINS_INCREASED
                | MAX_CONTAINS_REMOVED
                | MIN_CONTAINS_DECREASED
                | MIN_CONTAINS_REMOVED
                | UNIQUE_ITEMS_REMOVED
                | ADDITIONAL_ITEMS_ADDED
                | ADDITIONAL_ITEMS_EXTENDED
                | UNEVALUATED_PROPERTIES_ADDED
                | UNEVALUATED_PROPERTIES_EXTENDED
                | UNEVALUATED_ITEMS_ADDED
                | UNEVALUATED_ITEMS_EXTENDED
                | ITEM_WITH_EMPTY_SCHEMA_ADDED_TO_OPEN_CONTENT_MODEL
                | ITEM_ADDED_TO_CLOSED_CONTENT_MODEL
                | ITEM_WITH_FALSE_REMOVED_FROM_CLOSED_CONTENT_MODEL
                | ITEM_REMOVED_FROM_OPEN_CONTENT_MODEL
                | ITEM_ADDED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
                | ITEM_REMOVED_IS_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
                | ENUM_ARRAY_EXTENDED
                | COMBINED_TYPE_EXTENDED
                | PRODUCT_TYPE_NARROWED
                | SUM_TYPE_EXTENDED
                | NOT_TYPE_NARROWED
        )
    }

    /// Confluent's `Difference.error()` for a change at `path`, with `reader`/`writer` filling its two
    /// `%s` slots ("new"/"old" for a backward check, "old"/"new" for a forward one).
    pub fn description(self, path: &str, reader: &str, writer: &str) -> String {
        match self {
            MAXIMUM_ADDED
            | MINIMUM_ADDED
            | EXCLUSIVE_MAXIMUM_ADDED
            | EXCLUSIVE_MINIMUM_ADDED
            | MULTIPLE_OF_ADDED
            | MAX_LENGTH_ADDED
            | MIN_LENGTH_ADDED
            | PATTERN_ADDED
            | REQUIRED_ATTRIBUTE_ADDED
            | MAX_PROPERTIES_ADDED
            | MIN_PROPERTIES_ADDED
            | DEPENDENCY_ARRAY_ADDED
            | DEPENDENCY_SCHEMA_ADDED
            | MAX_ITEMS_ADDED
            | MIN_ITEMS_ADDED
            | MAX_CONTAINS_ADDED
            | MIN_CONTAINS_ADDED
            | UNIQUE_ITEMS_ADDED
            | ADDITIONAL_ITEMS_REMOVED
            | ADDITIONAL_PROPERTIES_REMOVED
            | UNEVALUATED_PROPERTIES_REMOVED
            | UNEVALUATED_ITEMS_REMOVED => {
                format!("The keyword at path '{path}' in the {reader} schema is not present in the {writer} schema")
            }
            MIN_LENGTH_INCREASED
            | MINIMUM_INCREASED
            | EXCLUSIVE_MINIMUM_INCREASED
            | MIN_PROPERTIES_INCREASED
            | MULTIPLE_OF_EXPANDED
            | MIN_ITEMS_INCREASED
            | MIN_CONTAINS_INCREASED => {
                format!(
                    "The value at path '{path}' in the {reader} schema is more than its value in the {writer} schema"
                )
            }
            MAX_LENGTH_DECREASED
            | MAXIMUM_DECREASED
            | MAX_ITEMS_DECREASED
            | MAX_CONTAINS_DECREASED
            | EXCLUSIVE_MAXIMUM_DECREASED
            | MAX_PROPERTIES_DECREASED => {
                format!(
                    "The value at path '{path}' in the {reader} schema is less than its value in the {writer} schema"
                )
            }
            PATTERN_CHANGED | MULTIPLE_OF_CHANGED | DEPENDENCY_ARRAY_CHANGED => {
                format!("The value at path '{path}' is different between the {reader} and {writer} schema")
            }
            ADDITIONAL_ITEMS_NARROWED
            | ENUM_ARRAY_NARROWED
            | SUM_TYPE_NARROWED
            | ADDITIONAL_PROPERTIES_NARROWED
            | UNEVALUATED_PROPERTIES_NARROWED
            | UNEVALUATED_ITEMS_NARROWED => format!(
                "An array or combined type at path '{path}' has fewer elements in the {reader} schema than the {writer} schema"
            ),
            DEPENDENCY_ARRAY_EXTENDED | PRODUCT_TYPE_EXTENDED | SUM_TYPE_EXTENDED | NOT_TYPE_EXTENDED => format!(
                "An array or combined type at path '{path}' has more elements in the {reader} schema than the {writer} schema"
            ),
            TYPE_CHANGED
            | TYPE_NARROWED
            | COMBINED_TYPE_CHANGED
            | COMBINED_TYPE_SUBSCHEMAS_CHANGED
            | ENUM_ARRAY_CHANGED => {
                format!("A type at path '{path}' is different between the {reader} schema and the {writer} schema")
            }
            _ => self.property_or_item_description(path, reader, writer),
        }
    }

    fn property_or_item_description(self, path: &str, reader: &str, writer: &str) -> String {
        match self {
            PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
            | REQUIRED_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
            | REQUIRED_PROPERTY_WITH_DEFAULT_ADDED_TO_OPEN_CONTENT_MODEL
            | OPTIONAL_PROPERTY_ADDED_TO_OPEN_CONTENT_MODEL
            | ITEM_ADDED_TO_OPEN_CONTENT_MODEL => format!(
                "The {reader} schema has an open content model and has a property or item at path '{path}' which is missing in the {writer} schema"
            ),
            REQUIRED_PROPERTY_ADDED_TO_UNOPEN_CONTENT_MODEL => format!(
                "The {reader} schema has an unopen content model and has a required property at path '{path}' which is missing in the {writer} schema"
            ),
            PROPERTY_REMOVED_FROM_CLOSED_CONTENT_MODEL | ITEM_REMOVED_FROM_CLOSED_CONTENT_MODEL => format!(
                "The {reader} schema has a closed content model and is missing a property or item present at path '{path}' in the {writer} schema"
            ),
            PROPERTY_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            | ITEM_REMOVED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL => format!(
                "A property or item is missing in the {reader} schema but present at path '{path}' in the {writer} schema and is not covered by its partially open content model"
            ),
            PROPERTY_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL
            | ITEM_ADDED_NOT_COVERED_BY_PARTIALLY_OPEN_CONTENT_MODEL => format!(
                "The {reader} schema has a property or item at path '{path}' which is missing in the {writer} schema and is not covered by its partially open content model"
            ),
            _ => String::new(),
        }
    }
}

/// One change found by the diff: its type and Confluent's JSON path (`#/properties/foo`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Difference {
    /// What changed.
    pub change: ChangeType,
    /// Where, relative to the pair being compared (no `#/` prefix; empty for the root).
    pub(super) relative: RelativePath,
}

/// A path relative to a compared pair, as a list of `/`-joined prefixes that the copies of one finding
/// share: re-basing a finding under its parent pair adds one small node instead of copying the whole
/// path, so the memory of a check grows with its work units, not with their depth.
#[derive(Debug, Clone, Default)]
pub(super) struct RelativePath(Option<Rc<PathNode>>);

#[derive(Debug)]
struct PathNode {
    head: Rc<str>,
    rest: RelativePath,
}

impl RelativePath {
    /// A path of its own (`properties/foo`); empty for the pair itself.
    pub(super) fn new(text: String) -> RelativePath {
        match text.is_empty() {
            true => RelativePath(None),
            false => RelativePath(Some(Rc::new(PathNode { head: text.into(), rest: RelativePath(None) }))),
        }
    }

    /// This path under `prefix` (`prefix/this`; `prefix` alone when this is empty).
    pub(super) fn under(&self, prefix: &Rc<str>) -> RelativePath {
        match prefix.is_empty() {
            true => self.clone(),
            false => RelativePath(Some(Rc::new(PathNode { head: Rc::clone(prefix), rest: self.clone() }))),
        }
    }

    fn render(&self) -> String {
        let mut text = String::new();
        let mut node = self.0.as_deref();
        while let Some(current) = node {
            if !text.is_empty() {
                text.push('/');
            }
            text.push_str(&current.head);
            node = current.rest.0.as_deref();
        }
        text
    }
}

impl PartialEq for RelativePath {
    fn eq(&self, other: &Self) -> bool {
        self.render() == other.render()
    }
}

impl Eq for RelativePath {}

impl Difference {
    /// Confluent's `jsonPath` (`#/` for the root).
    pub fn json_path(&self) -> String {
        format!("#/{}", self.relative.render())
    }

    /// Confluent's `Difference.toString()` with the reader/writer labels filled in.
    pub fn message(&self, reader: &str, writer: &str) -> String {
        let description = self.change.description(&self.json_path(), reader, writer);
        format!("{{errorType:\"{}\", description:\"{description}\"}}", self.change.as_str())
    }
}
