//! The admin subcommands end to end: the `registry` binary against `registry serve` children
//! and the embedded (and, when an emulator is configured, the AWS) store.

mod support;

use serde_json::json;
use support::*;

#[tokio::test]
async fn import_from_a_running_registry_answers_every_get_identically() {
    let source = seeded_server().await;
    let embedded = EmbeddedStore::new();
    let target = serve(&embedded.args(), &[]).await;

    let dry = run_ok(&["import", "--from", &source.url, "--to", &target.url, "--dry-run"], &[]);
    assert!(dry.contains("versions registered: 9"), "{dry}");
    let (_, subjects) = call("GET", &format!("{}/subjects?deleted=true", target.url), None).await;
    assert_eq!(subjects, json!([]), "a dry run writes nothing");

    let summary = run_ok(&["import", "--from", &source.url, "--to", &target.url], &[]);
    assert!(summary.contains("verified ids: 8"), "{summary}");
    assert_same_answers(&source.url, &target.url).await;

    let again = run_ok(&["import", "--from", &source.url, "--to", &target.url], &[]);
    assert!(again.contains("versions already present: 9"), "{again}");
    assert!(!again.contains("versions registered"), "a rerun writes no version: {again}");
    assert_same_answers(&source.url, &target.url).await;
}

#[tokio::test]
async fn an_import_cut_short_is_finished_by_the_rerun() {
    let source = seeded_server().await;
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let export = dir.path().join("full.jsonl");
    run_ok(&["export", "--url", &source.url, "--to", &export.to_string_lossy()], &[]);
    let all = lines(&export);
    // The crash: only the header, the global settings and the first versions were written.
    let partial = dir.path().join("partial.jsonl");
    std::fs::write(&partial, all[..5].join("\n")).unwrap_or_else(|e| panic!("{e}"));
    let target = serve(&["--backend", "memory"], &[]).await;
    run_ok(&["import", "--from-file", &partial.to_string_lossy(), "--to", &target.url], &[]);
    let (_, subjects) = call("GET", &format!("{}/subjects?deleted=true", target.url), None).await;
    assert!(subjects.as_array().is_some_and(|s| !s.is_empty() && s.len() < 8), "partial state: {subjects}");

    let rerun = run_ok(&["import", "--from", &source.url, "--to", &target.url], &[]);
    assert!(rerun.contains("versions already present: 2"), "{rerun}");
    assert_same_answers(&source.url, &target.url).await;
}

/// Exports `url`, restores into the store `store_args`/`envs` name, exports that store, and
/// checks both files are byte-identical and the restored store answers like the source.
async fn round_trip(source: &Server, store_args: &[&str], envs: &[(&str, &str)]) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (first, second) = (dir.path().join("first.jsonl"), dir.path().join("second.jsonl"));
    let (first_name, second_name) = (first.to_string_lossy().to_string(), second.to_string_lossy().to_string());
    run_ok(&["export", "--url", &source.url, "--to", &first.to_string_lossy()], envs);
    let restore = [&["import", "--from-file", first_name.as_str(), "--to-store"][..], store_args].concat();
    run_ok(&restore, envs);
    run_ok(&[&["export", "--to", second_name.as_str()][..], store_args].concat(), envs);
    let (a, b) = (std::fs::read(&first).unwrap_or_default(), std::fs::read(&second).unwrap_or_default());
    assert!(a.len() > 1000, "the export holds the registry filled by seed()");
    assert_eq!(String::from_utf8_lossy(&a), String::from_utf8_lossy(&b), "round trip is byte-identical");
    let restored = serve(store_args, envs).await;
    assert_same_answers(&source.url, &restored.url).await;
}

#[tokio::test]
async fn export_and_restore_round_trip_with_contexts_on_the_embedded_store() {
    let source = contexts_server().await;
    let embedded = EmbeddedStore::new();
    round_trip(&source, &embedded.args(), &[]).await;
}

#[tokio::test]
async fn export_and_restore_round_trip_with_contexts_on_the_aws_store() {
    let Some(store) = AwsStoreNames::initialised("admin-rt") else { return };
    let source = contexts_server().await;
    round_trip(&source, &["--backend", "aws"], &store.envs()).await;
}

#[tokio::test]
async fn import_from_a_registry_with_contexts_into_the_aws_store() {
    let Some(store) = AwsStoreNames::initialised("admin-ctx") else { return };
    let envs = store.envs();
    let source = contexts_server().await;
    let summary = run_ok(&["import", "--from", &source.url, "--backend", "aws"], &envs);
    assert!(summary.contains("contexts: 3") && summary.contains("verified ids: 12"), "{summary}");
    let target = serve(&["--backend", "aws"], &envs).await;
    assert_same_answers(&source.url, &target.url).await;
    let (a, b) = (schema_in(&target.url, ":.a:", 1).await, schema_in(&target.url, ":.b:", 1).await);
    assert!(a.contains("Address") && b.contains("Payment"), "ID 1 names a different schema in each context");
}

