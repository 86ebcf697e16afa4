//! The exporter function (`REGISTRY_LAMBDA_HANDLER=exporter`): DynamoDB stream batches of the
//! registry table and the scheduled catch-up runs, driving the exporters through [`ExportEngine`].
//!
//! A batch is read into changes ([`crate::stream`]); every exporter that is not paused and that one
//! of the batch's changes concerns gets one pass, all of them at once (a pass makes the destination hold what the source
//! holds for all its subjects, so one per batch covers every change in it, in any order). When an
//! exporter's pass fails, the first record that concerns it is reported as the batch's failure:
//! Lambda retries the shard from that record (with the event source mapping's backoff), so no
//! change is ever acknowledged before every exporter it concerns has pushed it. Passes are
//! idempotent, so records after it that succeeded for other exporters are re-sent harmlessly.

use crate::stream::{self, StreamRecord};
use serde_json::Value;
use std::pin::Pin;
use std::task::Poll;

/// The input the catch-up schedule sends (`exporter.tf`: the EventBridge target's `input`).
pub const CATCH_UP_EVENT: &str = "exporter-catch-up";

/// The exporters as the handler drives them.
pub trait ExportEngine: Send + Sync {
    /// One exporter as listed.
    type Exporter: Send + Sync;

    /// The exporters that run (every one but the paused).
    fn running(&self) -> impl Future<Output = Result<Vec<Self::Exporter>, String>> + Send;

    /// Its name, for logs.
    fn name<'a>(&self, exporter: &'a Self::Exporter) -> &'a str;

    /// Whether `exporter` copies the source subject `subject`.
    fn matches(&self, exporter: &Self::Exporter, subject: &str) -> bool;

    /// One pass of `exporter`, its outcome (RUNNING with the offset moved, or ERROR with the
    /// reason) recorded in its status; `Err` when the destination does not hold the source's state.
    fn pass(&self, exporter: &Self::Exporter) -> impl Future<Output = Result<(), String>> + Send;
}

/// What an invocation was asked to do.
#[derive(Debug)]
pub enum Invocation {
    /// A stream batch, its records in stream order.
    Batch(Vec<StreamRecord>),
    /// The scheduled run.
    CatchUp,
}

/// Reads an invocation's event: a stream batch (`Records`) or the catch-up schedule's input.
pub fn invocation(event: &Value) -> Result<Invocation, String> {
    if event.get("Records").is_some() {
        return stream::parse_batch(event).map(Invocation::Batch).map_err(|error| error.to_string());
    }
    if event.get("registry").and_then(Value::as_str) == Some(CATCH_UP_EVENT) {
        return Ok(Invocation::CatchUp);
    }
    Err("the exporter function handles DynamoDB stream batches and its catch-up schedule only".to_owned())
}

/// Handles one invocation: for a batch, the answer Lambda reads with `ReportBatchItemFailures`;
/// for a catch-up run, `{}` when every exporter is level, else the error naming those that are not.
pub async fn handle<E: ExportEngine>(engine: &E, event: &Value) -> Result<Value, String> {
    match invocation(event)? {
        Invocation::Batch(records) => Ok(stream::batch_response(first_unexported(engine, &records).await)),
        Invocation::CatchUp => catch_up(engine).await.map(|()| Value::Object(Default::default())),
    }
}

/// The sequence number of the first record whose change some exporter could not push, or `None`
/// when the whole batch is exported.
pub async fn first_unexported<'r, E: ExportEngine>(engine: &E, records: &'r [StreamRecord]) -> Option<&'r str> {
    let changed = || records.iter().filter_map(|record| record.change.as_ref().map(|change| (record, change)));
    changed().next()?;
    let exporters = match engine.running().await {
        Ok(exporters) => exporters,
        Err(error) => {
            tracing::warn!(%error, "exporters not listed; the batch is retried from its first change");
            return changed().next().map(|(record, _)| record.sequence_number.as_str());
        }
    };
    // Each concerned exporter's pass runs at once with the others: a slow destination delays only
    // the batch's answer, by at most its own pass.
    let passes = exporters.iter().filter_map(|exporter| {
        let position = records.iter().position(|record| {
            record.change.as_ref().is_some_and(|change| change.concerns(|subject| engine.matches(exporter, subject)))
        })?;
        Some(async move {
            let outcome = engine.pass(exporter).await;
            if let Err(error) = &outcome {
                tracing::warn!(exporter = engine.name(exporter), %error, record = %records[position].sequence_number, "export failed; the batch is retried from this record");
            }
            outcome.err().map(|_| position)
        })
    });
    let first_failed = all(passes).await.into_iter().flatten().min();
    first_failed.map(|position| records[position].sequence_number.as_str())
}

