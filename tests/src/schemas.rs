//! Schema texts the API cases register, written in Confluent's stored (canonical) Avro form so a
//! case can compare `schema` fields with what it sent.

/// A record `name` with `fields` given as (field name, Avro type JSON).
pub fn record(name: &str, fields: &[(&str, &str)]) -> String {
    let fields: Vec<String> =
        fields.iter().map(|(field, kind)| format!(r#"{{"name":"{field}","type":{kind}}}"#)).collect();
    format!(r#"{{"type":"record","name":"{name}","fields":[{}]}}"#, fields.join(","))
}

/// `n`-th distinct schema: a record `R<n>` with one string field. Different `n` never share an ID.
pub fn distinct(n: usize) -> String {
    record(&format!("R{n}"), &[("f", r#""string""#)])
}

/// Version 1 of the evolving `User` record: one string field.
pub fn user_v1() -> String {
    record("User", &[("name", r#""string""#)])
}

/// `User` plus an int field with a default: BACKWARD and FORWARD compatible with v1 (FULL).
pub fn user_v2_with_default() -> String {
    r#"{"type":"record","name":"User","fields":[{"name":"name","type":"string"},{"name":"age","type":"int","default":0}]}"#
        .to_string()
}

/// `User` plus an int field without a default: FORWARD compatible with v1 only.
pub fn user_v2_no_default() -> String {
    record("User", &[("name", r#""string""#), ("age", r#""int""#)])
}

/// `User` with `name` changed to int: incompatible with v1 in every direction.
pub fn user_type_changed() -> String {
    record("User", &[("name", r#""int""#)])
}

/// `User` with no fields: BACKWARD compatible with v1 (a reader ignores the writer's extra field).
pub fn user_empty() -> String {
    record("User", &[])
}
