//! Option statements, `[...]` option lists, aggregate (`{ ... }`) values and string escapes, as
//! Confluent's `ProtobufSchemaUtils` prints Wire's `OptionElement`s.

use super::indent;
use protox::prost_reflect::prost_types::UninterpretedOption;

/// An option ready to print: `name` is what sorts it (Wire's `getName()`, no parentheses).
#[derive(Debug, Clone)]
pub(super) struct Opt {
    pub sort_name: String,
    pub text: String,
}

impl Opt {
    /// `name = value` where `value` is already formatted.
    pub fn plain(name: &str, value: String) -> Opt {
        Opt { sort_name: name.to_string(), text: format!("{name} = {value}") }
    }
}

/// Converts an uninterpreted option (name and value as the parser saw them).
pub(super) fn from_uninterpreted(option: &UninterpretedOption, normalize: bool) -> Opt {
    let mut name = String::new();
    for (index, part) in option.name.iter().enumerate() {
        if index > 0 {
            name.push('.');
        }
        if part.is_extension {
            name.push('(');
            name.push_str(part.name_part.trim_start_matches('.'));
            name.push(')');
        } else {
            name.push_str(&part.name_part);
        }
    }
    let sort_name = name.trim_start_matches('(').replacen(')', "", 1);
    let value = match leaf_value(option) {
        Value::Raw(_) if option.double_value.is_some() => number(option.double_value.unwrap_or_default(), normalize),
        Value::Map(entries) => {
            let mut out = String::from("{\n");
            format_map(&mut out, &entries, normalize);
            out.push('}');
            out
        }
        Value::Str(text) => quote(&text),
        Value::Raw(text) => text,
        Value::List(_) => String::new(),
    };
    Opt { sort_name, text: format!("{name} = {value}") }
}

/// The value of an option as a value of an aggregate: an identifier or number (raw), string or message
/// literal.
pub(in crate::protobuf) fn leaf_value(option: &UninterpretedOption) -> Value {
    if let Some(ident) = &option.identifier_value {
        Value::Raw(ident.clone())
    } else if let Some(n) = option.positive_int_value {
        Value::Raw(n.to_string())
    } else if let Some(n) = option.negative_int_value {
        Value::Raw(n.to_string())
    } else if let Some(n) = option.double_value {
        Value::Raw(number(n, false))
    } else if let Some(bytes) = &option.string_value {
        Value::Str(String::from_utf8_lossy(bytes).into_owned())
    } else if let Some(aggregate) = &option.aggregate_value {
        Value::Map(parse_aggregate(aggregate))
    } else {
        Value::Raw(String::new())
    }
}

/// A normalized option's value after ` = `: a message literal over several lines, else one value.
pub(super) fn format_top(value: &Value) -> String {
    format_value(value, true)
}

/// A float as Wire keeps it, or as Java's default `DecimalFormat` prints it when normalizing
/// (no grouping, at most three fraction digits).
pub(super) fn number(value: f64, normalize: bool) -> String {
    if !value.is_finite() {
        return value.to_string().to_ascii_lowercase();
    }
    if !normalize {
        return value.to_string();
    }
    let text = format!("{value:.3}");
    let text = text.trim_end_matches('0').trim_end_matches('.');
    if text == "-0" { "0".to_string() } else { text.to_string() }
}

/// `[a = 1]` for one option, else one per line, indented, comma-separated.
pub(super) fn option_list(options: &[Opt]) -> String {
    match options {
        [one] => format!("[{}]", one.text),
        many => {
            let mut out = String::from("[\n");
            for (index, option) in many.iter().enumerate() {
                let comma = if index + 1 < many.len() { "," } else { "" };
                indent(&mut out, &format!("{}{comma}", option.text));
            }
            out.push(']');
            out
        }
    }
}

/// Confluent's escapes (`ProtobufSchemaUtils.escapeChars`).
const CONFLUENT_ESCAPES: &[(char, &str)] = &[
    ('\u{7}', "\\a"),
    ('\u{8}', "\\b"),
    ('\u{c}', "\\f"),
    ('\n', "\\n"),
    ('\r', "\\r"),
    ('\t', "\\t"),
    ('\u{b}', "\\v"),
    ('\\', "\\\\"),
    ('\'', "\\'"),
    ('"', "\\\""),
];

/// A string literal with Confluent's escapes.
pub(super) fn quote(text: &str) -> String {
    quote_escaping(text, CONFLUENT_ESCAPES)
}

