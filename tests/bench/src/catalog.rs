//! The analysis API at the largest size: one page of a field search (1,000 subjects scanned, every
//! one matching) at the start of the registry and from a cursor half-way through, and one page of
//! `POST /subjects/match` (10,000 names). A page costs the same wherever it starts: no request walks
//! the registry, so its time and memory do not grow with the number of subjects.

use crate::http::{Conn, post};
use std::time::{Duration, Instant};

/// Repetitions of each page; the first is on a cold server (bodies not yet cached).
const ROUNDS: usize = 5;

/// The times of one kind of page: the first (cold) and the median of the rest (warm).
#[derive(Debug, Default, Clone)]
pub struct PageTimes {
    pub cold: Duration,
    pub warm_median: Duration,
    pub subjects_scanned: u64,
}

#[derive(Debug, Default)]
pub struct CatalogFigures {
    pub search_first_page: PageTimes,
    pub search_middle_page: PageTimes,
    pub match_page: PageTimes,
    pub peak_kib: u64,
}

async fn page(conn: &mut Conn, path: &str, body: &str) -> Result<PageTimes, String> {
    let mut times = Vec::with_capacity(ROUNDS);
    let mut scanned = 0;
    for _ in 0..ROUNDS {
        let started = Instant::now();
        let response = conn.send(&post(path, body), true).await.map_err(|error| format!("{path}: {error}"))?;
        times.push(started.elapsed());
        if response.status != 200 {
            return Err(format!("{path} answered {}: {}", response.status, String::from_utf8_lossy(&response.body)));
        }
        let answer: serde_json::Value =
            serde_json::from_slice(&response.body).map_err(|error| format!("{path}: {error}"))?;
        scanned = answer["subjects_scanned"].as_u64().unwrap_or(0);
    }
    let cold = times[0];
    let mut warm = times[1..].to_vec();
    warm.sort_unstable();
    Ok(PageTimes { cold, warm_median: warm[warm.len() / 2], subjects_scanned: scanned })
}

/// The pages above on the server at `port` holding `subjects` seeded subjects.
pub async fn measure(port: u16, subjects: usize) -> Result<CatalogFigures, String> {
    let mut conn = Conn::connect(port).await.map_err(|error| error.to_string())?;
    let search = r#"{"field":"name","max_subjects":1000,"limit":1000}"#;
    let middle = crate::seed::subject_name(subjects / 2);
    let from_middle = format!(r#"{{"field":"name","max_subjects":1000,"limit":1000,"cursor":"{middle}"}}"#);
    let search_first_page = page(&mut conn, "/schemas/search/field", search).await?;
    let search_middle_page = page(&mut conn, "/schemas/search/field", &from_middle).await?;
    let match_page = page(&mut conn, "/subjects/match", r#"{"pattern":"-0000123","max_subjects":10000}"#).await?;
    Ok(CatalogFigures { search_first_page, search_middle_page, match_page, peak_kib: 0 })
}