/// One pass of every running exporter, whatever changed: brings them level after a reset, a
/// resume from a long pause, or records the stream dropped or parked.
pub async fn catch_up<E: ExportEngine>(engine: &E) -> Result<(), String> {
    let exporters = engine.running().await?;
    let passes = exporters.iter().map(|exporter| async move {
        let error = engine.pass(exporter).await.err()?;
        tracing::warn!(exporter = engine.name(exporter), %error, "catch-up pass failed");
        Some(format!("{}: {error}", engine.name(exporter)))
    });
    let failed: Vec<String> = all(passes).await.into_iter().flatten().collect();
    if failed.is_empty() { Ok(()) } else { Err(format!("exporters not level: {}", failed.join("; "))) }
}

/// The outputs of `futures`, run concurrently on the current task, in their order.
async fn all<F: Future>(futures: impl IntoIterator<Item = F>) -> Vec<F::Output> {
    let mut pending: Vec<Pin<Box<F>>> = futures.into_iter().map(Box::pin).collect();
    let mut outputs: Vec<Option<F::Output>> = pending.iter().map(|_| None).collect();
    std::future::poll_fn(|context| {
        let mut waiting = false;
        for (future, output) in pending.iter_mut().zip(outputs.iter_mut()) {
            if output.is_none() {
                match future.as_mut().poll(context) {
                    Poll::Ready(value) => *output = Some(value),
                    Poll::Pending => waiting = true,
                }
            }
        }
        if waiting { Poll::Pending } else { Poll::Ready(()) }
    })
    .await;
    outputs.into_iter().flatten().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeSet;
    use std::sync::Mutex;

    /// Exporters by (name, subject prefix); passes of the names in `failing` fail.
    struct FakeEngine {
        exporters: Vec<(&'static str, &'static str)>,
        failing: BTreeSet<&'static str>,
        passes: Mutex<Vec<&'static str>>,
        listing_fails: bool,
    }

    impl FakeEngine {
        fn new(exporters: &[(&'static str, &'static str)], failing: &[&'static str]) -> Self {
            FakeEngine {
                exporters: exporters.to_vec(),
                failing: failing.iter().copied().collect(),
                passes: Mutex::new(Vec::new()),
                listing_fails: false,
            }
        }

        fn passes(&self) -> Vec<&'static str> {
            self.passes.lock().map(|passes| passes.clone()).unwrap_or_default()
        }
    }

    impl ExportEngine for FakeEngine {
        type Exporter = (&'static str, &'static str);

        async fn running(&self) -> Result<Vec<Self::Exporter>, String> {
            if self.listing_fails { Err("table unavailable".into()) } else { Ok(self.exporters.clone()) }
        }

        fn name<'a>(&self, exporter: &'a Self::Exporter) -> &'a str {
            exporter.0
        }

        fn matches(&self, exporter: &Self::Exporter, subject: &str) -> bool {
            subject.starts_with(exporter.1)
        }

        async fn pass(&self, exporter: &Self::Exporter) -> Result<(), String> {
            if let Ok(mut passes) = self.passes.lock() {
                passes.push(exporter.0);
            }
            if self.failing.contains(exporter.0) { Err(format!("{} refused", exporter.0)) } else { Ok(()) }
        }
    }

    fn row(subject: &str, sequence: &str) -> Value {
        json!({ "eventName": "INSERT", "dynamodb": {
            "Keys": { "pk": { "S": format!("S#{subject}") }, "sk": { "S": "V#0000000001" } },
            "NewImage": { "deleted": { "BOOL": false } },
            "SequenceNumber": sequence,
        } })
    }

    fn counter(sequence: &str) -> Value {
        json!({ "eventName": "MODIFY", "dynamodb": { "Keys": { "pk": { "S": "COUNTER" }, "sk": { "S": "ID" } }, "SequenceNumber": sequence } })
    }

    fn batch(records: Vec<Value>) -> Value {
        json!({ "Records": records })
    }

    async fn run(engine: &FakeEngine, event: Value) -> Value {
        handle(engine, &event).await.unwrap_or_else(|e| panic!("{e}"))
    }

    fn failures(answer: &Value) -> Vec<String> {
        answer["batchItemFailures"]
            .as_array()
            .map(|items| items.iter().filter_map(|item| item["itemIdentifier"].as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    }

    #[tokio::test]
    async fn each_concerned_exporter_passes_once_per_batch() {
        let engine = FakeEngine::new(&[("orders", "orders-"), ("payments", "payments-"), ("idle", "other-")], &[]);
        let answer =
            run(&engine, batch(vec![row("orders-value", "1"), row("orders-key", "2"), row("payments-value", "3")]))
                .await;
        assert!(failures(&answer).is_empty());
        assert_eq!(engine.passes(), ["orders", "payments"]);
    }

    #[tokio::test]
    async fn a_failed_pass_reports_the_first_record_it_concerns() {
        let engine = FakeEngine::new(&[("orders", "orders-"), ("payments", "payments-")], &["payments"]);
        let answer = run(
            &engine,
            batch(vec![counter("1"), row("orders-value", "2"), row("payments-value", "3"), row("payments-key", "4")]),
        )
        .await;
        assert_eq!(failures(&answer), ["3"]);
        // Two failing exporters: the earlier of their first records, so neither change is passed over.
        let engine = FakeEngine::new(&[("orders", "orders-"), ("payments", "payments-")], &["payments", "orders"]);
        let answer = run(&engine, batch(vec![row("payments-value", "5"), row("orders-value", "6")])).await;
        assert_eq!(failures(&answer), ["5"]);
    }

    #[tokio::test]
    async fn batches_without_exported_changes_pass_nothing() {
        let engine = FakeEngine::new(&[("orders", "orders-")], &["orders"]);
        let answer =
            run(&engine, batch(vec![counter("1"), row("payments-value", "2"), row(":.ctx:orders-value", "3")])).await;
        assert!(failures(&answer).is_empty());
        assert!(engine.passes().is_empty());
    }

    #[tokio::test]
    async fn an_unlisted_exporter_set_retries_from_the_first_change() {
        let mut engine = FakeEngine::new(&[("orders", "orders-")], &[]);
        engine.listing_fails = true;
        let answer = run(&engine, batch(vec![counter("1"), row("payments-value", "2")])).await;
        assert_eq!(failures(&answer), ["2"]);
    }

    #[tokio::test]
    async fn the_global_config_concerns_every_exporter() {
        let engine = FakeEngine::new(&[("orders", "orders-"), ("payments", "payments-")], &[]);
        let global = json!({ "eventName": "MODIFY", "dynamodb": { "Keys": { "pk": { "S": "CONFIG" }, "sk": { "S": "GLOBAL" } }, "SequenceNumber": "1" } });
        run(&engine, batch(vec![global])).await;
        assert_eq!(engine.passes(), ["orders", "payments"]);
    }

    #[tokio::test]
    async fn catch_up_passes_every_exporter_and_fails_loudly() {
        let engine = FakeEngine::new(&[("orders", "orders-"), ("payments", "payments-")], &[]);
        assert_eq!(run(&engine, json!({ "registry": CATCH_UP_EVENT })).await, json!({}));
        assert_eq!(engine.passes(), ["orders", "payments"]);
        let engine = FakeEngine::new(&[("orders", "orders-"), ("payments", "payments-")], &["orders"]);
        let error = handle(&engine, &json!({ "registry": CATCH_UP_EVENT })).await.err().unwrap_or_default();
        assert!(error.contains("orders: orders refused"), "{error}");
        assert_eq!(engine.passes(), ["orders", "payments"]);
    }

    #[tokio::test]
    async fn other_events_and_unreadable_batches_are_errors() {
        let engine = FakeEngine::new(&[], &[]);
        assert!(handle(&engine, &json!({ "rawPath": "/subjects" })).await.is_err());
        let unreadable = batch(vec![json!({ "eventName": "INSERT", "dynamodb": { "SequenceNumber": "7" } })]);
        assert!(handle(&engine, &unreadable).await.is_err_and(|error| error.contains("stream record 7")));
    }
}