/// A fresh embedded store under a temporary directory (removed on drop).
struct EmbeddedStore {
    dir: tempfile::TempDir,
    data: String,
}

impl EmbeddedStore {
    fn new() -> EmbeddedStore {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let data = dir.path().join("data").to_string_lossy().to_string();
        EmbeddedStore { dir, data }
    }

    /// The `registry` arguments naming this store.
    fn args(&self) -> [&str; 4] {
        ["--backend", "embedded", "--data-dir", self.data.as_str()]
    }
}

/// The table and bucket of one AWS test's store.
struct AwsStoreNames {
    table: String,
    bucket: String,
}

impl AwsStoreNames {
    /// Unique names for one AWS test, created with `aws-init`; `None` (skipped) without an emulator.
    fn initialised(prefix: &str) -> Option<AwsStoreNames> {
        if std::env::var_os("AWS_ENDPOINT_URL").is_none() && std::env::var_os("CI").is_none() {
            eprintln!("skipped: set AWS_ENDPOINT_URL (emulator) to run the AWS tests");
            return None;
        }
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos()).unwrap_or(0);
        let store = AwsStoreNames {
            table: format!("{prefix}-{}-{nanos}", std::process::id()),
            bucket: format!("{prefix}-{}-{}", std::process::id(), nanos % 1_000_000_000),
        };
        run_ok(&["aws-init"], &store.envs());
        Some(store)
    }

    /// The environment naming this store to the `registry` binary.
    fn envs(&self) -> [(&'static str, &str); 2] {
        [("REGISTRY_TABLE", self.table.as_str()), ("REGISTRY_BUCKET", self.bucket.as_str())]
    }
}

/// Registers the Avro record `name` under `subject` at `url`; returns its ID.
async fn register_record(url: &str, subject: &str, name: &str) -> i64 {
    let body = json!({ "schema": record(name, &["a"]) });
    let answer = ok("POST", &format!("{url}/subjects/{subject}/versions"), Some(body)).await;
    answer["id"].as_i64().unwrap_or_else(|| panic!("no id in {answer}"))
}

#[tokio::test]
async fn restore_check_raises_a_restored_counter_past_every_issued_id() {
    let Some(store) = AwsStoreNames::initialised("admin-rc") else { return };
    let live = store.envs();
    let served = serve(&["--backend", "aws"], &live).await;
    let mut issued = Vec::new();
    for name in ["A", "B", "C"] {
        issued.push(register_record(&served.url, &format!("{name}-value"), name).await);
    }
    assert_eq!(issued, [1, 2, 3]);
    drop(served);

    // The table restored to a state before any registration (an empty table over the same bucket).
    let restored_store = AwsStoreNames { table: format!("{}-restored", store.table), bucket: store.bucket.clone() };
    let restored = restored_store.envs();
    run_ok(&["aws-init"], &restored);
    let dry = run_ok(&["restore-check", "--dry-run"], &restored);
    assert!(dry.contains("highest ledger id above the counter: 3"), "{dry}");
    assert!(dry.contains("counter would be raised to: 3"), "{dry}");
    let applied = run_ok(&["restore-check"], &restored);
    assert!(applied.contains("id counter before: 0") && applied.contains("counter raised to: 3"), "{applied}");
    let again = run_ok(&["restore-check"], &restored);
    assert!(
        again.contains("id counter before: 3") && again.contains("highest ledger id above the counter: 0"),
        "{again}"
    );

    let served = serve(&["--backend", "aws"], &restored).await;
    assert_eq!(register_record(&served.url, "payments-value", "D").await, 4, "IDs 1 to 3 are never issued again");
}

