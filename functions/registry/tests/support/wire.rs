#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Raw HTTP/1.1 over TCP: connections from chosen loopback addresses (each one another client
//! address to the server), one answer read off a stream, and whether the server closed it.

use serde_json::Value;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Long enough never to decide an outcome in these tests.
pub const PATIENCE: Duration = Duration::from_secs(20);

pub async fn connect(address: &str) -> TcpStream {
    TcpStream::connect(address).await.unwrap()
}

/// One answer read off `stream`: status, lower-cased head, body (by `content-length`).
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub head: String,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {self:?}"))
    }
}

pub async fn read_answer(stream: &mut TcpStream) -> Option<Answer> {
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let end = loop {
        if let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        bytes.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&bytes[..end]).to_lowercase();
    let status = head.get(9..12)?.parse().ok()?;
    let length: usize = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |value| value.trim().parse().unwrap_or(0));
    let mut body = bytes[end..].to_vec();
    while body.len() < length {
        let n = stream.read(&mut chunk).await.ok()?;
        if n == 0 {
            break;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    Some(Answer { status, head, body })
}

/// Sends `request` on a new connection and reads one answer.
pub async fn exchange(address: &str, request: &[u8]) -> Answer {
    let mut stream = connect(address).await;
    stream.write_all(request).await.unwrap();
    tokio::time::timeout(PATIENCE, read_answer(&mut stream)).await.unwrap().expect("an answer")
}

/// Whether the server closes `stream` (EOF or reset) with nothing more to say.
pub async fn closed_by_server(stream: &mut TcpStream) -> bool {
    let mut byte = [0u8; 1];
    matches!(tokio::time::timeout(PATIENCE, stream.read(&mut byte)).await, Ok(Ok(0) | Err(_)))
}

pub const GET_ROOT: &[u8] = b"GET / HTTP/1.1\r\nhost: registry\r\n\r\n";

/// A connection from `source` (a loopback address other than 127.0.0.1 is another client address).
pub async fn connect_from(source: &str, address: &str) -> TcpStream {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(format!("{source}:0").parse().unwrap()).unwrap();
    socket.connect(address.parse().unwrap()).await.unwrap()
}
