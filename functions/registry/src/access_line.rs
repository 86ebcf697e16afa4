//! `registry serve`'s access line, written by hand into the log writer's queue ([`log_writer`]):
//! the same line, byte for byte after its timestamp, that `tracing`'s formatter writes for the
//! edge's `info` event (text without colors, or JSON), for a fraction of its cost: no event
//! dispatch, no field visitor, no `Debug` formatting of plain strings. It is on every request's
//! path, and was the largest part of a cached read's cost after the socket itself.
//!
//! It writes only where `tracing` would: at `info` for `registry_http::request` (`RUST_LOG`), and
//! not for 5xx answers, whose `error` line (with the detail) the edge logs through `tracing` itself.
//! On a terminal (colored text) the edge's own `tracing` line is kept: it is not hand-written.
//!
//! [`log_writer`]: crate::log_writer

use crate::config::LogFormat;
use crate::log_writer::QueuedStderr;
use registry_http::observability::{ANONYMOUS, AnswerLine, REQUEST_LOG_TARGET, RequestRecord};
use std::fmt::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

/// The access line of `registry serve` ([`AnswerLine`]).
#[derive(Debug, Clone)]
pub struct AccessLine {
    writer: QueuedStderr,
    format: LogFormat,
}

impl AccessLine {
    /// Lines in `format` through `writer`.
    pub fn new(writer: QueuedStderr, format: LogFormat) -> AccessLine {
        AccessLine { writer, format }
    }
}

impl AnswerLine for AccessLine {
    fn answered(&self, record: &RequestRecord) {
        if record.status >= 500 || !tracing::enabled!(target: REQUEST_LOG_TARGET, tracing::Level::INFO) {
            return;
        }
        let timestamp = Timestamp::of(SystemTime::now());
        LINE.with_borrow_mut(|line| {
            line.clear();
            match self.format {
                LogFormat::Text => text(line, &timestamp, record),
                LogFormat::Json => json(line, &timestamp, record),
            }
            self.writer.push_line(line.as_bytes());
            // A long subject grows the line once; the thread does not keep that size.
            if line.capacity() > 4096 {
                *line = String::with_capacity(256);
            }
        });
    }
}

thread_local! {
    /// Each thread's line being written: a line costs no allocation once the thread wrote one.
    static LINE: std::cell::RefCell<String> = std::cell::RefCell::new(String::with_capacity(256));
}

/// `tracing`'s text line: `{timestamp}  INFO request served operation="…" … request_id="…"`.
fn text(line: &mut String, timestamp: &Timestamp, record: &RequestRecord) {
    timestamp.write(line);
    line.push_str("  INFO request served");
    fields(line, LogFormat::Text, record);
    line.push('\n');
}

/// `tracing`'s JSON line: `{"timestamp":…,"level":"INFO","fields":{"message":"request served",…}}`.
fn json(line: &mut String, timestamp: &Timestamp, record: &RequestRecord) {
    line.push_str("{\"timestamp\":\"");
    timestamp.write(line);
    line.push_str("\",\"level\":\"INFO\",\"fields\":{\"message\":\"request served\"");
    fields(line, LogFormat::Json, record);
    line.push_str("}}\n");
}

/// A field's name as each format writes it before the value: ` name=` (text) or `,"name":`
/// (JSON), each one literal (one copy per field).
struct Field {
    text: &'static str,
    json: &'static str,
}

macro_rules! field {
    ($name:literal) => {
        Field { text: concat!(" ", $name, "="), json: concat!(",\"", $name, "\":") }
    };
}

