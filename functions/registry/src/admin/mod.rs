//! The admin subcommands (`import`, `export`, `prune`, `cap-versions`, `report`, and
//! `restore-check`, which works on the AWS store's table and ID ledger only): each works on a remote
//! registry (`--url`, through its REST API) or on the configured store (the same API served in
//! process), shows progress on long work, honours `--dry-run` and prints a summary at the end.
//! A run that found problems prints them and fails (exit status 1).

mod api;
mod cap;
mod contexts;
mod failover;
mod import;
mod progress;
mod prune;
mod report;
mod restore_check;
mod snapshot;

use crate::config::{
    CapArgs, ExportArgs, FailoverArgs, ImportArgs, PruneArgs, ReportArgs, ReportFormat, RestoreCheckArgs, ServeConfig,
    TargetArgs,
};
use api::Api;
use contexts::Selection;
use registry_core::{Registry, RegistrySettings};
use snapshot::Snapshot;
use std::collections::BTreeMap;
use std::io::{BufReader, BufWriter, Write};

/// Any admin failure, reported as one line.
pub type AdminError = Box<dyn std::error::Error + Send + Sync>;

/// What a command did: counters, named lists (e.g. skipped subjects) and problems.
#[derive(Debug, Default)]
pub struct Summary {
    /// The command, for the heading.
    pub command: String,
    /// Counters by label.
    pub counts: BTreeMap<String, usize>,
    /// Lists by label.
    pub lists: BTreeMap<String, Vec<String>>,
    /// Anything that went wrong without stopping the run; non-empty fails the command.
    pub problems: Vec<String>,
}

impl Summary {
    /// An empty summary of `command`.
    pub fn new(command: &str) -> Summary {
        Summary { command: command.to_string(), ..Summary::default() }
    }

    /// Adds one to `label`.
    pub fn count(&mut self, label: &str) {
        self.add(label, 1);
    }

    /// Adds `n` to `label`.
    pub fn add(&mut self, label: &str, n: usize) {
        *self.counts.entry(label.to_string()).or_default() += n;
    }

    /// Appends `item` to the list `label`.
    pub fn list(&mut self, label: &str, item: String) {
        self.lists.entry(label.to_string()).or_default().push(item);
    }

    /// Prints the summary to stdout; `Err` when there were problems.
    pub fn finish(self) -> Result<(), AdminError> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{} summary:", self.command)?;
        for (label, n) in &self.counts {
            writeln!(out, "  {label}: {n}")?;
        }
        for (label, items) in &self.lists {
            writeln!(out, "  {label}: {}", items.len())?;
            for item in items {
                writeln!(out, "    {item}")?;
            }
        }
        for problem in &self.problems {
            writeln!(out, "  problem: {problem}")?;
        }
        if self.problems.is_empty() {
            Ok(())
        } else {
            Err(format!("{}: {} problem(s), listed above", self.command, self.problems.len()).into())
        }
    }
}

/// The API over the configured store `config` names.
async fn store_api(config: &ServeConfig) -> Result<Api, AdminError> {
    let stores = crate::store::open(config).await?.configured()?;
    let settings = RegistrySettings {
        default_compatibility: config.settings.default_compatibility,
        ..RegistrySettings::default()
    };
    tracing::info!("working on {}", stores.description);
    Ok(Api::local(Registry::new(stores.writes, settings)))
}

/// `--url` when given, else the configured store.
async fn target_api(target: &TargetArgs) -> Result<Api, AdminError> {
    match &target.url {
        Some(url) => Api::remote(url, target.user.as_deref(), target.remote),
        None => store_api(&target.store).await,
    }
}

/// `registry import`.
pub async fn import(args: ImportArgs) -> Result<(), AdminError> {
    let selection = Selection::new(&args.selection)?;
    let snapshot = match (&args.from, &args.from_file) {
        (Some(url), _) => {
            Snapshot::read(&Api::remote(url, args.from_user.as_deref(), args.remote)?, &selection).await?
        }
        (None, Some(file)) => {
            let input = std::fs::File::open(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            Snapshot::read_lines(BufReader::new(input))?.select(&selection)
        }
        (None, None) => return Err("give --from URL or --from-file FILE".into()),
    };
    let target = match &args.to {
        Some(url) => Api::remote(url, args.to_user.as_deref(), args.remote)?,
        None => store_api(&args.store).await?,
    };
    tracing::info!("importing {} versions into {}", snapshot.schemas.len(), target.describe());
    let mut summary = import::apply(&snapshot, &target, args.dry_run).await?;
    summary.add("subjects", snapshot.subjects().len());
    summary.add("contexts", snapshot.contexts().len());
    summary.finish()
}

/// `registry export`.
pub async fn export(args: ExportArgs) -> Result<(), AdminError> {
    let api = target_api(&args.target).await?;
    let snapshot = Snapshot::read(&api, &Selection::new(&args.selection)?).await?;
    let mut summary = Summary::new(if args.dry_run { "export (dry run)" } else { "export" });
    summary.add("subjects", snapshot.subjects().len());
    summary.add("contexts", snapshot.contexts().len());
    summary.add("versions", snapshot.schemas.len());
    summary.add("ids", import::ids(&snapshot).len());
    if !args.dry_run {
        let file =
            std::fs::File::create(&args.file).map_err(|e| format!("cannot create {}: {e}", args.file.display()))?;
        let mut out = BufWriter::new(file);
        snapshot.write_lines(&mut out)?;
        out.into_inner().map_err(|e| e.into_error())?.sync_all()?;
    }
    summary.finish()
}

/// `registry prune`.
pub async fn prune(args: PruneArgs) -> Result<(), AdminError> {
    let subjects = match &args.subjects_from {
        Some(file) => {
            let text = std::fs::read_to_string(file).map_err(|e| format!("cannot read {}: {e}", file.display()))?;
            let names = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
            Some(names.map(str::to_string).collect())
        }
        None => None,
    };
    let plan = prune::PrunePlan {
        inactive_days: args.inactive_days,
        min_age_days: args.min_age,
        subjects,
        dry_run: args.dry_run,
    };
    prune::run(&target_api(&args.target).await?, &plan).await?.finish()
}

/// `registry cap-versions`.
pub async fn cap_versions(args: CapArgs) -> Result<(), AdminError> {
    let selection = Selection::new(&args.selection)?;
    let plan = cap::CapPlan { keep: args.keep, selection, force: args.force, dry_run: args.dry_run };
    cap::run(&target_api(&args.target).await?, &plan).await?.finish()
}

/// `registry report`: subjects by owner (see `report`), printed to stdout.
pub async fn report(args: ReportArgs) -> Result<(), AdminError> {
    let api = target_api(&args.target).await?;
    let rows = report::rows(&api, &args.owner_property, &Selection::new(&args.selection)?).await?;
    let mut out = BufWriter::new(std::io::stdout().lock());
    match args.format {
        ReportFormat::Table => report::write_table(&mut out, &rows)?,
        ReportFormat::Json => {
            serde_json::to_writer_pretty(&mut out, &rows)?;
            writeln!(out)?;
        }
    }
    out.flush()?;
    Ok(())
}

/// `registry restore-check`: the ID counter raised past the ledger (see `restore_check`).
pub async fn restore_check(args: RestoreCheckArgs) -> Result<(), AdminError> {
    restore_check::run(args.dry_run).await?.finish()
}

/// `registry failover`.
pub async fn failover(args: FailoverArgs) -> Result<(), AdminError> {
    failover::run(&args).await?.finish()
}