/// `text` in double quotes, each character `escapes` names replaced by its escape.
pub(in crate::protobuf) fn quote_escaping(text: &str, escapes: &[(char, &str)]) -> String {
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        match escapes.iter().find(|(escaped, _)| *escaped == c) {
            Some((_, escape)) => out.push_str(escape),
            None => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A value inside an aggregate option.
#[derive(Debug, Clone, PartialEq)]
pub(in crate::protobuf) enum Value {
    Str(String),
    Raw(String),
    Map(Vec<(String, Value)>),
    List(Vec<Value>),
}

fn format_map(out: &mut String, entries: &[(String, Value)], normalize: bool) {
    let mut entries = entries.to_vec();
    if normalize {
        entries.sort_by(|a, b| a.0.cmp(&b.0));
    }
    for (index, (key, value)) in entries.iter().enumerate() {
        let comma = if index + 1 < entries.len() { "," } else { "" };
        indent(out, &format!("{key}: {}{comma}", format_value(value, normalize)));
    }
}

fn format_value(value: &Value, normalize: bool) -> String {
    match value {
        Value::Str(s) => quote(s),
        Value::Raw(raw) => match raw.parse::<f64>() {
            Ok(n) if normalize && raw.contains(['.', 'e', 'E']) => number(n, true),
            _ => raw.clone(),
        },
        Value::Map(entries) => {
            let mut out = String::from("{\n");
            format_map(&mut out, entries, normalize);
            out.push('}');
            out
        }
        Value::List(items) if normalize && items.len() == 1 => format_value(&items[0], normalize),
        Value::List(items) => {
            let mut out = String::from("[\n");
            for (index, item) in items.iter().enumerate() {
                let comma = if index + 1 < items.len() { "," } else { "" };
                indent(&mut out, &format!("{}{comma}", format_value(item, normalize)));
            }
            out.push(']');
            out
        }
    }
}

/// Tokens of protobuf text format: strings (unescaped), punctuation, and bare words.
fn tokens(text: &str) -> Vec<(char, String)> {
    let chars: Vec<char> = text.chars().collect();
    let (mut out, mut i) = (Vec::new(), 0);
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
        } else if c == '#' {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if c == '"' || c == '\'' {
            let mut s = String::new();
            i += 1;
            while i < chars.len() && chars[i] != c {
                if chars[i] == '\\' && i + 1 < chars.len() {
                    i += 1;
                    s.push(match chars[i] {
                        'n' => '\n',
                        't' => '\t',
                        'r' => '\r',
                        other => other,
                    });
                } else {
                    s.push(chars[i]);
                }
                i += 1;
            }
            i += 1;
            out.push(('"', s));
        } else if "{}[]<>:,;".contains(c) {
            out.push((c, c.to_string()));
            i += 1;
        } else {
            let start = i;
            while i < chars.len() && !chars[i].is_whitespace() && !"{}[]<>:,;\"'#".contains(chars[i]) {
                i += 1;
            }
            out.push(('w', chars[start..i].iter().collect()));
        }
    }
    out
}

/// Parses the body of an aggregate option into Wire's map (a repeated key becomes a list).
fn parse_aggregate(text: &str) -> Vec<(String, Value)> {
    let tokens = tokens(text);
    let mut pos = 0;
    let body = text.trim();
    let skip_brace = body.starts_with('{') && body.ends_with('}');
    if skip_brace {
        pos = 1;
    }
    parse_entries(&tokens, &mut pos, 0)
}

fn parse_entries(tokens: &[(char, String)], pos: &mut usize, depth: usize) -> Vec<(String, Value)> {
    let mut entries: Vec<(String, Value)> = Vec::new();
    while let Some((kind, text)) = tokens.get(*pos) {
        match kind {
            '}' | '>' => {
                *pos += 1;
                break;
            }
            ',' | ';' => *pos += 1,
            '[' => {
                let mut key = String::from("[");
                *pos += 1;
                while let Some((k, t)) = tokens.get(*pos) {
                    *pos += 1;
                    if *k == ']' {
                        break;
                    }
                    key.push_str(t);
                }
                key.push(']');
                push_entry(&mut entries, key, parse_value(tokens, pos, depth));
            }
            _ => {
                let key = text.clone();
                *pos += 1;
                push_entry(&mut entries, key, parse_value(tokens, pos, depth));
            }
        }
    }
    entries
}

fn push_entry(entries: &mut Vec<(String, Value)>, key: String, value: Value) {
    match entries.iter_mut().find(|(k, _)| *k == key) {
        Some((_, Value::List(items))) => items.push(value),
        Some((_, existing)) => *existing = Value::List(vec![existing.clone(), value]),
        None => entries.push((key, value)),
    }
}

fn parse_value(tokens: &[(char, String)], pos: &mut usize, depth: usize) -> Value {
    if tokens.get(*pos).is_some_and(|(k, _)| *k == ':') {
        *pos += 1;
    }
    let Some((kind, text)) = tokens.get(*pos) else { return Value::Raw(String::new()) };
    *pos += 1;
    match kind {
        '{' | '<' if depth < super::super::MAX_DEPTH => Value::Map(parse_entries(tokens, pos, depth + 1)),
        '[' if depth < super::super::MAX_DEPTH => {
            let mut items = Vec::new();
            while let Some((k, _)) = tokens.get(*pos) {
                match k {
                    ']' => {
                        *pos += 1;
                        break;
                    }
                    ',' => *pos += 1,
                    _ => items.push(parse_value(tokens, pos, depth + 1)),
                }
            }
            Value::List(items)
        }
        '"' => {
            let mut s = text.clone();
            while let Some(('"', more)) = tokens.get(*pos) {
                s.push_str(more);
                *pos += 1;
            }
            Value::Str(s)
        }
        _ => Value::Raw(text.clone()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aggregates_print_one_entry_per_line_and_repeated_keys_as_lists() {
        let entries = parse_aggregate("a: 1 b { c: \"x\" } d: [1, 2] e: 3 e: 4");
        let mut out = String::new();
        format_map(&mut out, &entries, false);
        assert_eq!(
            out,
            "  a: 1,\n  b: {\n    c: \"x\"\n  },\n  d: [\n    1,\n    2\n  ],\n  e: [\n    3,\n    4\n  ]\n"
        );
    }

    #[test]
    fn strings_use_confluents_escapes_and_numbers_java_decimal_format() {
        assert_eq!(quote("a\"b\\c\n'"), "\"a\\\"b\\\\c\\n\\'\"");
        assert_eq!(number(1.0, true), "1");
        assert_eq!(number(1.23456, true), "1.235");
        assert_eq!(number(2.5, false), "2.5");
    }
}
