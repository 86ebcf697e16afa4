//! Failovers under adversarial replication: two or three regions of one registry on the emulator,
//! and the randomized [`Adversary`] standing in for global tables and S3 replication, delivering each
//! change along each route in an order, with pauses, the draw chooses, and resolving an item
//! written in two regions by its later write, as DynamoDB does. Each region's function follows the
//! home marker its own replica shows, as `follow_home_marker` deployments do, so an old home keeps
//! committing until the marker reaches it (the window), and its writes race the new home's.
//!
//! The oracle, after replication converges: every region holds the same items and objects; every
//! ID any client was given names, in every region, the schema it was given for (no ID names two
//! schemas); a lookup of each schema under each subject it was registered in answers an ID naming
//! it; every version row still there names an ID bound to its own schema; and each subject takes a
//! new version at the home. What the window may lose (a version number both homes gave,
//! one schema bound to two IDs) is allowed, as docs/multi-region.md says.
//!
//! `REGISTRY_TEST_DRAW=<n>` runs the random workloads with that draw only (to replay a failure,
//! whose message names its draw).

mod support;

use support::http::{call, registry, same_schema, schema};

use axum::http::{Method, StatusCode};
use registry_http::AppOptions;
use registry_store_aws::AwsStoreConfig;
use registry_store_aws::provision::{create_resources, delete_resources};
use registry_store_aws::regions::in_region;
use registry_store_aws::testing::adversary::Adversary;
use registry_store_aws::testing::replicator::Site;
use serde_json::json;
use std::collections::BTreeMap;
use std::sync::Arc;

const REGIONS: [&str; 3] = ["us-east-1", "eu-west-1", "ap-south-1"];
const GAP: u32 = 10_000;

/// An ID a client was given.
#[derive(Debug, Clone)]
struct Given {
    context: &'static str,
    id: i64,
    schema: String,
    subject: String,
    /// The version the home answered for it under `subject` right after.
    version: i64,
    by: usize,
}

/// The registry's regions, their replication, and what clients were given.
struct World {
    sites: Vec<Site>,
    buckets: BTreeMap<String, String>,
    adversary: Adversary,
    given: Vec<Given>,
    /// Error answers other than a fenced write's retryable 50002, with the request.
    unexpected: Vec<String>,
    draw: u64,
}

impl World {
    /// The region whose stores a function in region `r` writes with: the one the marker in `r`'s
    /// replica names, else the configured home (the first region).
    async fn home_seen_from(&self, r: usize) -> usize {
        let marker = self.sites[r].store().home_marker().await.unwrap_or_else(|e| panic!("{e}"));
        marker.and_then(|m| REGIONS.iter().position(|name| *name == m.region)).unwrap_or(0)
    }

    /// The application a function in region `r` writes through, as it follows the marker: the
    /// stores of the home it sees, fenced on it, reading a body its bucket lacks from the others'.
    async fn writer(&self, r: usize) -> (usize, axum::Router) {
        let home = self.home_seen_from(r).await;
        let site = &self.sites[home];
        let store = site.store().with_body_mirrors(&site.sdk, true, &self.buckets).fenced_by(REGIONS[home]);
        (home, registry_http::app(registry(Arc::new(store)), AppOptions::default()))
    }

    /// Registers `text` under `subject` through a function in region `r`, then lets replication
    /// see it: the ID given, if any.
    async fn register(&mut self, r: usize, subject: &str, text: &str) -> Option<i64> {
        let (home, app) = self.writer(r).await;
        let path = format!("/subjects/{subject}/versions");
        let (status, body) = call(&app, Method::POST, &path, Some(json!({"schema": text}))).await;
        // The version it got, as that home answers a lookup right after.
        let lookup = format!("/subjects/{subject}");
        let (_, found) = call(&app, Method::POST, &lookup, Some(json!({"schema": text}))).await;
        self.adversary.observe().await;
        match (status, body["id"].as_i64(), found["version"].as_i64()) {
            (StatusCode::OK, Some(id), Some(version)) => {
                let context = if subject.starts_with(":.team:") { ".team" } else { "." };
                let given =
                    Given { context, id, schema: text.to_string(), subject: subject.to_string(), version, by: home };
                if let Some(other) = self.given.iter().find(|g| g.context == context && g.id == id && g.schema != text)
                {
                    panic!(
                        "draw {}: ID {id} in '{context}' given for two schemas: by {} ({}) and now by {} ({text})",
                        self.draw, REGIONS[other.by], other.schema, REGIONS[home]
                    );
                }
                self.given.push(given);
                Some(id)
            }
            _ if body["error_code"] == json!(50002) => None,
            _ => {
                self.unexpected.push(format!("POST {path} at {}: {status} {body}", REGIONS[home]));
                None
            }
        }
    }

