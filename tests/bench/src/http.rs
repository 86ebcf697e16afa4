//! A minimal HTTP/1.1 client over one keep-alive TCP connection: writes a prepared request, reads
//! the status line, headers and body (`Content-Length` or chunked). Small on purpose: the load
//! generator shares the machine's two cores with the server, so every cycle it spends is one the
//! server cannot use.

use std::io;
use std::net::Ipv4Addr;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpSocket, TcpStream};

/// Loopback addresses the load clients connect from ([`Conn::connect_as`]): 256 connections are
/// 32 per address.
pub const SOURCE_ADDRESSES: usize = 8;

/// One response: its status and either its body or only the body's length.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body_bytes: u64,
    pub body: Vec<u8>,
}

/// One keep-alive connection to the server.
#[derive(Debug)]
pub struct Conn {
    stream: BufReader<TcpStream>,
    line: String,
    scratch: Vec<u8>,
}

/// A `GET path` request.
pub fn get(path: &str) -> Vec<u8> {
    format!("GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").into_bytes()
}

/// A `POST path` request with a JSON body in Confluent's media type.
pub fn post(path: &str, json: &str) -> Vec<u8> {
    format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/vnd.schemaregistry.v1+json\r\nContent-Length: {}\r\n\r\n{json}",
        json.len()
    )
    .into_bytes()
}

impl Conn {
    /// Connects to `port` on 127.0.0.1.
    pub async fn connect(port: u16) -> io::Result<Conn> {
        Self::ready(TcpStream::connect(("127.0.0.1", port)).await?)
    }

    /// Connects to `port` on 127.0.0.1 as load client `client`, from one of [`SOURCE_ADDRESSES`]
    /// loopback addresses (127.0.0.1, .2, ...), as a fleet of clients comes from many hosts: the
    /// server admits at most `REGISTRY_MAX_CONNECTIONS_PER_PEER` (100) connections per address.
    pub async fn connect_as(port: u16, client: usize) -> io::Result<Conn> {
        let host = u8::try_from(client % SOURCE_ADDRESSES).unwrap_or(0) + 1;
        let socket = TcpSocket::new_v4()?;
        socket.bind((Ipv4Addr::new(127, 0, 0, host), 0).into())?;
        Self::ready(socket.connect((Ipv4Addr::LOCALHOST, port).into()).await?)
    }

    fn ready(stream: TcpStream) -> io::Result<Conn> {
        stream.set_nodelay(true)?;
        Ok(Conn { stream: BufReader::with_capacity(64 * 1024, stream), line: String::new(), scratch: Vec::new() })
    }

    /// Sends `request` and reads the whole answer; keeps the body only when `keep_body`.
    pub async fn send(&mut self, request: &[u8], keep_body: bool) -> io::Result<Response> {
        self.stream.get_mut().write_all(request).await?;
        self.read_line().await?;
        let status = self
            .line
            .split_whitespace()
            .nth(1)
            .and_then(|code| code.parse::<u16>().ok())
            .ok_or_else(|| bad(format!("bad status line {:?}", self.line)))?;
        let mut length: Option<u64> = None;
        let mut chunked = false;
        loop {
            self.read_line().await?;
            let header = self.line.trim_end();
            if header.is_empty() {
                break;
            }
            let Some((name, value)) = header.split_once(':') else { continue };
            let value = value.trim();
            if name.eq_ignore_ascii_case("content-length") {
                length = Some(value.parse().map_err(|_| bad(format!("bad content-length {value:?}")))?);
            } else if name.eq_ignore_ascii_case("transfer-encoding") && value.eq_ignore_ascii_case("chunked") {
                chunked = true;
            }
        }
        let mut response = Response { status, body_bytes: 0, body: Vec::new() };
        if chunked {
            loop {
                self.read_line().await?;
                let size_text = self.line.trim_end().split(';').next().unwrap_or_default().to_string();
                let size = u64::from_str_radix(&size_text, 16).map_err(|_| bad(format!("bad chunk {size_text:?}")))?;
                if size == 0 {
                    loop {
                        self.read_line().await?;
                        if self.line.trim_end().is_empty() {
                            break;
                        }
                    }
                    break;
                }
                self.read_body(size, keep_body, &mut response).await?;
                self.read_line().await?;
            }
        } else if let Some(length) = length {
            self.read_body(length, keep_body, &mut response).await?;
        }
        Ok(response)
    }

    async fn read_body(&mut self, mut remaining: u64, keep: bool, response: &mut Response) -> io::Result<()> {
        response.body_bytes += remaining;
        while remaining > 0 {
            let step = usize::try_from(remaining.min(64 * 1024)).unwrap_or(64 * 1024);
            self.scratch.resize(step, 0);
            self.stream.read_exact(&mut self.scratch[..step]).await?;
            if keep {
                response.body.extend_from_slice(&self.scratch[..step]);
            }
            remaining -= step as u64;
        }
        Ok(())
    }

    async fn read_line(&mut self) -> io::Result<()> {
        self.line.clear();
        if self.stream.read_line(&mut self.line).await? == 0 {
            return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "connection closed"));
        }
        Ok(())
    }
}

fn bad(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}