/// The access line's fields, in the edge's order, each written as `format` writes a field.
fn fields(line: &mut String, format: LogFormat, record: &RequestRecord) {
    let string = |line: &mut String, name: Field, value: &str| {
        field_name(line, format, name);
        match format {
            LogFormat::Text => debug_str(line, value),
            LogFormat::Json => json_str(line, value),
        }
    };
    let number = |line: &mut String, name: Field, value: u32| {
        field_name(line, format, name);
        push_decimal(line, value, 1);
    };
    string(line, field!("operation"), record.operation);
    string(line, field!("subject"), record.subject.as_deref().unwrap_or(""));
    string(line, field!("principal"), record.principal.as_deref().unwrap_or(ANONYMOUS));
    string(line, field!("method"), record.method.as_str());
    number(line, field!("status"), u32::from(record.status));
    if let Some(code) = record.error_code {
        number(line, field!("error_code"), code);
    }
    field_name(line, format, field!("latency_ms"));
    if !push_milliseconds(line, record.latency_ms) {
        match format {
            LogFormat::Text => {
                let _ = write!(line, "{:?}", record.latency_ms);
            }
            // serde_json writes an f64 as `tracing`'s JSON formatter does (it uses serde_json).
            LogFormat::Json => line.push_str(
                &serde_json::Number::from_f64(record.latency_ms).map_or_else(|| "null".into(), |n| n.to_string()),
            ),
        }
    }
    string(line, field!("request_id"), record.request_id());
}

/// Pushes `ms` and says so when it is a whole number of microseconds under about 50 days (what the
/// edge records): `{:?}` and serde_json both write such a number as its decimal digits with the
/// trailing zeros of the fraction dropped, keeping one (`0.036`, `12.5`, `3.0`), since that
/// decimal is the shortest that reads back as the same `f64`. Pushes nothing otherwise.
fn push_milliseconds(line: &mut String, ms: f64) -> bool {
    const LIMIT_MICROS: f64 = 4_294_967_295_000.0;
    let micros = (ms * 1000.0).round();
    if !(0.0..LIMIT_MICROS).contains(&micros) || micros / 1000.0 != ms {
        return false;
    }
    let micros = micros as u64;
    let (whole, mut fraction) = ((micros / 1000) as u32, (micros % 1000) as u32);
    push_decimal(line, whole, 1);
    line.push('.');
    let mut width = 3;
    while width > 1 && fraction % 10 == 0 {
        fraction /= 10;
        width -= 1;
    }
    push_decimal(line, fraction, width);
    true
}

/// What comes before a field's value in `format`.
fn field_name(line: &mut String, format: LogFormat, name: Field) {
    line.push_str(match format {
        LogFormat::Text => name.text,
        LogFormat::Json => name.json,
    });
}

/// `value` as `{:?}` writes it (quoted, escaped by `Debug` itself unless [`plain`]).
fn debug_str(line: &mut String, value: &str) {
    if !push_plain(line, value) {
        let _ = write!(line, "{value:?}");
    }
}

/// `value` as a JSON string, as serde_json writes it (escaped by serde_json unless [`plain`]).
fn json_str(line: &mut String, value: &str) {
    if !push_plain(line, value) {
        line.push_str(&serde_json::Value::from(value).to_string());
    }
}

/// Pushes `value` between quotes and says so when it is [`plain`]; pushes nothing otherwise.
fn push_plain(line: &mut String, value: &str) -> bool {
    let plain = plain(value);
    if plain {
        line.push('"');
        line.push_str(value);
        line.push('"');
    }
    plain
}

/// Printable ASCII without `"` or `\` (every operation name and method, and most subjects and
/// ids): `Debug` and JSON both write it as it is between quotes.
fn plain(value: &str) -> bool {
    value.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'"' && b != b'\\')
}

/// A UTC time as `tracing`'s formatter writes it: `2026-12-06T09:36:25.122201Z` (microseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Timestamp {
    /// Whole seconds since 1970-01-01 UTC.
    seconds: u64,
    micros: u32,
}

thread_local! {
    /// Each thread's last second written, as text up to its fraction (`2026-12-06T09:36:25.`): the
    /// lines of one second share it, so the calendar is worked out once a second, not per line.
    static SECOND: std::cell::RefCell<(u64, String)> = const { std::cell::RefCell::new((u64::MAX, String::new())) };
}

impl Timestamp {
    /// `time` in UTC (a clock before 1970 reads as 1970-01-01).
    fn of(time: SystemTime) -> Timestamp {
        let since_epoch = time.duration_since(UNIX_EPOCH).unwrap_or_default();
        Timestamp { seconds: since_epoch.as_secs(), micros: since_epoch.subsec_micros() }
    }