    /// `registry failover --to` region `to`; with `fence`, the old home's replica reached and
    /// fenced directly (the command's default), else not (`--accept-loss`: a lost region).
    async fn fail_over(&mut self, to: usize, fence: Option<usize>) -> i64 {
        let done = self.sites[to].store().fail_over(REGIONS[to], GAP).await.unwrap_or_else(|e| panic!("{e}"));
        if let Some(old) = fence {
            self.sites[old].store().fence_old_home(&done.after).await.unwrap_or_else(|e| panic!("{e}"));
        }
        self.adversary.observe().await;
        done.after.floor.map_or(0, |floor| i64::from(floor.0))
    }

    /// Delivers everything (every route healed) and checks the oracle (see the module's text).
    async fn converge_and_check(&mut self, subjects: &[String]) {
        for from in 0..self.sites.len() {
            for to in 0..self.sites.len() {
                self.adversary.heal(from, to);
            }
        }
        self.adversary.converge().await;
        let draw = self.draw;
        assert!(self.adversary.converged().await, "draw {draw}: the regions hold different items after replication");
        assert!(self.unexpected.is_empty(), "draw {draw}: unexpected answers: {:#?}", self.unexpected);
        for site in &self.sites {
            let local = registry_http::app(registry(Arc::new(site.store())), AppOptions::default());
            let region = site.sdk.region().map(ToString::to_string).unwrap_or_default();
            for given in &self.given {
                let path = match given.context {
                    "." => format!("/schemas/ids/{}", given.id),
                    named => format!("/contexts/{named}/schemas/ids/{}", given.id),
                };
                let (status, answer) = call(&local, Method::GET, &path, None).await;
                assert_eq!(status, StatusCode::OK, "draw {draw}: {path} in {region}: {answer}");
                assert!(
                    same_schema(&answer, &given.schema),
                    "draw {draw}: {path} in {region} names another schema than the one given by {}: {answer}, \
                     given for {}",
                    REGIONS[given.by],
                    given.schema
                );
            }
            // A lookup of each schema under a subject it was registered in answers an ID naming it
            // (one of the schema's IDs, when both homes gave it one), unless its version number was
            // given by both homes in the window, where one of the two versions is lost (documented).
            for given in &self.given {
                let both_gave = |other: &Given| {
                    other.by != given.by && other.subject == given.subject && other.version == given.version
                };
                let path = format!("/subjects/{}", given.subject);
                let (status, found) = call(&local, Method::POST, &path, Some(json!({"schema": given.schema}))).await;
                if status == StatusCode::NOT_FOUND && self.given.iter().any(both_gave) {
                    continue;
                }
                assert_eq!(
                    status,
                    StatusCode::OK,
                    "draw {draw}: lookup of version {} under {} in {region}, which no other home gave: {found}",
                    given.version,
                    given.subject
                );
                let by_id = match given.context {
                    "." => format!("/schemas/ids/{}", found["id"]),
                    named => format!("/contexts/{named}/schemas/ids/{}", found["id"]),
                };
                let (status, bound) = call(&local, Method::GET, &by_id, None).await;
                assert_eq!(status, StatusCode::OK, "draw {draw}: {by_id} in {region}: {bound}");
                let subject = &given.subject;
                assert!(same_schema(&bound, &given.schema), "draw {draw}: lookup under {subject} in {region}: {bound}");
            }
            for subject in subjects {
                let (status, versions) =
                    call(&local, Method::GET, &format!("/subjects/{subject}/versions"), None).await;
                assert_eq!(status, StatusCode::OK, "draw {draw}: versions of {subject} in {region}: {versions}");
                for version in versions.as_array().into_iter().flatten() {
                    let path = format!("/subjects/{subject}/versions/{version}");
                    let (status, row) = call(&local, Method::GET, &path, None).await;
                    assert_eq!(status, StatusCode::OK, "draw {draw}: {path} in {region}: {row}");
                    let by_id = match subject.strip_prefix(":.team:") {
                        Some(_) => format!("/contexts/.team/schemas/ids/{}", row["id"]),
                        None => format!("/schemas/ids/{}", row["id"]),
                    };
                    let (status, bound) = call(&local, Method::GET, &by_id, None).await;
                    assert_eq!(status, StatusCode::OK, "draw {draw}: {by_id} in {region}: {bound}");
                    assert_eq!(
                        bound["schema"], row["schema"],
                        "draw {draw}: {path} in {region} names ID {}",
                        row["id"]
                    );
                }
            }
        }
        // Every subject takes a new version at the home, with an ID no client was given before.
        for (n, subject) in subjects.iter().enumerate() {
            let text = schema(&format!("After{n}"));
            let id = self.register(0, subject, &text).await;
            assert!(id.is_some(), "draw {draw}: {subject} took no new version after the merge: {:?}", self.unexpected);
        }
    }
}