#[tokio::test]
async fn prune_soft_then_hard_deletes_inactive_subjects_and_keeps_recent_ids_for_retention() {
    let source = seeded_server().await;
    let embedded = EmbeddedStore::new();
    let store = embedded.args();
    run_ok(&[&["import", "--from", &source.url][..], &store].concat(), &[]);

    // Everything was registered today, so nothing is inactive for a day.
    let none = run_ok(&[&["prune", "--inactive-days", "1"][..], &store].concat(), &[]);
    assert!(none.contains("subjects active: 7") && !none.contains("deleted"), "{none}");

    // A list prune hard-deletes only the listed subject.
    let list = embedded.dir.path().join("subjects.txt");
    std::fs::write(&list, "# retired\nretired-value\n").unwrap_or_else(|e| panic!("{e}"));
    let listed = run_ok(&[&["prune", "--subjects-from", &list.to_string_lossy()][..], &store].concat(), &[]);
    assert!(listed.contains("subjects hard-deleted: 1"), "{listed}");

    // The retention guard: idle "0 days" is inactive, but active within --min-age, so soft only.
    let dry = run_ok(&[&["prune", "--inactive-days", "0", "--min-age", "7", "--dry-run"][..], &store].concat(), &[]);
    assert!(dry.contains("subjects soft-deleted: 6"), "{dry}");
    let guarded = run_ok(&[&["prune", "--inactive-days", "0", "--min-age", "7"][..], &store].concat(), &[]);
    assert!(guarded.contains("kept soft-deleted by --min-age"), "{guarded}");
    assert!(guarded.contains("subjects soft-deleted: 5"), "{guarded}");
    assert!(guarded.contains("skipped: read-only mode: 1"), "the READONLY subject is left alone: {guarded}");
    assert!(!guarded.contains("hard-deleted"), "{guarded}");
    let served = serve(&store, &[]).await;
    let (_, live) = call("GET", &format!("{}/subjects", served.url), None).await;
    let (_, all) = call("GET", &format!("{}/subjects?deleted=true", served.url), None).await;
    assert_eq!(live, json!(["imported-value"]), "every other inactive subject is soft-deleted");
    assert_eq!(all.as_array().map(Vec::len), Some(6), "none hard-deleted under the retention guard: {all}");
    let (status, _) = call("GET", &format!("{}/schemas/ids/6", served.url), None).await;
    assert_eq!(status, 200, "IDs of soft-deleted subjects still resolve");
    drop(served);

    let hard = run_ok(&[&["prune", "--inactive-days", "0"][..], &store].concat(), &[]);
    assert!(hard.contains("subjects hard-deleted: 5"), "referenced subjects go after their referrers: {hard}");
    let served = serve(&store, &[]).await;
    let (_, all) = call("GET", &format!("{}/subjects?deleted=true", served.url), None).await;
    assert_eq!(all, json!(["imported-value"]));
}

#[tokio::test]
async fn prune_by_activity_needs_the_store_marker_not_a_url() {
    let source = serve(&["--backend", "memory"], &[]).await;
    let output = run(&["prune", "--inactive-days", "30", "--url", &source.url], &[]);
    assert!(!output.status.success());
    assert!(String::from_utf8_lossy(&output.stderr).contains("--subjects-from"));
}

/// Registers `count` versions of the record `Capped` under `subject`, each with one field more.
async fn register_growing(base: &str, subject: &str, count: usize) {
    for n in 1..=count {
        let fields: Vec<String> = (0..n).map(|i| format!("f{i}")).collect();
        let fields: Vec<&str> = fields.iter().map(String::as_str).collect();
        register(base, subject, json!({"schema": record("Capped", &fields)})).await;
    }
}

/// Every version number of `subject`, soft-deleted ones too.
async fn all_versions(base: &str, subject: &str) -> serde_json::Value {
    call("GET", &format!("{base}/subjects/{subject}/versions?deleted=true"), None).await.1
}

#[tokio::test]
async fn cap_versions_keeps_the_newest_and_skips_transitive_subjects_unless_forced() {
    let server = serve(&["--backend", "memory"], &[]).await;
    let base = server.url.as_str();
    for (subject, level) in [("plain-value", "BACKWARD"), ("strict-value", "BACKWARD_TRANSITIVE")] {
        ok("PUT", &format!("{base}/config/{subject}"), Some(json!({"compatibility": level}))).await;
        register_growing(base, subject, 4).await;
    }
    let versions = |subject: &'static str| all_versions(base, subject);
    let dry = run_ok(&["cap-versions", "--keep", "2", "--url", base, "--dry-run"], &[]);
    assert!(dry.contains("versions deleted: 2"), "{dry}");
    assert_eq!(versions("plain-value").await, json!([1, 2, 3, 4]), "dry run deletes nothing");

    let capped = run_ok(&["cap-versions", "--keep", "2", "--url", base], &[]);
    assert!(capped.contains("strict-value (BACKWARD_TRANSITIVE)"), "transitive subjects are listed: {capped}");
    assert_eq!(versions("plain-value").await, json!([3, 4]), "older versions are hard-deleted");
    assert_eq!(versions("strict-value").await, json!([1, 2, 3, 4]), "transitive subjects are skipped");

    run_ok(&["cap-versions", "--keep", "1", "--subject-prefix", "strict", "--force", "--url", base], &[]);
    assert_eq!(versions("strict-value").await, json!([4]));
    assert_eq!(versions("plain-value").await, json!([3, 4]), "the prefix limits the subjects");
}

