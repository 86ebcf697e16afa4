//! JSON output the way Jackson writes it inside Java Avro's `Schema.toString()`: compact,
//! upper-case `\uXXXX` escapes, integers with all their digits (Jackson's `BigIntegerNode` beyond 64
//! bits) and floating-point numbers in Java's `Double.toString` form (a `DoubleNode`, as Java reads them).

use crate::json_value::{Number, Value};

/// Appends `s` as a JSON string literal, escaped as Jackson does (short escapes for `"`, `\`,
/// backspace, tab, form feed, newline and carriage return; `\u00XX` with upper-case hex for the
/// other control characters; everything else, including `/` and non-ASCII, written as is).
pub(crate) fn write_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{8}' => out.push_str("\\b"),
            '\t' => out.push_str("\\t"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// Appends `items` as a JSON array of string literals.
pub(crate) fn write_str_array<S: AsRef<str>>(out: &mut String, items: impl IntoIterator<Item = S>) {
    out.push('[');
    for (i, item) in items.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_str(out, item.as_ref());
    }
    out.push(']');
}

/// Appends `value` as compact JSON, object keys in their stored order.
pub(crate) fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_str(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => {
            out.push('{');
            for (i, (key, item)) in map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, key);
                out.push(':');
                write_value(out, item);
            }
            out.push('}');
        }
    }
}

/// Integers as digits, however many; other numbers as Jackson writes a `DoubleNode`.
fn write_number(out: &mut String, n: &Number) {
    if let Some(i) = n.as_i64() {
        out.push_str(&i.to_string());
    } else if n.is_integer_literal() {
        out.push_str(n.literal());
    } else if let Some(f) = n.as_f64() {
        out.push_str(&java_double(f));
    }
}

/// Java's `Double.toString(d)`: plain decimal for 1e-3 <= |d| < 1e7 (at least one fraction
/// digit), otherwise `d.dddE±n`; shortest round-tripping digits. Non-finite values are quoted,
/// as Jackson's default `QUOTE_NON_NUMERIC_NUMBERS` does.
pub(crate) fn java_double(d: f64) -> String {
    if d.is_nan() {
        return "\"NaN\"".to_string();
    }
    if d.is_infinite() {
        return if d > 0.0 { "\"Infinity\"" } else { "\"-Infinity\"" }.to_string();
    }
    if d == 0.0 {
        return if d.is_sign_negative() { "-0.0" } else { "0.0" }.to_string();
    }
    let sign = if d < 0.0 { "-" } else { "" };
    let sci = format!("{:e}", d.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((sci.as_str(), "0"));
    let exp: i32 = exp.parse().unwrap_or(0);
    let digits: String = mantissa.chars().filter(|c| c.is_ascii_digit()).collect();
    let abs = d.abs();
    if (1e-3..1e7).contains(&abs) {
        if exp >= 0 {
            let int_len = (exp + 1) as usize;
            let mut int_part: String = digits.chars().take(int_len).collect();
            while int_part.len() < int_len {
                int_part.push('0');
            }
            let frac: String = digits.chars().skip(int_len).collect();
            let frac = if frac.is_empty() { "0".to_string() } else { frac };
            format!("{sign}{int_part}.{frac}")
        } else {
            let zeros = "0".repeat((-exp - 1) as usize);
            format!("{sign}0.{zeros}{digits}")
        }
    } else {
        let (first, rest) = digits.split_at(1.min(digits.len()));
        let rest = if rest.is_empty() { "0" } else { rest };
        format!("{sign}{first}.{rest}E{exp}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn doubles_print_like_java() {
        assert_eq!(java_double(1.0), "1.0");
        assert_eq!(java_double(1.5), "1.5");
        assert_eq!(java_double(-2.25), "-2.25");
        assert_eq!(java_double(1500.0), "1500.0");
        assert_eq!(java_double(0.001), "0.001");
        assert_eq!(java_double(0.0001), "1.0E-4");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(12345678.9), "1.23456789E7");
        assert_eq!(java_double(9999999.0), "9999999.0");
        assert_eq!(java_double(0.0), "0.0");
        assert_eq!(java_double(f64::NAN), "\"NaN\"");
    }

    #[test]
    fn strings_escape_like_jackson() {
        let mut out = String::new();
        write_str(&mut out, "a\"b\\c\n\u{1}/é");
        assert_eq!(out, "\"a\\\"b\\\\c\\n\\u0001/é\"");
    }
}
