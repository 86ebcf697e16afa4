//! `registry import --from` against hostile sources the test serves itself on 127.0.0.1 (raw TCP,
//! one thread per connection): an endless answer, a silent one, endless `/contexts` paging, a
//! redirect to another registry, a non-JSON answer, subject listings without versions. Each import
//! must end on its own (the test kills it only after a generous bound) with exit status 1 and an
//! error naming the request and the bound or the expectation; the bounds are small through the
//! `REGISTRY_REMOTE_*` settings, so no case depends on the machine's speed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::io::Write;
use std::net::TcpStream;
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};
use support::raw_peer;

/// Long enough never to decide an outcome here, at any speed of the machine: an import still running
/// after it never ends (a hang guard).
const BOUND: Duration = Duration::from_secs(600);

/// What a fake source answers to one request.
enum Reply {
    /// A status and a body with its content type.
    Body(u16, &'static str, String),
    /// A 200 JSON array that never ends.
    Endless,
    /// Nothing, until the client goes away.
    Silent,
    /// A 307 to this base URL with the same path.
    RedirectTo(String),
}

fn json(status: u16, body: &str) -> Reply {
    Reply::Body(status, "application/vnd.schemaregistry.v1+json", body.to_string())
}

/// Serves `reply` (given each request's target) on a fresh port of 127.0.0.1; returns the base URL.
fn fake_source(reply: impl Fn(&str) -> Reply + Send + Sync + 'static) -> String {
    format!("http://{}", raw_peer::serve(move |stream| answer(stream, &reply)))
}

/// A fake source answering each request whose target starts with `prefix` with `reply()`, every
/// other with 404 / 40401 (a registry without that endpoint, `/contexts` among them).
fn fake_source_answering(prefix: &'static str, reply: impl Fn() -> Reply + Send + Sync + 'static) -> String {
    fake_source(move |target| if target.starts_with(prefix) { reply() } else { json(404, r#"{"error_code":40401}"#) })
}

fn answer(mut stream: TcpStream, reply: &dyn Fn(&str) -> Reply) {
    let Some(head) = raw_peer::read_head(&mut stream) else { return };
    let target = head.split_whitespace().nth(1).unwrap_or("/").to_string();
    let _ = match reply(&target) {
        Reply::Body(status, content_type, body) => write!(
            stream,
            "HTTP/1.1 {status} X\r\ncontent-type: {content_type}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
        Reply::RedirectTo(base) => write!(
            stream,
            "HTTP/1.1 307 Temporary Redirect\r\nlocation: {base}{target}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        ),
        Reply::Endless => {
            let _ = write!(stream, "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nconnection: close\r\n\r\n[");
            let chunk = "\"subject-name\",".repeat(4096);
            while stream.write_all(chunk.as_bytes()).is_ok() {}
            Ok(())
        }
        Reply::Silent => {
            raw_peer::read_until_closed(&mut stream);
            Ok(())
        }
    };
}

/// `registry import --from source` into a memory store with `envs`; `None` when still running
/// after [`BOUND`] (then killed).
fn import_from(source: &str, envs: &[(&str, &str)]) -> Option<Output> {
    let mut child = Command::new(support::BIN)
        .args(["import", "--from", source, "--to-store", "--backend", "memory"])
        .envs(envs.iter().copied())
        .env("RUST_LOG", "warn")
        .env("NO_COLOR", "1")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while started.elapsed() < BOUND {
        if child.try_wait().unwrap().is_some() {
            return Some(child.wait_with_output().unwrap());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
    None
}

/// Asserts the import failed with exit status 1 and an error containing each of `needles`.
fn assert_failed_with(output: Option<Output>, needles: &[&str]) {
    let output = output.expect("the import must end on its own");
    let stderr = String::from_utf8_lossy(&output.stderr);
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert_eq!(output.status.code(), Some(1), "stdout:\n{stdout}\nstderr:\n{stderr}");
    for needle in needles {
        assert!(stderr.contains(needle), "the error names {needle:?}:\n{stderr}");
    }
}

#[test]
fn an_endless_answer_is_cut_at_the_size_limit() {
    let source = fake_source_answering("/subjects", || Reply::Endless);
    // A request timeout no machine reaches reading 64 KiB: only the size limit can end the import.
    let envs = [("REGISTRY_REMOTE_MAX_ANSWER_BYTES", "65536"), ("REGISTRY_REMOTE_TIMEOUT_MS", "300000")];
    let output = import_from(&source, &envs);
    let request = format!("GET {source}/subjects?deleted=true");
    assert_failed_with(output, &[&request, "exceeds 65536 bytes", "REGISTRY_REMOTE_MAX_ANSWER_BYTES"]);
}

#[test]
fn a_silent_source_is_given_up_after_the_request_timeout() {
    let source = fake_source(|_| Reply::Silent);
    let output = import_from(&source, &[("REGISTRY_REMOTE_TIMEOUT_MS", "300")]);
    let request = format!("GET {source}/subjects?deleted=true");
    assert_failed_with(output, &[&request, "no complete answer within 300 ms", "REGISTRY_REMOTE_TIMEOUT_MS"]);
}

#[test]
fn endless_context_paging_stops_at_the_page_limit() {
    let source = fake_source(|target| {
        if target.starts_with("/subjects") {
            return json(200, "[]");
        }
        let Some(offset) = target.strip_prefix("/contexts?offset=").and_then(|rest| rest.split('&').next()) else {
            return json(404, r#"{"error_code":40401,"message":"not found"}"#);
        };
        let offset: usize = offset.parse().unwrap_or(0);
        let page: Vec<String> = (offset..offset + 1000).map(|n| format!(".c{n}")).collect();
        json(200, &serde_json::to_string(&page).unwrap())
    });
    let output = import_from(&source, &[("REGISTRY_REMOTE_MAX_PAGES", "3")]);
    assert_failed_with(output, &[&source, "after 3 pages", "REGISTRY_REMOTE_MAX_PAGES"]);
}

#[test]
fn a_redirect_out_of_the_source_is_refused() {
    let elsewhere = fake_source_answering("/subjects", || json(200, "[]"));
    let target = elsewhere.clone();
    let source = fake_source(move |_| Reply::RedirectTo(target.clone()));
    let output = import_from(&source, &[]);
    let redirected = format!("redirected to {elsewhere}/subjects?deleted=true");
    assert_failed_with(output, &[&format!("GET {source}/subjects?deleted=true"), &redirected]);
}

#[test]
fn a_redirect_within_the_source_is_followed() {
    let source = fake_source(|target| match target {
        "/subjects?deleted=true" => Reply::RedirectTo(String::new()),
        _ if target.starts_with("/subjects") => json(200, "[]"),
        _ => json(404, r#"{"error_code":40401}"#),
    });
    // The relative location `/subjects?deleted=true` again: followed until the redirect limit.
    let output = import_from(&source, &[]);
    assert_failed_with(output, &[&format!("GET {source}/subjects?deleted=true"), "more than 5 redirects"]);
}

#[test]
fn a_non_json_answer_names_the_request_status_and_expectation() {
    let source = fake_source_answering("/subjects", || {
        Reply::Body(200, "text/html", "<html><body>Sign in</body></html>".to_string())
    });
    let output = import_from(&source, &[]);
    let request = format!("GET {source}/subjects?deleted=true answered HTTP 200");
    assert_failed_with(output, &[&request, "is not JSON", "<html><body>Sign in"]);
}

#[test]
fn a_json_answer_of_the_wrong_shape_names_what_was_expected() {
    let source = fake_source_answering("/subjects", || json(200, r#"{"subjects":[]}"#));
    let output = import_from(&source, &[]);
    assert_failed_with(
        output,
        &[&format!("GET {source}/subjects?deleted=true"), "expected a JSON array of subject names"],
    );
}

#[test]
fn a_source_listing_subjects_without_any_version_fails_the_import() {
    // Only the listing answers: every subject's versions are 404.
    let source = fake_source_answering("/subjects?", || json(200, r#"["a-value","b-value"]"#));
    let output = import_from(&source, &[]);
    assert_failed_with(output, &[&source, "lists 2 subject(s) but answers no version of any"]);
}