/// The schema text ID `id` names in the context `context` (`:.ctx:`) of `base`.
async fn schema_in(base: &str, context: &str, id: i64) -> String {
    let answer = ok("GET", &format!("{base}/schemas/ids/{id}?subject={context}"), None).await;
    answer["schema"].as_str().unwrap_or_default().to_string()
}

#[tokio::test]
async fn import_from_a_registry_with_contexts_keeps_each_contexts_ids_versions_and_settings() {
    let source = contexts_server().await;
    let embedded = EmbeddedStore::new();
    let store = embedded.args();

    let summary = run_ok(&[&["import", "--from", &source.url][..], &store].concat(), &[]);
    assert!(summary.contains("contexts: 3") && summary.contains("verified ids: 12"), "8 + 2 + 2 IDs: {summary}");
    let target = serve(&store, &[]).await;
    assert_same_answers(&source.url, &target.url).await;
    let (a, b) = (schema_in(&target.url, ":.a:", 1).await, schema_in(&target.url, ":.b:", 1).await);
    assert!(a.contains("Address") && b.contains("Payment"), "ID 1 names a different schema in each context");
    let (_, mode) = call("GET", &format!("{}/mode/:.b:", target.url), None).await;
    assert_eq!(mode["error_code"], 40409, "the IMPORT mode the import put on .b is removed again: {mode}");
    drop(target);

    let again = run_ok(&[&["import", "--from", &source.url][..], &store].concat(), &[]);
    assert!(again.contains("versions already present: 13"), "{again}");
    assert!(!again.contains("versions registered"), "a rerun writes no version: {again}");

    // Prune by activity reads the last-used marker of qualified subjects too; all ten are recent.
    let idle = run_ok(&[&["prune", "--inactive-days", "1"][..], &store].concat(), &[]);
    assert!(idle.contains("subjects active: 10") && !idle.contains("deleted"), "{idle}");
}

#[tokio::test]
async fn import_filters_by_context_and_subject_prefix() {
    let source = contexts_server().await;
    let target = serve(&["--backend", "memory"], &[]).await;
    let subjects = || async { call("GET", &format!("{}/subjects?deleted=true", target.url), None).await.1 };

    run_ok(&["import", "--from", &source.url, "--to", &target.url, "--context", "b"], &[]);
    assert_eq!(subjects().await, json!([":.b:orders-value"]));
    assert_eq!(ok("GET", &format!("{}/config/:.b:", target.url), None).await["compatibilityLevel"], "NONE");
    let global = ok("GET", &format!("{}/config", target.url), None).await;
    assert_eq!(global["compatibilityLevel"], "BACKWARD", "the default context's settings stay: {global}");
    assert_eq!(ok("GET", &format!("{}/mode", target.url), None).await["mode"], "READWRITE");

    // An interrupted run leaves its IMPORT behind; the next run does not give it back.
    ok("PUT", &format!("{}/mode/:.b:?force=true", target.url), Some(json!({"mode": "IMPORT"}))).await;
    let prefix = run_ok(&["import", "--from", &source.url, "--to", &target.url, "--subject-prefix", "orders"], &[]);
    let (_, mode) = call("GET", &format!("{}/mode/:.b:", target.url), None).await;
    assert_eq!(mode["error_code"], 40409, "{mode}");
    assert!(prefix.contains("contexts: 3"), "{prefix}");
    let expected = json!([":.a:address-value", ":.a:orders-value", ":.b:orders-value", "orders-value"]);
    assert_eq!(subjects().await, expected, "the referenced :.a:address-value comes along");
    assert_eq!(schema_in(&target.url, ":.a:", 1).await, schema_in(&source.url, ":.a:", 1).await);
    assert_eq!(ok("GET", &format!("{}/mode/:.a:", target.url), None).await["mode"], "READONLY");

    let bad = run(&["import", "--from", &source.url, "--to", &target.url, "--context", "a:b"], &[]);
    assert!(!bad.status.success() && String::from_utf8_lossy(&bad.stderr).contains("not a context name"));
}

