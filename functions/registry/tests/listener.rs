//! `registry serve`'s listener against raw TCP clients: the header, body and idle budgets, the
//! connection limits (overall and per client address) and the eviction of idle and silent
//! connections at the limit, and Confluent's JSON error body on every answer the HTTP layer writes itself
//! (unparsable requests, oversized targets and headers, a declared body over the limit with
//! `Expect: 100-continue`). Budgets are short here; the assertions are about outcomes (what the
//! client receives, whether the connection is closed), never about how long anything took.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;
use support::wire::{GET_ROOT, PATIENCE, closed_by_server, connect, connect_from, exchange, read_answer};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

async fn start(envs: &[(&str, &str)]) -> (support::Server, String) {
    let server = support::serve(&["--backend", "memory"], envs).await;
    let address = server.url.trim_start_matches("http://").to_string();
    (server, address)
}

fn assert_confluent_error(answer: &support::wire::Answer, status: u16) {
    assert_eq!(answer.status, status, "{answer:?}");
    assert!(answer.head.contains("content-type: application/vnd.schemaregistry.v1+json"), "{answer:?}");
    let body = answer.json();
    assert_eq!(body["error_code"], status, "{body}");
    assert!(body["message"].as_str().is_some_and(|message| message.starts_with(&format!("HTTP {status} "))));
}

#[tokio::test]
async fn a_client_sending_half_a_header_is_closed_after_the_header_budget() {
    let (_server, address) =
        start(&[("REGISTRY_HEADER_TIMEOUT_MS", "300"), ("REGISTRY_IDLE_TIMEOUT_MS", "60000")]).await;
    let mut slow = connect(&address).await;
    slow.write_all(b"GET /subjects HTTP/1.1\r\nhost: registry\r\nx-partial: ").await.unwrap();
    assert!(closed_by_server(&mut slow).await, "a half-sent head must not hold the connection");
    // Between requests, a keep-alive connection is governed by the longer idle budget.
    let mut idle = idle_keep_alive(&address).await;
    tokio::time::sleep(Duration::from_millis(900)).await;
    idle.write_all(GET_ROOT).await.unwrap();
    let answer = tokio::time::timeout(PATIENCE, read_answer(&mut idle)).await.unwrap();
    assert_eq!(answer.map(|answer| answer.status), Some(200));
}

