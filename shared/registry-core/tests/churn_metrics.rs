//! The churn guard and the registry's metrics, through `Registry::register` over `MemoryStore`.

use registry_core::{
    ChurnSettings, CompatibilityLevel, MemoryStore, NewSchema, RegisterOptions, Registry, RegistryError,
    RegistrySettings, SchemaType,
};
use std::sync::Arc;

fn registry(max_per_hour: u32, enforce: bool) -> Registry {
    let settings = RegistrySettings {
        default_compatibility: CompatibilityLevel::None,
        churn: ChurnSettings { max_per_hour, enforce },
        ..RegistrySettings::default()
    };
    Registry::new(Arc::new(MemoryStore::new()), settings)
}

fn schema(n: usize) -> NewSchema {
    let text = format!(r#"{{"type":"record","name":"R{n}","fields":[{{"name":"a","type":"int"}}]}}"#);
    NewSchema { schema: Some(text), schema_type: SchemaType::Avro, ..NewSchema::default() }
}

async fn register(registry: &Registry, subject: &str, n: usize) -> Result<i32, RegistryError> {
    registry.register(subject, schema(n), RegisterOptions::default()).await.map(|record| record.id.0)
}

#[tokio::test]
async fn enforced_guard_refuses_the_first_new_version_over_the_limit_and_never_a_re_registration() {
    let r = registry(3, true);
    for n in 0..3 {
        assert!(register(&r, "orders-value", n).await.is_ok(), "new version {n} is under the limit");
    }
    let refused = register(&r, "orders-value", 3).await;
    assert!(
        matches!(&refused, Err(RegistryError::TooManyRegistrations { subject, limit: 3 }) if subject == "orders-value"),
        "{refused:?}"
    );
    for n in 0..3 {
        assert!(register(&r, "orders-value", n).await.is_ok(), "re-registering version {n} is never refused");
    }
    assert!(register(&r, "payments-value", 3).await.is_ok(), "the limit is per subject");
    let metrics = r.metrics().snapshot();
    assert_eq!((metrics.churn_exceeded, metrics.churn_refused), (1, 1));
    assert_eq!(metrics.registrations_existing, 3);
    assert_eq!(metrics.registrations_new_id, 4, "the refused schema got no ID");
    assert_eq!(metrics.max_schema_id, 4);
}

#[tokio::test]
async fn re_registrations_do_not_count_towards_the_limit() {
    let r = registry(2, true);
    assert!(register(&r, "s", 0).await.is_ok());
    for _ in 0..10 {
        assert!(register(&r, "s", 0).await.is_ok());
    }
    assert!(register(&r, "s", 1).await.is_ok(), "only one new version so far");
    assert!(register(&r, "s", 2).await.is_err());
}

#[tokio::test]
async fn unenforced_guard_counts_but_registers() {
    let r = registry(1, false);
    assert!(register(&r, "s", 0).await.is_ok());
    assert!(register(&r, "s", 1).await.is_ok());
    assert!(register(&r, "s", 2).await.is_ok());
    let metrics = r.metrics().snapshot();
    assert_eq!((metrics.churn_exceeded, metrics.churn_refused), (2, 0));
}

#[tokio::test]
async fn registrations_are_counted_by_outcome() {
    let r = Registry::new(Arc::new(MemoryStore::new()), RegistrySettings::default());
    let first = register(&r, "a", 0).await;
    assert!(first.is_ok());
    assert_eq!(register(&r, "a", 0).await.ok(), first.ok(), "existing");
    assert!(register(&r, "b", 0).await.is_ok(), "new version, existing ID");
    let incompatible = NewSchema {
        schema: Some(r#"{"type":"record","name":"R0","fields":[{"name":"a","type":"string"}]}"#.to_string()),
        ..NewSchema::default()
    };
    let rejected = r.register("a", incompatible, RegisterOptions::default()).await;
    assert!(matches!(rejected, Err(RegistryError::IncompatibleSchema { .. })), "{rejected:?}");
    let metrics = r.metrics().snapshot();
    assert_eq!(
        (metrics.registrations_new_id, metrics.registrations_new_version, metrics.registrations_existing),
        (1, 1, 1)
    );
    assert_eq!(metrics.compatibility_rejections, 1);
    assert_eq!(metrics.max_schema_id, 1);
}
