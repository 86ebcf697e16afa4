//! Prints how long `LocalStore::open` takes on an empty database and on one seeded with many
//! subjects (default 100,000; first argument overrides). A measurement, not a test: open must
//! not read the data, so the two figures should be of the same order.
//!
//! `cargo run -p registry-store-local --example open_time [-- <subjects>]`

use registry_core::{
    DeletedFilter, SchemaBody, SchemaId, SchemaType, Store, Subject, SubjectsPage, Version, VersionRow,
};
use registry_store_local::LocalStore;
use std::path::Path;
use std::time::{Duration, Instant};

const REPEATS: usize = 21;

type Error = Box<dyn std::error::Error>;
type Seed = (Vec<(registry_core::Fingerprint, SchemaBody)>, Vec<VersionRow>);

/// Median wall time of opening the store in `dir` (each open on a fresh handle, as a restart does).
fn median_open(dir: &Path) -> Result<Duration, Error> {
    let mut times = Vec::with_capacity(REPEATS);
    for _ in 0..REPEATS {
        let started = Instant::now();
        let store = LocalStore::open(dir)?;
        times.push(started.elapsed());
        drop(store);
    }
    times.sort();
    Ok(times[REPEATS / 2])
}

fn seed_data(subjects: usize) -> Result<Seed, Error> {
    let mut bodies = Vec::with_capacity(subjects);
    let mut rows = Vec::with_capacity(subjects);
    for n in 0..subjects {
        let body = SchemaBody {
            schema_type: SchemaType::Avro,
            schema: format!(
                "{{\"type\":\"record\",\"name\":\"R{n}\",\"fields\":[{{\"name\":\"f\",\"type\":\"long\"}}]}}"
            ),
            references: Vec::new(),
            metadata: None,
            rule_set: None,
        };
        let fingerprint = body.fingerprint();
        rows.push(VersionRow {
            subject: Subject::new(format!("subject-{n:07}-value"))?,
            version: Version(1),
            id: SchemaId(i32::try_from(n)? + 1),
            fingerprint,
            deleted: false,
            references: Vec::new(),
            registered_at_ms: 0,
        });
        bodies.push((fingerprint, body));
    }
    Ok((bodies, rows))
}

#[tokio::main]
async fn main() -> Result<(), Error> {
    let subjects: usize = std::env::args().nth(1).map(|a| a.parse()).transpose()?.unwrap_or(100_000);
    let root = std::env::temp_dir().join(format!("registry-open-time-{}", std::process::id()));
    let (empty, seeded) = (root.join("empty"), root.join("seeded"));

    drop(LocalStore::open(&empty)?);
    let empty_open = median_open(&empty)?;

    let (bodies, rows) = seed_data(subjects)?;
    let started = Instant::now();
    LocalStore::open(&seeded)?.insert_unchecked(&bodies, &rows).await?;
    let seed_time = started.elapsed();
    let seeded_open = median_open(&seeded)?;

    let started = Instant::now();
    let store = LocalStore::open(&seeded)?;
    let page = store
        .list_subjects(SubjectsPage { prefix: "", filter: DeletedFilter::LiveOnly, after: None, limit: 100 })
        .await?;
    let last = store.get_version(&rows[subjects - 1].subject, Version(1)).await?;
    let first_reads = started.elapsed();
    let size = std::fs::metadata(store.database_path())?.len();
    drop(store);
    std::fs::remove_dir_all(&root)?;

    println!("open, empty database: {empty_open:?} (median of {REPEATS})");
    println!("open, {subjects} subjects: {seeded_open:?} (median of {REPEATS})");
    println!(
        "open + first page + one lookup: {first_reads:?} ({} subjects listed, found: {})",
        page.len(),
        last.is_some()
    );
    println!("seeding {subjects} subjects with insert_unchecked: {seed_time:?}, database {} MiB", size / (1 << 20));
    Ok(())
}
