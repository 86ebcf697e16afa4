//! Observability: one `request` span per request carrying the declared Confluent operation, and
//! 5xx answers logged at ERROR with the detail their body leaves out.

use crate::store_failures::broken_store;
use crate::support::Api;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};
use tracing::field::{Field, Visit};
use tracing::span::Attributes;
use tracing::{Event, Id, Level, Subscriber};
use tracing_subscriber::layer::{Context, Layer, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;

/// Records spans (name and `operation` field) and ERROR events' `detail` fields.
#[derive(Clone, Default)]
struct Capture(Arc<Mutex<Vec<String>>>);

/// The value of one named field.
struct FieldVisitor(&'static str, Option<String>);

impl Visit for FieldVisitor {
    fn record_str(&mut self, field: &Field, value: &str) {
        if field.name() == self.0 {
            self.1 = Some(value.to_string());
        }
    }
    fn record_debug(&mut self, field: &Field, value: &dyn Debug) {
        if field.name() == self.0 {
            self.1 = Some(format!("{value:?}"));
        }
    }
}

impl<S: Subscriber> Layer<S> for Capture {
    fn on_new_span(&self, attrs: &Attributes<'_>, _: &Id, _: Context<'_, S>) {
        let mut visitor = FieldVisitor("operation", None);
        attrs.record(&mut visitor);
        let operation = visitor.1.unwrap_or_default();
        self.0.lock().unwrap().push(format!("span {} {operation}", attrs.metadata().name()));
    }
    fn on_event(&self, event: &Event<'_>, _: Context<'_, S>) {
        if *event.metadata().level() == Level::ERROR {
            let mut visitor = FieldVisitor("detail", None);
            event.record(&mut visitor);
            self.0.lock().unwrap().push(format!("error {}", visitor.1.unwrap_or_default()));
        }
    }
}

impl Capture {
    fn lines(&self) -> Vec<String> {
        self.0.lock().unwrap().clone()
    }
}

#[tokio::test]
async fn each_request_gets_a_span_carrying_its_operation() {
    let capture = Capture::default();
    let _guard = tracing_subscriber::registry().with(capture.clone()).set_default();
    let api = Api::new();
    api.get("/config").await.ok();
    api.get("/subjects").await.ok();
    api.delete("/subjects/nobody").await.error(404, 40401);
    let lines = capture.lines();
    for operation in ["get_top_level_config", "get_all_subjects", "delete_subject"] {
        assert!(lines.contains(&format!("span request {operation}")), "{operation} missing in {lines:?}");
    }
    assert!(!lines.iter().any(|line| line.starts_with("error")), "4xx are not errors: {lines:?}");
}

#[tokio::test]
async fn server_errors_are_logged_with_their_detail() {
    let capture = Capture::default();
    let _guard = tracing_subscriber::registry().with(capture.clone()).set_default();
    let api = Api::over(broken_store(true));
    api.get("/config").await.error(500, 50002);
    let lines = capture.lines();
    assert!(lines.iter().any(|line| line.starts_with("error ") && line.contains("throttled by arn:")), "{lines:?}");
}
