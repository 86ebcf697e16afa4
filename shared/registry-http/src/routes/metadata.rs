//! `/v1/metadata` (Confluent's `ServerMetadataResource`): which registry answers, and its version.

use super::{ApiResult, json};
use serde_json::json;

/// The registry's cluster name, as Confluent names it by `schema.registry.group.id` (whose default
/// this is). Every function instance and server of one registry is the one cluster.
const SCHEMA_REGISTRY_CLUSTER: &str = "schema-registry";

/// `GET /v1/metadata/id`: `{"scope":{"path":[],"clusters":{...}}}` as Confluent's `ServerClusterId`
/// (its empty `id` is left out, as Confluent's serializer leaves it out). There is no Kafka cluster
/// behind this registry, so `kafka-cluster` is null.
pub async fn get_cluster_id() -> ApiResult {
    json(&json!({
        "scope": {
            "path": [],
            "clusters": { "kafka-cluster": null, "schema-registry-cluster": SCHEMA_REGISTRY_CLUSTER },
        }
    }))
}

/// `GET /v1/metadata/version`: `{"version"}`, this registry's release (Confluent's
/// `SchemaRegistryServerVersion` leaves out an unknown `commitId`, as this does).
pub async fn get_schema_registry_server_version() -> ApiResult {
    json(&json!({ "version": env!("CARGO_PKG_VERSION") }))
}
