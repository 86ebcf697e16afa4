//! Confluent's normal form of custom options (`FormatContext.filterOptions` with `normalize`, as of
//! DGS-24835, commit eec1a8b62bf): a parenthesized option is named by its extension's full name, a
//! dotted path (`(opt).a.b = v`) becomes the message literal `(pkg.opt) = { a: { b: v } }`, and the
//! assignments of one singular extension merge into one literal: through a singular message field
//! they deep-merge, a singular scalar set twice keeps the last value, and a repeated field lists its
//! values (each once). Options whose extension is not found keep their written form.

use super::options::{Opt, Value, format_top, leaf_value};
use protox::prost_reflect::prost_types::UninterpretedOption;
use protox::prost_reflect::{DescriptorPool, FieldDescriptor, Kind, MessageDescriptor};

/// One option of a list: already text, or a custom option resolved to its extension.
enum Entry {
    Written(Opt),
    Custom { name: String, repeated: bool, message: Option<MessageDescriptor>, value: Value },
}

impl Entry {
    fn sort_name(&self) -> &str {
        match self {
            Entry::Written(opt) => &opt.sort_name,
            Entry::Custom { name, .. } => name,
        }
    }
}

/// `options` in Confluent's normal form, sorted by name; `written` renders an option as written.
pub(super) fn normalize(
    options: &[&UninterpretedOption],
    package: &str,
    pool: &DescriptorPool,
    written: impl Fn(&UninterpretedOption) -> Opt,
) -> Vec<Opt> {
    let mut entries: Vec<Entry> =
        options.iter().map(|o| resolve(o, package, pool).unwrap_or_else(|| Entry::Written(written(o)))).collect();
    entries.sort_by(|a, b| a.sort_name().cmp(b.sort_name()));
    let mut merged: Vec<Entry> = Vec::with_capacity(entries.len());
    for entry in entries {
        match (merged.last_mut(), entry) {
            (
                Some(Entry::Custom { name, repeated: false, message, value }),
                Entry::Custom { name: next, value: replacement, .. },
            ) if *name == next => {
                let existing = std::mem::replace(value, Value::Raw(String::new()));
                *value = merge_option(message.as_ref(), existing, replacement);
            }
            (_, entry) => merged.push(entry),
        }
    }
    merged
        .into_iter()
        .map(|entry| match entry {
            Entry::Written(opt) => opt,
            Entry::Custom { name, value, .. } => {
                Opt { text: format!("({name}) = {}", format_top(&value)), sort_name: name }
            }
        })
        .collect()
}

/// The option as its extension's full name and a value (a dotted path nested as maps), when its
/// first name part is an extension the schema can see from `package`.
fn resolve(option: &UninterpretedOption, package: &str, pool: &DescriptorPool) -> Option<Entry> {
    let (first, path) = option.name.split_first()?;
    if !first.is_extension {
        return None;
    }
    let extension = find_extension(&first.name_part, package, pool)?;
    let mut value = leaf_value(option);
    for part in path.iter().rev() {
        value = Value::Map(vec![(part.name_part.clone(), value)]);
    }
    let message = match extension.kind() {
        Kind::Message(message) if !extension.is_map() => Some(message),
        _ => None,
    };
    Some(Entry::Custom { name: extension.full_name().to_string(), repeated: extension.is_list(), message, value })
}

/// Confluent's `resolve(getExtendFieldForFullName, name)`: an absolute `.a.b`, else the name under
/// the package and each enclosing package, then as written.
fn find_extension(
    name: &str,
    package: &str,
    pool: &DescriptorPool,
) -> Option<protox::prost_reflect::ExtensionDescriptor> {
    if let Some(absolute) = name.strip_prefix('.') {
        return pool.get_extension_by_name(absolute);
    }
    let mut scope: Vec<&str> = package.split('.').filter(|p| !p.is_empty()).collect();
    loop {
        let candidate = if scope.is_empty() { name.to_string() } else { format!("{}.{name}", scope.join(".")) };
        if let Some(found) = pool.get_extension_by_name(&candidate) {
            return Some(found);
        }
        scope.pop()?;
    }
}

/// `mergeOption`: two message literals merge field by field; otherwise the later value wins.
fn merge_option(container: Option<&MessageDescriptor>, existing: Value, replacement: Value) -> Value {
    match (existing, replacement) {
        (Value::Map(mut existing), Value::Map(replacement)) => {
            merge_maps(container, &mut existing, replacement);
            Value::Map(existing)
        }
        (_, replacement) => replacement,
    }
}

/// `mergeOptionMaps`: each key of `replacement` merged into `existing` by the field it names.
fn merge_maps(
    container: Option<&MessageDescriptor>,
    existing: &mut Vec<(String, Value)>,
    replacement: Vec<(String, Value)>,
) {
    for (key, value) in replacement {
        let field = container.and_then(|m| m.get_field_by_name(&key));
        match existing.iter_mut().find(|(k, _)| *k == key) {
            Some((_, old)) => {
                let previous = std::mem::replace(old, Value::Raw(String::new()));
                *old = merge_values(field.as_ref(), previous, value);
            }
            None => existing.push((key, value)),
        }
    }
}

/// `mergeOptionValues`: a singular message field deep-merges, a singular scalar keeps the later value,
/// a repeated (or unknown) field lists both, each distinct value once.
fn merge_values(field: Option<&FieldDescriptor>, first: Value, second: Value) -> Value {
    let singular = field.is_some_and(|f| !f.is_list());
    let message = field.filter(|f| !f.is_map()).and_then(|f| match f.kind() {
        Kind::Message(message) => Some(message),
        _ => None,
    });
    match (first, second) {
        (Value::Map(mut a), Value::Map(b)) if singular && message.is_some() => {
            merge_maps(message.as_ref(), &mut a, b);
            Value::Map(a)
        }
        (_, second) if singular => second,
        (first, second) => {
            let mut items: Vec<Value> = Vec::new();
            for value in [first, second] {
                let values = match value {
                    Value::List(values) => values,
                    other => vec![other],
                };
                for value in values {
                    if !items.contains(&value) {
                        items.push(value);
                    }
                }
            }
            Value::List(items)
        }
    }
}
