#![allow(clippy::unwrap_used, clippy::expect_used)]

//! Peers the tests serve themselves over raw TCP on 127.0.0.1 (hostile sources and destinations):
//! one thread per connection, the request head read byte by byte, nothing else assumed.

use std::io::Read;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;

/// Request heads longer than this are not read to their end.
const MAX_HEAD: usize = 64 * 1024;

/// Listens on a fresh port of 127.0.0.1 and hands every connection to `answer` on a thread of its
/// own; the address.
pub fn serve(answer: impl Fn(TcpStream) + Send + Sync + 'static) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let address = listener.local_addr().unwrap();
    let answer = Arc::new(answer);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let answer = Arc::clone(&answer);
            std::thread::spawn(move || answer(stream));
        }
    });
    address
}

/// The request head read off `stream` up to its blank line (at most [`MAX_HEAD`] bytes); `None`
/// when the client goes away first.
pub fn read_head(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") && head.len() < MAX_HEAD {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
    }
    Some(String::from_utf8_lossy(&head).to_string())
}

/// Answers nothing: reads until the client goes away.
pub fn read_until_closed(stream: &mut TcpStream) {
    let mut sink = [0u8; 1024];
    while matches!(stream.read(&mut sink), Ok(n) if n > 0) {}
}