/// Runs `test` over `regions` regions of one registry (a table name and a bucket each), created on
/// the emulator and deleted after (even on panic). Does nothing when the tests skip.
async fn with_world<F, Fut>(regions: usize, draw: u64, test: F)
where
    F: FnOnce(World) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let Some(sdk) = support::emulator_sdk().await else { return };
    let names = registry_store_aws::testing::unique_names("adv");
    let sites: Vec<Site> = REGIONS[..regions]
        .iter()
        .enumerate()
        .map(|(n, region)| Site {
            sdk: in_region(&sdk, region),
            config: AwsStoreConfig { table: names.table.clone(), bucket: format!("{}-{n}", names.bucket) },
        })
        .collect();
    for site in &sites {
        create_resources(&site.sdk, &site.config, true).await.unwrap_or_else(|e| panic!("creating: {e}"));
    }
    let buckets =
        REGIONS[..regions].iter().zip(&sites).map(|(r, s)| (r.to_string(), s.config.bucket.clone())).collect();
    let world = World {
        sites: sites.clone(),
        buckets,
        adversary: Adversary::new(sites.clone(), draw),
        given: Vec::new(),
        unexpected: Vec::new(),
        draw,
    };
    let outcome = futures::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(test(world))).await;
    for site in &sites {
        delete_resources(&site.sdk, &site.config, true).await.unwrap_or_else(|e| panic!("deleting: {e}"));
    }
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// The run the multi-region design was found wanting on: replication cut both ways, a failover to
/// region 1 (the old home not reached: `--accept-loss`), the new home issues IDs, the old home
/// (whose replica has no marker) issues one, its replication to the new home resumes (its later
/// write of the ID counter wins over the new home's), and both homes issue again. With `failback`,
/// region 0 then becomes home again while region 1 is cut off in turn; with three regions, the third
/// receives everything in the draw's order.
async fn cut_off_old_home_keeps_writing(regions: usize, failback: bool) {
    with_world(regions, 7, |mut world| async move {
        let subjects: Vec<String> = ["fo-a", "fo-b", ":.team:fo-t"].iter().map(ToString::to_string).collect();
        for (n, subject) in subjects.iter().enumerate() {
            world.register(0, subject, &schema(&format!("Start{n}"))).await;
        }
        world.adversary.converge().await;

        world.adversary.cut(0, 1);
        world.adversary.cut(1, 0);
        let floor = world.fail_over(1, None).await;
        for n in 0..5 {
            let id = world.register(1, &subjects[n % 3], &schema(&format!("New{n}"))).await;
            assert!(id.is_some_and(|id| id > floor), "the new home issued {id:?}, not above its floor {floor}");
        }
        let resid = world.register(0, "fo-resid2", &schema("FOr2")).await;
        assert!(resid.is_some(), "the old home, not yet reached by the marker, commits: {:?}", world.unexpected);
        // The same schema at both homes (one fingerprint, two IDs) and a version number both give.
        world.register(0, "fo-a", &schema("Both")).await;
        world.register(1, "fo-b", &schema("Both")).await;
        world.register(0, "fo-b", &schema("SameVersionOld")).await;
        world.register(1, "fo-b", &schema("SameVersionNew")).await;

        world.adversary.heal(0, 1);
        world.adversary.converge().await;
        let gap_id = world.register(1, "fo-gap", &schema("FOgap")).await;
        assert!(gap_id.is_some_and(|id| id > floor), "after the old home's counter arrived: {gap_id:?} <= {floor}");
        world.register(0, "fo-resid3", &schema("FOr3")).await;

        let mut subjects = subjects;
        subjects.extend(["fo-resid2", "fo-gap"].map(String::from));
        if failback {
            world.adversary.heal(1, 0);
            world.adversary.converge().await;
            world.adversary.cut(0, 1);
            world.adversary.cut(1, 0);
            let back = world.fail_over(0, None).await;
            let id = world.register(0, "fo-a", &schema("Back")).await;
            assert!(id.is_some_and(|id| id > back), "the home after failback issued {id:?}, not above {back}");
            world.register(1, "fo-b", &schema("InterimLate")).await;
            world.adversary.heal(1, 0);
            world.adversary.converge().await;
            world.register(1, "fo-b", &schema("InterimLater")).await;
        }
        world.converge_and_check(&subjects).await;
    })
    .await;
}

