//! A WebSocket echo server (handshake and frames by hand, on a thread per connection).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;

/// A WebSocket echo server on 127.0.0.1 (text frames come back as they went); answers its port.
pub fn websocket_echo() -> u16 {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            std::thread::spawn(move || echo_websocket(stream));
        }
    });
    port
}

fn echo_websocket(mut stream: TcpStream) {
    use base64::Engine as _;
    use sha1::Digest;
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut key = String::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        if let Some(value) = line.to_ascii_lowercase().strip_prefix("sec-websocket-key:") {
            key = line[line.len() - value.len()..].trim().to_string();
        }
        if line == "\r\n" {
            break;
        }
    }
    let accept = base64::engine::general_purpose::STANDARD
        .encode(sha1::Sha1::digest(format!("{key}258EAFA5-E914-47DA-95CA-C5AB0DC85B11").as_bytes()));
    let _ = write!(
        stream,
        "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: {accept}\r\n\r\n"
    );
    loop {
        let mut head = [0u8; 2];
        if reader.read_exact(&mut head).is_err() {
            return;
        }
        let opcode = head[0] & 0x0f;
        let mut length = (head[1] & 0x7f) as u64;
        if length == 126 {
            let mut extended = [0u8; 2];
            reader.read_exact(&mut extended).unwrap();
            length = u16::from_be_bytes(extended) as u64;
        } else if length == 127 {
            let mut extended = [0u8; 8];
            reader.read_exact(&mut extended).unwrap();
            length = u64::from_be_bytes(extended);
        }
        let mut mask = [0u8; 4];
        if head[1] & 0x80 != 0 {
            reader.read_exact(&mut mask).unwrap();
        }
        let mut payload = vec![0u8; length as usize];
        reader.read_exact(&mut payload).unwrap();
        if head[1] & 0x80 != 0 {
            for (index, byte) in payload.iter_mut().enumerate() {
                *byte ^= mask[index % 4];
            }
        }
        if opcode == 8 {
            return;
        }
        let mut frame = vec![0x80 | opcode];
        if payload.len() < 126 {
            frame.push(payload.len() as u8);
        } else {
            frame.push(126);
            frame.extend_from_slice(&(payload.len() as u16).to_be_bytes());
        }
        frame.extend_from_slice(&payload);
        if stream.write_all(&frame).is_err() {
            return;
        }
    }
}
