//! JSON values that keep every number as it was written.
//!
//! serde_json (without its workspace-wide `arbitrary_precision` feature, which the Lambda adapter's
//! untagged enums do not survive) reads an integer beyond 64 bits, or a decimal with more digits than
//! an `f64` holds, as the nearest `f64`: `{"const":12345678901234567890123}` and `...124` would be
//! stored as the same text. Schema text is therefore read a second time into this tree, whose numbers
//! keep their literal; the stored text, fingerprints and compatibility rules read numbers from here.
//! The text is first parsed by serde_json (the syntax check, with its error messages), so this parser
//! only ever sees valid JSON within the depth budget.
//!
//! Numbers compare by their decimal value, as JSON Schema defines equality (`1`, `1.0` and `10e-1` are
//! equal; `12345678901234567890123` and `...124` are not). [`Number::canonical`] writes a number as
//! serde_json would whenever that loses nothing, so the stored text of schemas without such numbers is
//! what it always was.

use indexmap::IndexMap;
use std::borrow::Cow;
use std::fmt;

/// An object: keys in submitted order, a repeated key keeping its first position and its last value
/// (as Jackson's `ObjectNode` and serde_json's `preserve_order` map both do).
pub type Map<K, V> = IndexMap<K, V>;

/// A JSON value whose numbers are kept as written.
#[derive(Debug, Clone, PartialEq, Default)]
pub enum Value {
    #[default]
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Value>),
    Object(Map<String, Value>),
}

/// A JSON number literal, exactly as written.
#[derive(Debug, Clone)]
pub struct Number(Box<str>);

impl Number {
    /// The nearest literal of a finite `f64` (shortest round-tripping digits).
    pub fn from_f64(value: f64) -> Option<Number> {
        value.is_finite().then(|| Number(format!("{value:?}").into()))
    }

    /// The literal as written.
    pub fn literal(&self) -> &str {
        &self.0
    }

    /// Whether the literal has neither a fraction nor an exponent.
    pub fn is_integer_literal(&self) -> bool {
        !self.0.contains(['.', 'e', 'E'])
    }

    /// The value as an `i64`, for an integer literal in range.
    pub fn as_i64(&self) -> Option<i64> {
        self.is_integer_literal().then(|| self.0.parse().ok()).flatten()
    }

    /// The value as a `u64`, for a non-negative integer literal in range.
    pub fn as_u64(&self) -> Option<u64> {
        self.is_integer_literal().then(|| self.0.parse().ok()).flatten()
    }

    /// The nearest `f64` (finite for every literal serde_json accepted).
    pub fn as_f64(&self) -> Option<f64> {
        self.0.parse::<f64>().ok().filter(|value| value.is_finite())
    }

    /// The text to store: serde_json's own rendering when it denotes the same decimal value (so
    /// stored texts without long numbers are unchanged), else the literal with all its digits.
    pub fn canonical(&self) -> Cow<'_, str> {
        match serde_json::from_str::<serde_json::Number>(&self.0) {
            Ok(number) => {
                let rendered = number.to_string();
                if Decimal::of(&rendered) == Decimal::of(&self.0) {
                    Cow::Owned(rendered)
                } else {
                    Cow::Borrowed(&self.0)
                }
            }
            Err(_) => Cow::Borrowed(&self.0),
        }
    }

    /// serde_json's (possibly rounded) number, for the libraries that need one.
    pub fn to_serde(&self) -> Option<serde_json::Number> {
        serde_json::from_str(&self.0).ok()
    }
}

impl PartialEq for Number {
    fn eq(&self, other: &Self) -> bool {
        self.0 == other.0 || Decimal::of(&self.0) == Decimal::of(&other.0)
    }
}

/// A decimal value in normal form: sign, significant digits without leading or trailing zeros, and
/// the power of ten of the last digit. Zero is one value, whatever its sign or exponent.
#[derive(Debug, PartialEq, Eq)]
struct Decimal {
    negative: bool,
    digits: String,
    exponent: i128,
}

impl Decimal {
    /// Reads a JSON (or Rust float) number literal.
    fn of(literal: &str) -> Decimal {
        let (negative, unsigned) = match literal.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, literal),
        };
        let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
            Some((mantissa, exponent)) => (mantissa, parse_exponent(exponent)),
            None => (unsigned, 0),
        };
        let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
        let joined = format!("{whole}{fraction}");
        let leading = joined.trim_start_matches('0');
        let significant = leading.trim_end_matches('0');
        if significant.is_empty() {
            return Decimal { negative: false, digits: String::new(), exponent: 0 };
        }
        let trailing = (leading.len() - significant.len()) as i128;
        let exponent = exponent.saturating_sub(fraction.len() as i128).saturating_add(trailing);
        Decimal { negative, digits: significant.to_string(), exponent }
    }
}