    fn write(&self, line: &mut String) {
        SECOND.with_borrow_mut(|(second, text)| {
            if *second != self.seconds {
                text.clear();
                write_second(text, self.seconds);
                *second = self.seconds;
            }
            line.push_str(text);
        });
        push_decimal(line, self.micros, 6);
        line.push('Z');
    }
}

/// The second `seconds` after 1970-01-01 UTC as text up to its fraction: `2026-12-06T09:36:25.`.
fn write_second(text: &mut String, seconds: u64) {
    let (year, month, day) = civil_from_days((seconds / 86_400) as i64);
    let seconds_of_day = (seconds % 86_400) as u32;
    let (hour, minute, second) = (seconds_of_day / 3600, seconds_of_day / 60 % 60, seconds_of_day % 60);
    match u32::try_from(year) {
        Ok(year) => push_decimal(text, year, 4),
        Err(_) => {
            let _ = write!(text, "{year:04}");
        }
    }
    text.push('-');
    for (value, separator) in [(month, '-'), (day, 'T'), (hour, ':'), (minute, ':'), (second, '.')] {
        push_decimal(text, value, 2);
        text.push(separator);
    }
}

/// `value` in decimal, zero-padded to at least `width` digits (at most 10), as `{value:0width$}`
/// writes it (without the formatter: this is on every request's path).
fn push_decimal(line: &mut String, value: u32, width: usize) {
    let mut digits = [b'0'; 10];
    let mut start = digits.len();
    let mut rest = value;
    loop {
        start -= 1;
        digits[start] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    let start = start.min(digits.len().saturating_sub(width));
    line.push_str(std::str::from_utf8(&digits[start..]).unwrap_or_default());
}

/// The proleptic Gregorian (year, month, day) of the `days`-th day after 1970-01-01 (Howard
/// Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;
    use axum::body::Body;
    use axum::http::Request;
    use registry_core::{MemoryStore, Registry, RegistrySettings};
    use std::sync::{Arc, Mutex};
    use std::time::Duration;
    use tower::ServiceExt;

    #[test]
    fn numbers_are_written_as_the_formatter_writes_them() {
        for value in [0, 7, 42, 200, 404, 40401, 999_999, 1_000_000, u32::MAX] {
            for width in [1, 2, 4, 6] {
                let mut line = String::new();
                push_decimal(&mut line, value, width);
                assert_eq!(line, format!("{value:0width$}"));
            }
        }
    }

    #[test]
    fn latencies_are_written_as_debug_and_serde_json_write_them() {
        let micros = (0..3000u64).chain([9_999, 10_000, 10_010, 123_456, 1_000_000, 86_400_000_000, 4_294_967_294_999]);
        for micros in micros {
            let ms = micros as f64 / 1000.0;
            let mut line = String::new();
            assert!(push_milliseconds(&mut line, ms), "{micros} µs");
            assert_eq!(line, format!("{ms:?}"), "{micros} µs");
            assert_eq!(Some(line), serde_json::Number::from_f64(ms).map(|n| n.to_string()), "{micros} µs");
        }
        for ms in [0.0001, 0.036174000000000005, -1.0, f64::NAN, f64::INFINITY, 1e13] {
            assert!(!push_milliseconds(&mut String::new(), ms), "{ms} is left to the formatter");
        }
    }

    #[test]
    fn timestamps_are_written_as_tracing_writes_them() {
        let at = |seconds: u64, micros: u64| {
            let mut line = String::new();
            Timestamp::of(UNIX_EPOCH + Duration::from_secs(seconds) + Duration::from_micros(micros)).write(&mut line);
            line
        };
        assert_eq!(at(0, 0), "1970-01-01T00:00:00.000000Z");
        assert_eq!(at(951_782_400, 7), "2000-02-29T00:00:00.000007Z");
        assert_eq!(at(1_709_251_199, 999_999), "2024-02-29T23:59:59.999999Z");
        assert_eq!(at(1_798_761_599, 123_456), "2026-12-31T23:59:59.123456Z");
        assert_eq!(at(4_107_542_400, 0), "2100-03-01T00:00:00.000000Z");
        // The lines of one second share its text; the next second has its own.
        assert_eq!(at(4_107_542_400, 250_000), "2100-03-01T00:00:00.250000Z");
        assert_eq!(at(4_107_542_401, 0), "2100-03-01T00:00:01.000000Z");
    }

    /// Keeps every answer's record and writes the edge's own `tracing` line for it.
    #[derive(Debug, Default)]
    struct Recorded(Mutex<Vec<RequestRecord>>);

    impl AnswerLine for Recorded {
        fn answered(&self, record: &RequestRecord) {
            self.0.lock().unwrap_or_else(|e| e.into_inner()).push(record.clone());
            registry_http::observability::trace_access_line(record);
        }
    }

    /// What `tracing` wrote for each request, and the line written by hand from its record.
    async fn both_lines(format: LogFormat) -> Vec<(String, String)> {
        let writer = QueuedStderr::held();
        // As `main` sets it up for `registry serve` (no colors: not a terminal), through the same queue.
        let builder = tracing_subscriber::fmt().with_target(false).with_writer(writer.clone());
        let _guard = match format {
            LogFormat::Json => tracing::subscriber::set_default(builder.json().with_ansi(false).finish()),
            LogFormat::Text => tracing::subscriber::set_default(builder.with_ansi(false).finish()),
        };
        let recorded = Arc::new(Recorded::default());
        let app = registry_http::app(
            Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default()),
            registry_http::AppOptions { answer_line: Some(recorded.clone()), ..registry_http::AppOptions::default() },
        );
        let requests = [
            ("POST", "/subjects/orders-value/versions", r#"{"schema":"\"string\""}"#, None),
            ("GET", "/schemas/ids/1", "", Some("client-7")),
            ("GET", "/subjects/team%2F%22quoted%22%20caf%C3%A9%0A/versions/1", "", None),
            ("POST", "/subjects/orders-value/versions", "{", None),
            ("PUT", "/config", r#"{"compatibility":"NONE"}"#, None),
        ];
        for (method, uri, body, request_id) in requests {
            let mut request = Request::builder().method(method).uri(uri).header("content-type", "application/json");
            if let Some(id) = request_id {
                request = request.header("x-request-id", id);
            }
            let request = request.body(Body::from(body)).unwrap_or_else(|e| panic!("{e}"));
            app.clone().oneshot(request).await.unwrap_or_else(|never| match never {});
        }
        let records = std::mem::take(&mut *recorded.0.lock().unwrap_or_else(|e| e.into_inner()));
        let logged = writer.queued();
        let logged: Vec<String> = logged.lines().map(|line| format!("{line}\n")).collect();
        assert_eq!(logged.len(), records.len(), "one line per request: {logged:#?}");
        let timestamp = Timestamp::of(SystemTime::now());
        let by_hand = records.iter().map(|record| {
            let mut line = String::new();
            match format {
                LogFormat::Text => text(&mut line, &timestamp, record),
                LogFormat::Json => json(&mut line, &timestamp, record),
            }
            line
        });
        logged.into_iter().zip(by_hand).collect()
    }

    #[tokio::test]
    async fn the_text_line_is_tracing_s_after_its_timestamp() {
        for (logged, by_hand) in both_lines(LogFormat::Text).await {
            // `2026-12-06T09:36:25.122201Z` is 27 characters.
            assert_eq!(logged.get(27..), by_hand.get(27..), "\n{logged}{by_hand}");
            assert_eq!(logged.len(), by_hand.len());
        }
    }

    #[tokio::test]
    async fn the_json_line_is_tracing_s_after_its_timestamp() {
        for (logged, by_hand) in both_lines(LogFormat::Json).await {
            let (logged, by_hand) = (json_without_timestamp(&logged), json_without_timestamp(&by_hand));
            assert_eq!(logged, by_hand);
        }
    }

    /// The line with its timestamp's value blanked (`{"timestamp":"` is 14 characters).
    fn json_without_timestamp(line: &str) -> String {
        assert!(line.starts_with("{\"timestamp\":\""), "{line}");
        format!("{}{}", &line[..14], &line[14 + 27..])
    }
}