#[tokio::test]
async fn an_old_home_cut_off_after_a_failover_never_reissues_an_id_the_new_home_gave() {
    cut_off_old_home_keeps_writing(2, false).await;
}

#[tokio::test]
async fn a_failback_with_the_interim_home_cut_off_never_reissues_an_id() {
    cut_off_old_home_keeps_writing(2, true).await;
}

#[tokio::test]
async fn three_regions_with_a_cut_off_old_home_never_reissue_an_id() {
    cut_off_old_home_keeps_writing(3, true).await;
}

/// A random workload drawn from a number: clients in every region register new schemas and schemas other
/// subjects hold, while routes are cut and healed and replication moves as the draw says; up to two
/// failovers (to a random other region; the old home reached and fenced directly or not, as the
/// draw says) happen along the way. Then the oracle.
async fn random_workload(regions: usize, draw: u64) {
    with_world(regions, draw, |mut world| async move {
        let subjects: Vec<String> = ["r-a", "r-b", "r-c", ":.team:r-t"].iter().map(ToString::to_string).collect();
        let mut failovers = 0;
        for step in 0..48 {
            let r = world.adversary.rng().below(regions);
            let subject = subjects[world.adversary.rng().below(subjects.len())].clone();
            match world.adversary.rng().below(10) {
                0..=5 => {
                    world.register(r, &subject, &schema(&format!("S{draw}N{step}"))).await;
                }
                6 | 7 => {
                    let reused = world.adversary.rng().below(world.given.len().max(1));
                    if let Some(given) = world.given.get(reused).cloned() {
                        world.register(r, &subject, &given.schema).await;
                    }
                }
                8 => {
                    let (from, to) = (world.adversary.rng().below(regions), world.adversary.rng().below(regions));
                    if world.adversary.rng().chance(1, 2) {
                        world.adversary.cut(from, to);
                    } else {
                        world.adversary.heal(from, to);
                    }
                }
                _ if failovers < 2 && step > 8 => {
                    let home = world.home_seen_from(r).await;
                    let to = (home + 1 + world.adversary.rng().below(regions - 1)) % regions;
                    let fence = world.adversary.rng().chance(1, 2).then_some(home);
                    world.fail_over(to, fence).await;
                    failovers += 1;
                }
                _ => {}
            }
            world.adversary.step().await;
        }
        eprintln!(
            "draw {draw}, {regions} regions: {} IDs given, {failovers} failovers, {} deliveries applied, {} superseded",
            world.given.len(),
            world.adversary.applied,
            world.adversary.superseded
        );
        world.converge_and_check(&subjects).await;
    })
    .await;
}

/// The draws to run: `REGISTRY_TEST_DRAW` alone, else `defaults`.
fn draws(defaults: &[u64]) -> Vec<u64> {
    match std::env::var("REGISTRY_TEST_DRAW").ok().and_then(|s| s.parse().ok()) {
        Some(draw) => vec![draw],
        None => defaults.to_vec(),
    }
}

#[tokio::test]
async fn random_workloads_in_two_regions_keep_every_id_to_one_schema() {
    for draw in draws(&[1, 2, 3]) {
        random_workload(2, draw).await;
    }
}

#[tokio::test]
async fn random_workloads_in_three_regions_keep_every_id_to_one_schema() {
    for draw in draws(&[11, 12]) {
        random_workload(3, draw).await;
    }
}