/// An exponent's value, saturating (`1e99999999999999999999999` is beyond any `f64` anyway).
fn parse_exponent(text: &str) -> i128 {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(digits) => (true, digits),
        None => (false, text.strip_prefix('+').unwrap_or(text)),
    };
    let magnitude = digits
        .bytes()
        .filter(u8::is_ascii_digit)
        .fold(0i128, |value, digit| value.saturating_mul(10).saturating_add(i128::from(digit - b'0')));
    if negative { -magnitude } else { magnitude }
}

impl Value {
    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(text) => Some(text),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&Vec<Value>> {
        match self {
            Value::Array(items) => Some(items),
            _ => None,
        }
    }

    /// The entries, if this is an object.
    pub fn as_object(&self) -> Option<&Map<String, Value>> {
        match self {
            Value::Object(object) => Some(object),
            _ => None,
        }
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<&Number> {
        match self {
            Value::Number(number) => Some(number),
            _ => None,
        }
    }

    /// See [`Number::as_i64`].
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(Number::as_i64)
    }

    /// See [`Number::as_f64`].
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().and_then(Number::as_f64)
    }

    pub fn is_i64(&self) -> bool {
        self.as_i64().is_some()
    }

    pub fn is_number(&self) -> bool {
        matches!(self, Value::Number(_))
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Value::String(_))
    }

    pub fn is_boolean(&self) -> bool {
        matches!(self, Value::Bool(_))
    }

    pub fn is_object(&self) -> bool {
        matches!(self, Value::Object(_))
    }

    pub fn is_null(&self) -> bool {
        matches!(self, Value::Null)
    }

    /// The member `key` of an object.
    pub fn get(&self, key: &str) -> Option<&Value> {
        self.as_object().and_then(|object| object.get(key))
    }

    /// The value at a JSON Pointer (RFC 6901), as serde_json's `Value::pointer`.
    pub fn pointer(&self, pointer: &str) -> Option<&Value> {
        if pointer.is_empty() {
            return Some(self);
        }
        let rest = pointer.strip_prefix('/')?;
        rest.split('/').map(|token| token.replace("~1", "/").replace("~0", "~")).try_fold(self, |value, token| {
            match value {
                Value::Object(object) => object.get(&token),
                Value::Array(items) => {
                    let valid = !token.starts_with('+') && (token == "0" || !token.starts_with('0'));
                    valid.then(|| token.parse::<usize>().ok()).flatten().and_then(|index| items.get(index))
                }
                _ => None,
            }
        })
    }

    /// A text equal for two values exactly when they are equal ([`PartialEq`]: numbers by decimal value,
    /// objects whatever their key order), so that sets of values compare in linear time.
    pub fn equality_key(&self) -> String {
        let mut key = String::new();
        self.write_equality_key(&mut key);
        key
    }

    fn write_equality_key(&self, key: &mut String) {
        match self {
            Value::Null => key.push('n'),
            Value::Bool(flag) => key.push(if *flag { 't' } else { 'f' }),
            Value::Number(number) => {
                let decimal = Decimal::of(&number.0);
                let sign = if decimal.negative { "-" } else { "" };
                key.push_str(&format!("#{sign}{}e{}", decimal.digits, decimal.exponent));
            }
            Value::String(text) => key.push_str(&serde_json::to_string(text).unwrap_or_default()),
            Value::Array(items) => {
                key.push('[');
                for item in items {
                    item.write_equality_key(key);
                    key.push(',');
                }
                key.push(']');
            }
            Value::Object(object) => {
                let mut entries: Vec<(&String, &Value)> = object.iter().collect();
                entries.sort_by(|a, b| a.0.cmp(b.0));
                key.push('{');
                for (name, item) in entries {
                    key.push_str(&serde_json::to_string(name).unwrap_or_default());
                    key.push(':');
                    item.write_equality_key(key);
                    key.push(',');
                }
                key.push('}');
            }
        }
    }

    /// serde_json's value (numbers rounded where they must be), for the libraries that need one.
    pub fn to_serde(&self) -> serde_json::Value {
        match self {
            Value::Null => serde_json::Value::Null,
            Value::Bool(flag) => serde_json::Value::Bool(*flag),
            Value::Number(number) => number.to_serde().map_or(serde_json::Value::Null, serde_json::Value::Number),
            Value::String(text) => serde_json::Value::String(text.clone()),
            Value::Array(items) => serde_json::Value::Array(items.iter().map(Value::to_serde).collect()),
            Value::Object(object) => {
                serde_json::Value::Object(object.iter().map(|(key, value)| (key.clone(), value.to_serde())).collect())
            }
        }
    }
}

