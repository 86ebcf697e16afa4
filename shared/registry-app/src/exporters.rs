//! Whether a process runs the exporters (schema linking) it serves: `registry serve` runs them in
//! process, their source its own router; the Lambda function serves their records and leaves
//! running them to the stream-driven exporter function.

use registry_core::Registry;
use registry_exporter::ExporterService;
use registry_exporter::runner::{Pacing, Runner};
use registry_exporter_http::{HttpConnect, RouterApi};
use std::sync::Arc;
use tokio::sync::Notify;

/// What a process does with the exporters of the home whose stores it was configured with.
#[derive(Clone)]
pub enum Exporters {
    /// Runs them, woken by `trigger` (notified after every successful write the application
    /// serves, and by the runner's own pacing).
    Run(Arc<Notify>),
    /// Serves their records through `/exporters` only.
    Serve,
}

impl Exporters {
    /// Run them in this process.
    pub fn run() -> Self {
        Exporters::Run(Arc::new(Notify::new()))
    }

    /// `service`'s runner started, its source `registry`'s own router without authentication.
    pub(crate) fn start(&self, service: ExporterService, registry: &Registry) -> Arc<ExporterService> {
        if let Exporters::Run(trigger) = self {
            let source = registry_http::app(registry.clone(), registry_http::AppOptions::default());
            let source = RouterApi::source(source, registry.clone());
            Runner::new(service.clone(), Arc::new(source), Arc::new(HttpConnect), Pacing::default())
                .spawn(trigger.clone());
        }
        Arc::new(service)
    }

    /// What the application tells after every successful request to an endpoint that may write
    /// (`registry_http::AppOptions::written`; MCP calls included: their tools may), not after
    /// lookups and compatibility tests, which are `POST`s that only read: a stampede of them would
    /// list the exporters once per request. The runner's trigger when they run here.
    pub(crate) fn written(&self) -> Option<Arc<Notify>> {
        match self {
            Exporters::Run(trigger) => Some(Arc::clone(trigger)),
            Exporters::Serve => None,
        }
    }
}