#[tokio::test]
async fn prune_cap_and_report_work_on_qualified_subjects() {
    let server = contexts_server().await;
    let base = server.url.as_str();
    ok("PUT", &format!("{base}/mode/:.a:"), Some(json!({"mode": "READWRITE"}))).await;
    ok("PUT", &format!("{base}/config/:.t:"), Some(json!({"compatibility": "BACKWARD_TRANSITIVE"}))).await;
    for subject in [":.a:capped-value", ":.t:capped-value", "capped-value"] {
        register_growing(base, subject, 3).await;
    }
    let versions = |subject: &'static str| all_versions(base, subject);
    let capped = run_ok(&["cap-versions", "--keep", "1", "--subject-prefix", "capped", "--url", base], &[]);
    assert!(capped.contains(":.t:capped-value (BACKWARD_TRANSITIVE)"), "the context's level applies: {capped}");
    assert_eq!(versions(":.a:capped-value").await, json!([3]));
    assert_eq!(versions(":.t:capped-value").await, json!([1, 2, 3]));
    assert_eq!(versions("capped-value").await, json!([3]));

    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let list = dir.path().join("subjects.txt");
    std::fs::write(&list, ":.b:orders-value\n").unwrap_or_else(|e| panic!("{e}"));
    let pruned = run_ok(&["prune", "--subjects-from", &list.to_string_lossy(), "--url", base], &[]);
    assert!(pruned.contains("subjects hard-deleted: 1"), "{pruned}");
    let (_, all) = call("GET", &format!("{base}/subjects?deleted=true&subjectPrefix=:.b:"), None).await;
    assert_eq!(all, json!([]), "the listed subject of .b is hard-deleted");
    assert!(schema_in(base, ":.a:", 1).await.contains("Address"), "the same ID in another context stays");

    let report = run_ok(&["report", "--format", "json", "--url", base], &[]);
    let rows: serde_json::Value = serde_json::from_str(&report).unwrap_or_else(|e| panic!("{e}: {report}"));
    let contexts: Vec<&str> = rows.as_array().into_iter().flatten().filter_map(|r| r["context"].as_str()).collect();
    let mut grouped = contexts.clone();
    grouped.dedup();
    assert_eq!(grouped, [".", ".a", ".t"], "rows are grouped by context: {contexts:?}");
    let only = run_ok(&["report", "--context", ".a", "--url", base], &[]);
    let subjects: Vec<&str> = only.lines().skip(1).filter_map(|l| l.split_whitespace().nth(2)).collect();
    assert_eq!(subjects, [":.a:address-value", ":.a:capped-value", ":.a:orders-value"], "{only}");
}

/// Serves `source` as a Confluent registry older than 7.2 answers: `GET /subjects` without a
/// `subjectPrefix` lists the default context only (every request is forwarded). Returns its URL.
async fn listing_the_default_context_only(source: &str) -> String {
    use axum::extract::{Request, State};
    let forward = |State(source): State<String>, request: Request| async move {
        let uri = request.uri().clone();
        let method = reqwest::Method::from_bytes(request.method().as_str().as_bytes()).unwrap_or_default();
        let body = axum::body::to_bytes(request.into_body(), usize::MAX).await.unwrap_or_default();
        let mut forwarded = reqwest::Client::new().request(method, format!("{source}{uri}")).body(body.to_vec());
        forwarded = forwarded.header("content-type", "application/vnd.schemaregistry.v1+json");
        let response = forwarded.send().await.unwrap_or_else(|e| panic!("{uri}: {e}"));
        let status = response.status().as_u16();
        let mut answer: serde_json::Value = response.json().await.unwrap_or_default();
        if uri.path() == "/subjects" && !uri.query().unwrap_or_default().contains("subjectPrefix") {
            answer
                .as_array_mut()
                .into_iter()
                .for_each(|names| names.retain(|n| context_prefix(n.as_str().unwrap_or_default()).is_empty()));
        }
        (axum::http::StatusCode::from_u16(status).unwrap_or_default(), axum::Json(answer))
    };
    let app = axum::Router::new().fallback(forward).with_state(source.to_string());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap_or_else(|e| panic!("{e}"));
    let url = format!("http://{}", listener.local_addr().unwrap_or_else(|e| panic!("{e}")));
    tokio::spawn(async move { axum::serve(listener, app).await });
    url
}

#[tokio::test(flavor = "multi_thread")]
async fn import_lists_each_context_from_a_registry_whose_default_listing_omits_them() {
    let source = contexts_server().await;
    let older = listing_the_default_context_only(&source.url).await;
    let (_, listed) = call("GET", &format!("{older}/subjects?deleted=true"), None).await;
    assert!(listed.as_array().is_some_and(|names| names.len() == 7), "the default context only: {listed}");
    let target = serve(&["--backend", "memory"], &[]).await;
    let summary = run_ok(&["import", "--from", &older, "--to", &target.url], &[]);
    assert!(summary.contains("contexts: 3"), "{summary}");
    assert_same_answers(&source.url, &target.url).await;
}
