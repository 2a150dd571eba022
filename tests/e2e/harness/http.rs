//! A minimal HTTP/1.1 client, so tests control every header (including `Host`), and a
//! probe of whether a local port accepts connections.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;

use serde_json::Value;

/// A response: status and JSON body (`Value::Null` when not JSON).
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub body: Value,
    pub text: String,
}

impl Response {
    pub fn code(&self) -> &str {
        self.body["error"]["code"].as_str().unwrap_or("")
    }
}

/// A JSON request to 127.0.0.1:`port` with the right `Host`.
pub fn request(port: u16, method: &str, path: &str, headers: &[(&str, String)], body: Option<Value>) -> Response {
    let body = body.map(|value| value.to_string());
    let mut all: Vec<(String, String)> = vec![("Host".into(), format!("127.0.0.1:{port}"))];
    if body.is_some() {
        all.push(("Content-Type".into(), "application/json".into()));
    }
    all.extend(headers.iter().map(|(name, value)| (name.to_string(), value.clone())));
    raw_request(port, method, path, &all, body.as_deref().map(str::as_bytes))
}

/// A request with exactly these headers (plus Content-Length and Connection: close).
pub fn raw_request(port: u16, method: &str, path: &str, headers: &[(String, String)], body: Option<&[u8]>) -> Response {
    let mut stream = TcpStream::connect(("127.0.0.1", port)).unwrap_or_else(|error| panic!("connect {port}: {error}"));
    stream.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (name, value) in headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.map_or(0, <[u8]>::len)));
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(body) = body {
        // The server may answer (413) and close before reading a large body: ignore EPIPE.
        let _ = stream.write_all(body);
    }
    let mut raw = Vec::new();
    let _ = stream.read_to_end(&mut raw);
    let text = String::from_utf8_lossy(&raw).to_string();
    let status = text.split(' ').nth(1).and_then(|code| code.parse().ok()).unwrap_or(0);
    let (head, payload) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let payload = if head.to_ascii_lowercase().contains("transfer-encoding: chunked") { dechunk(payload) } else { payload.to_string() };
    Response { status, body: serde_json::from_str(&payload).unwrap_or(Value::Null), text: payload }
}

fn dechunk(mut payload: &str) -> String {
    let mut out = String::new();
    while let Some((size, rest)) = payload.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else { break };
        if size == 0 || rest.len() < size {
            break;
        }
        out.push_str(&rest[..size]);
        payload = rest[size..].trim_start_matches("\r\n");
    }
    out
}

/// Whether something accepts connections on 127.0.0.1:`port`.
pub fn port_open(port: u16) -> bool {
    TcpStream::connect_timeout(&SocketAddr::from(([127, 0, 0, 1], port)), Duration::from_millis(300)).is_ok()
}
