//! API tests: every case runs over a real socket with a real HTTP client, once per backend.

mod access;
mod compatibility;
mod concurrency;
mod config_fields;
mod config_mode;
mod content_types;
mod context_settings;
mod contexts;
mod data_contracts;
mod deks;
mod errors;
mod hostile;
mod hostile_bodies;
mod import_bounds;
mod import_ids;
mod json_schema;
mod lambda;
mod indirect_access;
mod large;
mod protobuf;
mod restart;
mod schemas;
mod stateless;
mod subject_names;
mod subjects;
mod versions;