/// Compact JSON as serde_json writes it, numbers by [`Number::canonical`].
impl fmt::Display for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::Null => f.write_str("null"),
            Value::Bool(flag) => f.write_str(if *flag { "true" } else { "false" }),
            Value::Number(number) => f.write_str(&number.canonical()),
            Value::String(text) => write_string(f, text),
            Value::Array(items) => {
                f.write_str("[")?;
                for (index, item) in items.iter().enumerate() {
                    if index > 0 {
                        f.write_str(",")?;
                    }
                    item.fmt(f)?;
                }
                f.write_str("]")
            }
            Value::Object(object) => {
                f.write_str("{")?;
                for (index, (key, item)) in object.iter().enumerate() {
                    if index > 0 {
                        f.write_str(",")?;
                    }
                    write_string(f, key)?;
                    f.write_str(":")?;
                    item.fmt(f)?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A string literal escaped exactly as serde_json escapes it.
fn write_string(f: &mut fmt::Formatter<'_>, text: &str) -> fmt::Result {
    match serde_json::to_string(text) {
        Ok(literal) => f.write_str(&literal),
        Err(_) => Err(fmt::Error),
    }
}

/// Parses `text`, which serde_json has already accepted: numbers keep their literal.
pub(crate) fn parse(text: &str) -> Result<Value, String> {
    let mut reader = Reader { text, at: 0 };
    let value = reader.value()?;
    reader.skip_whitespace();
    match reader.at == text.len() {
        true => Ok(value),
        false => Err(format!("trailing characters at byte {}", reader.at)),
    }
}

/// A cursor over JSON text. Recursion is bounded by the depth budget checked before parsing.
struct Reader<'a> {
    text: &'a str,
    at: usize,
}

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.at).copied()
    }

    fn skip_whitespace(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.at += 1;
        }
    }

    fn error(&self, what: &str) -> String {
        format!("{what} at byte {}", self.at)
    }

    fn expect(&mut self, byte: u8) -> Result<(), String> {
        self.skip_whitespace();
        match self.peek() {
            Some(found) if found == byte => {
                self.at += 1;
                Ok(())
            }
            _ => Err(self.error(&format!("expected `{}`", char::from(byte)))),
        }
    }

    fn keyword(&mut self, word: &str, value: Value) -> Result<Value, String> {
        match self.text.get(self.at..).is_some_and(|rest| rest.starts_with(word)) {
            true => {
                self.at += word.len();
                Ok(value)
            }
            false => Err(self.error("expected a value")),
        }
    }

    fn value(&mut self) -> Result<Value, String> {
        self.skip_whitespace();
        match self.peek() {
            Some(b'{') => self.object(),
            Some(b'[') => self.array(),
            Some(b'"') => self.string().map(Value::String),
            Some(b't') => self.keyword("true", Value::Bool(true)),
            Some(b'f') => self.keyword("false", Value::Bool(false)),
            Some(b'n') => self.keyword("null", Value::Null),
            Some(b'-' | b'0'..=b'9') => Ok(self.number()),
            _ => Err(self.error("expected a value")),
        }
    }

    fn number(&mut self) -> Value {
        let start = self.at;
        while matches!(self.peek(), Some(b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9')) {
            self.at += 1;
        }
        Value::Number(Number(self.text.get(start..self.at).unwrap_or_default().into()))
    }

    /// A string literal, decoded by serde_json (escapes and surrogate pairs as it reads them).
    fn string(&mut self) -> Result<String, String> {
        let start = self.at;
        self.at += 1;
        let mut escaped = false;
        loop {
            match self.peek() {
                None => return Err(self.error("unterminated string")),
                Some(b'\\') => {
                    escaped = true;
                    self.at += 2;
                }
                Some(b'"') => {
                    self.at += 1;
                    break;
                }
                Some(_) => self.at += 1,
            }
        }
        let literal = self.text.get(start..self.at).ok_or_else(|| self.error("unterminated string"))?;
        match escaped {
            false => Ok(literal.get(1..literal.len() - 1).unwrap_or_default().to_string()),
            true => serde_json::from_str(literal).map_err(|e| e.to_string()),
        }
    }

    fn array(&mut self) -> Result<Value, String> {
        let mut items = Vec::new();
        self.members(b']', |parser| {
            items.push(parser.value()?);
            Ok(())
        })?;
        Ok(Value::Array(items))
    }

    fn object(&mut self) -> Result<Value, String> {
        let mut object = Map::new();
        self.members(b'}', |parser| {
            parser.skip_whitespace();
            if parser.peek() != Some(b'"') {
                return Err(parser.error("expected a key"));
            }
            let key = parser.string()?;
            parser.expect(b':')?;
            let value = parser.value()?;
            object.insert(key, value);
            Ok(())
        })?;
        Ok(Value::Object(object))
    }

    /// Past the opening bracket at `at`: the members of an array or object, each read by `member`,
    /// separated by `,` up to `close` (consumed). No member at all is fine; a trailing `,` is not.
    fn members(&mut self, close: u8, mut member: impl FnMut(&mut Self) -> Result<(), String>) -> Result<(), String> {
        self.at += 1;
        self.skip_whitespace();
        if self.peek() == Some(close) {
            self.at += 1;
            return Ok(());
        }
        loop {
            member(self)?;
            self.skip_whitespace();
            match self.peek() {
                Some(b',') => self.at += 1,
                Some(byte) if byte == close => {
                    self.at += 1;
                    return Ok(());
                }
                _ => return Err(self.error(&format!("expected `,` or `{}`", char::from(close)))),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn canonical(text: &str) -> String {
        parse(text).map(|value| value.to_string()).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn long_numbers_keep_every_digit() {
        assert_eq!(canonical(r#"{"const":12345678901234567890123}"#), r#"{"const":12345678901234567890123}"#);
        assert_ne!(canonical("12345678901234567890123"), canonical("12345678901234567890124"));
        assert_eq!(canonical("-98765432109876543210"), "-98765432109876543210");
        assert_eq!(canonical("0.1000000000000000000000000001"), "0.1000000000000000000000000001");
        assert_eq!(canonical("1.00000000000000000001e-5"), "1.00000000000000000001e-5");
    }

    #[test]
    fn numbers_serde_json_keeps_exactly_are_written_as_before() {
        for text in ["0", "-7", "18446744073709551615", "1.5", "1e2", "1E+2", "0.10", "-0", "-0.0", "1e23", "[1,2.50]"]
        {
            let before = serde_json::from_str::<serde_json::Value>(text).map(|v| v.to_string()).unwrap_or_default();
            assert_eq!(canonical(text), before, "{text}");
        }
    }

    #[test]
    fn numbers_compare_by_decimal_value() {
        let number = |text: &str| parse(text).unwrap_or_default();
        assert_eq!(number("1"), number("1.0"));
        assert_eq!(number("100"), number("1e2"));
        assert_eq!(number("0.5"), number("5E-1"));
        assert_eq!(number("0"), number("-0.0"));
        assert_ne!(number("1"), number("-1"));
        assert_ne!(number("12345678901234567890123"), number("12345678901234567890124"));
        assert_ne!(number("0.1"), number("0.1000000000000000000000000001"));
    }

    #[test]
    fn equality_keys_agree_with_equality() {
        let values: Vec<Value> = [
            "1",
            "1.0",
            "10e-1",
            "-1",
            "0",
            "-0.0",
            "\"1\"",
            "null",
            "true",
            "[1,2]",
            "[2,1]",
            "[1.0,2]",
            r#"{"a":1,"b":[0]}"#,
            r#"{"b":[0.0],"a":1e0}"#,
            r#"{"a":2}"#,
            "12345678901234567890123",
            "12345678901234567890124",
        ]
        .iter()
        .map(|text| parse(text).unwrap_or_default())
        .collect();
        for a in &values {
            for b in &values {
                assert_eq!(a == b, a.equality_key() == b.equality_key(), "{a} vs {b}");
            }
        }
    }

    #[test]
    fn strings_keys_and_order_read_as_serde_json_reads_them() {
        let text = r#" { "b" : "\u00e9\n\"\ud83d\ude00" , "a" : [ true , false , null , { } , [ ] ] , "b" : 2 } "#;
        let ours = parse(text).unwrap_or_default();
        let theirs: serde_json::Value = serde_json::from_str(text).unwrap_or_default();
        assert_eq!(ours.to_string(), theirs.to_string());
        assert_eq!(ours.to_serde(), theirs);
    }

    #[test]
    fn pointers_resolve_like_serde_json() {
        let value = parse(r#"{"a/b":[0,{"c~d":1}]}"#).unwrap_or_default();
        assert_eq!(value.pointer("/a~1b/1/c~0d").map(ToString::to_string), Some("1".into()));
        assert_eq!(value.pointer(""), Some(&value));
        assert!(value.pointer("/a~1b/01").is_none());
        assert!(value.pointer("a").is_none());
    }
}