#[tokio::test]
async fn a_connection_that_sends_nothing_is_closed_after_the_header_budget_from_its_acceptance() {
    let (_server, address) =
        start(&[("REGISTRY_HEADER_TIMEOUT_MS", "300"), ("REGISTRY_IDLE_TIMEOUT_MS", "60000")]).await;
    let mut silent = connect(&address).await;
    assert!(closed_by_server(&mut silent).await, "a connection that never sends a byte must not be held");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_is_closed_after_the_idle_budget() {
    let (_server, address) = start(&[("REGISTRY_IDLE_TIMEOUT_MS", "300")]).await;
    let mut stream = connect(&address).await;
    stream.write_all(GET_ROOT).await.unwrap();
    let first = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap();
    assert_eq!(first.map(|answer| answer.status), Some(200));
    assert!(closed_by_server(&mut stream).await, "an idle keep-alive connection must be closed");
}

#[tokio::test]
async fn a_body_not_sent_in_time_is_answered_408() {
    let (_server, address) = start(&[("REGISTRY_BODY_TIMEOUT_MS", "300")]).await;
    let mut stream = connect(&address).await;
    let head = "POST /subjects/s/versions HTTP/1.1\r\nhost: registry\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(br#"{"schema":"#).await.unwrap();
    let answer = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap().expect("an answer");
    assert_confluent_error(&answer, 408);
    assert!(closed_by_server(&mut stream).await);
}

/// Connections [`answered`] opens at most: a work count, never reached unless the server never
/// answers.
const ATTEMPTS: usize = 20;

/// `request` answered on a new connection, and that connection. Under a short header budget
/// (counted from the acceptance) a busy machine may not write the head in time: that connection is
/// closed unanswered, as it should be, and another one is opened.
async fn answered(address: &str, request: &[u8]) -> (TcpStream, support::wire::Answer) {
    for _ in 0..ATTEMPTS {
        let mut stream = connect(address).await;
        if stream.write_all(request).await.is_err() {
            continue;
        }
        let answer = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap();
        if let Some(answer) = answer {
            return (stream, answer);
        }
    }
    panic!("no connection answered in {ATTEMPTS} attempts");
}

/// A keep-alive connection that has been answered once and is now idle.
async fn idle_keep_alive(address: &str) -> TcpStream {
    let (stream, answer) = answered(address, GET_ROOT).await;
    assert_eq!(answer.status, 200, "{answer:?}");
    stream
}

/// A connection whose request is in flight: its head is in, its body is still arriving.
async fn busy(address: &str) -> TcpStream {
    let mut stream = connect(address).await;
    let head = "POST /subjects/s/versions HTTP/1.1\r\nhost: registry\r\ncontent-type: application/json\r\ncontent-length: 100\r\n\r\n";
    stream.write_all(head.as_bytes()).await.unwrap();
    stream.write_all(br#"{"schema":"#).await.unwrap();
    stream
}

#[tokio::test]
async fn clients_beyond_the_connection_limit_wait_while_requests_are_in_flight() {
    let (_server, address) = start(&[("REGISTRY_MAX_CONNECTIONS", "2"), ("REGISTRY_BODY_TIMEOUT_MS", "60000")]).await;
    let mut held = vec![busy(&address).await, busy(&address).await];
    let mut waiting = connect(&address).await;
    waiting.write_all(GET_ROOT).await.unwrap();
    let early = tokio::time::timeout(Duration::from_millis(500), read_answer(&mut waiting)).await;
    assert!(early.is_err(), "a third connection must not be served while two requests are in flight: {early:?}");
    drop(held.pop());
    let answer = tokio::time::timeout(PATIENCE, read_answer(&mut waiting)).await.unwrap();
    assert_eq!(answer.map(|answer| answer.status), Some(200), "served once a slot is free");
}

#[tokio::test]
async fn an_idle_keep_alive_connection_gives_its_slot_to_a_new_client_at_the_limit() {
    let (_server, address) = start(&[("REGISTRY_MAX_CONNECTIONS", "2"), ("REGISTRY_IDLE_TIMEOUT_MS", "60000")]).await;
    let _idle = [idle_keep_alive(&address).await, idle_keep_alive(&address).await];
    let answer = exchange(&address, GET_ROOT).await;
    assert_eq!(answer.status, 200, "served in place of an idle connection, long before the idle budget");
}

#[tokio::test]
async fn a_silent_connection_gives_its_slot_to_a_new_client_at_the_limit() {
    let (_server, address) = start(&[("REGISTRY_MAX_CONNECTIONS", "2"), ("REGISTRY_HEADER_TIMEOUT_MS", "60000")]).await;
    let mut silent = [connect(&address).await, connect(&address).await];
    let answer = exchange(&address, GET_ROOT).await;
    assert_eq!(answer.status, 200, "served in place of a silent connection, long before the header budget");
    assert!(closed_by_server(&mut silent[0]).await, "the connection silent the longest made room");
}

#[tokio::test]
async fn silent_and_idle_connections_at_the_limit_do_not_keep_a_new_client_out() {
    let envs = [
        ("REGISTRY_MAX_CONNECTIONS", "4"),
        ("REGISTRY_HEADER_TIMEOUT_MS", "300"),
        ("REGISTRY_IDLE_TIMEOUT_MS", "60000"),
    ];
    let (_server, address) = start(&envs).await;
    let _idle = [idle_keep_alive(&address).await, idle_keep_alive(&address).await];
    let mut silent = [connect(&address).await, connect(&address).await];
    let (_, answer) = answered(&address, GET_ROOT).await;
    assert_eq!(answer.status, 200);
    for stream in &mut silent {
        assert!(closed_by_server(stream).await, "a silent connection is closed");
    }
}

#[tokio::test]
async fn one_client_address_cannot_take_every_connection() {
    let envs = [
        ("REGISTRY_MAX_CONNECTIONS", "10"),
        ("REGISTRY_MAX_CONNECTIONS_PER_PEER", "3"),
        ("REGISTRY_HEADER_TIMEOUT_MS", "60000"),
    ];
    let (_server, address) = start(&envs).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(connect_from("127.0.0.3", &address).await);
    }
    let mut over = connect_from("127.0.0.3", &address).await;
    assert!(closed_by_server(&mut over).await, "a fourth connection from one address is closed");
    let mut other = connect_from("127.0.0.2", &address).await;
    other.write_all(GET_ROOT).await.unwrap();
    let answer = tokio::time::timeout(PATIENCE, read_answer(&mut other)).await.unwrap();
    assert_eq!(answer.map(|answer| answer.status), Some(200), "another address is served");
    drop(held.pop());
    // The server sees the close a moment later; until then a new connection may still be refused.
    let mut served = None;
    for _ in 0..100 {
        let mut again = connect_from("127.0.0.3", &address).await;
        let _ = again.write_all(GET_ROOT).await;
        served = tokio::time::timeout(PATIENCE, read_answer(&mut again)).await.unwrap();
        if served.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(served.map(|answer| answer.status), Some(200), "the address has a place again once one closed");
}

#[tokio::test]
async fn every_answer_the_http_layer_writes_itself_is_a_confluent_error() {
    let (_server, address) = start(&[]).await;
    // Unparsable request line.
    assert_confluent_error(&exchange(&address, b"NOT A REQUEST\r\n\r\n").await, 400);
    assert_confluent_error(&exchange(&address, b"GET / HTTP/1.1\r\nbad header\r\n\r\n").await, 400);
    // A target over the registry's budget, and one over hyper's own (64 KiB).
    for length in [9 * 1024, 70 * 1024] {
        let request = format!("GET /subjects/{} HTTP/1.1\r\nhost: registry\r\n\r\n", "a".repeat(length));
        assert_confluent_error(&exchange(&address, request.as_bytes()).await, 414);
    }
    // Headers over the registry's byte budget, and more header lines than hyper parses.
    let big = format!("GET / HTTP/1.1\r\nhost: registry\r\nx-big: {}\r\n\r\n", "v".repeat(20 * 1024));
    assert_confluent_error(&exchange(&address, big.as_bytes()).await, 431);
    let many: String = (0..120).map(|n| format!("x-h{n}: v\r\n")).collect();
    let many = format!("GET / HTTP/1.1\r\nhost: registry\r\n{many}\r\n");
    assert_confluent_error(&exchange(&address, many.as_bytes()).await, 431);
    // The ordinary answers of the same server are unchanged.
    assert_eq!(exchange(&address, GET_ROOT).await.status, 200);
}

#[tokio::test]
async fn a_client_sending_a_whole_body_over_the_limit_reads_the_413() {
    let (_server, address) = start(&[]).await;
    let body = vec![b'y'; registry_http::MAX_BODY_BYTES + (1 << 20)];
    let head = format!(
        "POST /subjects/s/versions HTTP/1.1\r\nhost: registry\r\ncontent-type: application/json\r\n\
         content-length: {}\r\n\r\n",
        body.len()
    );
    // The server answers from the head, before the body arrives; the client only reads once it has
    // sent everything, as most clients do. The server's close must not reset the connection under it.
    for attempt in 0..3 {
        let mut stream = connect(&address).await;
        stream.write_all(head.as_bytes()).await.unwrap();
        let sent = stream.write_all(&body).await;
        assert!(sent.is_ok(), "attempt {attempt}: the body could not be sent: {sent:?}");
        let answer = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap();
        let answer = answer.unwrap_or_else(|| panic!("attempt {attempt}: no answer after the body was sent"));
        assert_eq!(answer.status, 413, "{answer:?}");
        assert_eq!(answer.json()["error_code"], 413);
    }
}

#[tokio::test]
async fn a_declared_body_over_the_limit_with_expect_continue_is_refused_before_100_continue() {
    let (_server, address) = start(&[]).await;
    let request = format!(
        "POST /subjects/s/versions HTTP/1.1\r\nhost: registry\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nexpect: 100-continue\r\n\r\n",
        registry_http::MAX_BODY_BYTES + 1
    );
    let answer = exchange(&address, request.as_bytes()).await;
    assert_eq!(answer.status, 413, "the first answer is the refusal, not 100 Continue: {answer:?}");
    assert_eq!(answer.json()["error_code"], 413);
    // Within the limit, the client is told to continue and the request is served.
    let mut stream = connect(&address).await;
    let body = r#"{"schema":"\"string\""}"#;
    let head = format!(
        "POST /subjects/s/versions HTTP/1.1\r\nhost: registry\r\ncontent-type: application/json\r\n\
         content-length: {}\r\nexpect: 100-continue\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    let interim = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap().expect("100");
    assert_eq!(interim.status, 100);
    stream.write_all(body.as_bytes()).await.unwrap();
    let done = tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap().expect("an answer");
    assert_eq!(done.status, 200, "{done:?}");
}
