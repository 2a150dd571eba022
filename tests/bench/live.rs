//! `bench live`: the live view on loopback, as a viewer sees it: from a key press to the
//! first frame that shows it, frames per second while the page animates, bytes per frame,
//! and the CPU the daemon and the web process spend while the page is still and a viewer
//! is connected. The viewer is a minimal WebSocket client of its own (below).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::{Duration, Instant};

use serde_json::json;

use super::harness::*;

/// A WebSocket client just big enough for the live view: masked text out, whole messages in.
struct Viewer {
    stream: TcpStream,
}

impl Viewer {
    /// Opens the page (which claims the link), then its WebSocket with the claim cookie.
    fn connect(link: &str) -> Viewer {
        let rest = link.strip_prefix("http://").unwrap();
        let (host, path) = rest.split_once('/').unwrap();
        let path = format!("/{path}");
        let mut page = TcpStream::connect(host).unwrap();
        write!(page, "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n").unwrap();
        let mut answer = String::new();
        page.read_to_string(&mut answer).unwrap();
        let cookie = answer
            .lines()
            .find_map(|line| {
                line.to_ascii_lowercase().starts_with("set-cookie:").then(|| line[11..].trim().split(';').next().unwrap().to_string())
            })
            .expect("the page sets the claim cookie");
        let mut stream = TcpStream::connect(host).unwrap();
        stream.set_nodelay(true).unwrap();
        write!(
            stream,
            "GET {path}/ws HTTP/1.1\r\nHost: {host}\r\nOrigin: http://{host}\r\nCookie: {cookie}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\
             Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n"
        )
        .unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            stream.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        assert!(head.starts_with(b"HTTP/1.1 101"), "{}", String::from_utf8_lossy(&head));
        Viewer { stream }
    }

    fn send(&mut self, text: &str) {
        let payload = text.as_bytes();
        let mut frame = vec![0x81u8];
        match payload.len() {
            length if length < 126 => frame.push(0x80 | length as u8),
            length => {
                frame.push(0x80 | 126);
                frame.extend_from_slice(&(length as u16).to_be_bytes());
            }
        }
        let mask = [0x12u8, 0x34, 0x56, 0x78];
        frame.extend_from_slice(&mask);
        frame.extend(payload.iter().enumerate().map(|(index, byte)| byte ^ mask[index % 4]));
        self.stream.write_all(&frame).unwrap();
    }

    /// The next message within `limit`: (binary?, length), or `None`.
    fn next(&mut self, limit: Duration) -> Option<(bool, usize)> {
        self.stream.set_read_timeout(Some(limit)).unwrap();
        let mut head = [0u8; 2];
        if self.stream.read_exact(&mut head).is_err() {
            return None;
        }
        self.stream.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        let length = match head[1] & 0x7f {
            126 => {
                let mut bytes = [0u8; 2];
                self.stream.read_exact(&mut bytes).unwrap();
                u16::from_be_bytes(bytes) as usize
            }
            127 => {
                let mut bytes = [0u8; 8];
                self.stream.read_exact(&mut bytes).unwrap();
                u64::from_be_bytes(bytes) as usize
            }
            length => length as usize,
        };
        let mut payload = vec![0u8; length];
        self.stream.read_exact(&mut payload).unwrap();
        Some((head[0] & 0x0f == 2, length))
    }

    /// Reads whatever arrives until `quiet` passes without a message.
    fn drain(&mut self, quiet: Duration) {
        while self.next(quiet).is_some() {}
    }
}

fn percentile(samples: &mut [f64], fraction: f64) -> f64 {
    samples.sort_by(|a, b| a.total_cmp(b));
    samples[((samples.len() - 1) as f64 * fraction).round() as usize]
}

pub(crate) fn live_view(fixtures: &Fixtures) {
    let daemon = Daemon::start();
    let session = daemon.lease("bench").session_sized(1280, 800);
    session.navigate(&fixtures.url("/f/live-bench.html"));
    let link = session.ok("watch", json!({ "mode": "live" }))["live_url"].as_str().unwrap().to_string();
    let mut viewer = Viewer::connect(&link);
    viewer.send(&json!({ "t": "size", "w": 1280, "h": 800 }).to_string());
    viewer.drain(Duration::from_millis(800));

    // Key press to the first frame after it (the page is still otherwise).
    let key = |down: bool| json!({ "t": "key", "d": down, "key": "x", "code": "KeyX", "loc": 0, "m": 0 }).to_string();
    let (mut latencies, mut sizes) = (Vec::new(), Vec::new());
    for _ in 0..30 {
        let pressed = Instant::now();
        viewer.send(&key(true));
        viewer.send(&key(false));
        loop {
            match viewer.next(Duration::from_secs(5)) {
                Some((true, length)) => {
                    latencies.push(pressed.elapsed().as_secs_f64() * 1000.0);
                    sizes.push(length as f64);
                    break;
                }
                Some((false, _)) => continue,
                None => panic!("no frame within 5 s of a key"),
            }
        }
        viewer.drain(Duration::from_millis(150));
    }
    println!(
        "{:<52} {:>9.1} {:>9.1}",
        "key press -> first frame showing it (ms, median p95)",
        percentile(&mut latencies, 0.5),
        percentile(&mut latencies, 0.95)
    );
    println!(
        "{:<52} {:>9.0} {:>9.0}",
        "bytes per frame, whole-page change (median p95)",
        percentile(&mut sizes, 0.5),
        percentile(&mut sizes, 0.95)
    );

    // An animation: frames per second and their size.
    viewer.send(&json!({ "t": "key", "d": true, "key": "a", "code": "KeyA", "loc": 0, "m": 0 }).to_string());
    viewer.send(&json!({ "t": "key", "d": false, "key": "a", "code": "KeyA", "loc": 0, "m": 0 }).to_string());
    viewer.drain(Duration::from_millis(1));
    let begun = Instant::now();
    let mut animated = Vec::new();
    while begun.elapsed() < Duration::from_secs(5) {
        if let Some((true, length)) = viewer.next(Duration::from_secs(1)) {
            animated.push(length as f64);
        }
    }
    println!("{:<52} {:>9.1}", "frames per second while the page animates", animated.len() as f64 / begun.elapsed().as_secs_f64());
    if !animated.is_empty() {
        println!("{:<52} {:>9.0}", "bytes per frame while animating (median)", percentile(&mut animated, 0.5));
    }
    viewer.send(&json!({ "t": "key", "d": true, "key": "a", "code": "KeyA", "loc": 0, "m": 0 }).to_string());
    viewer.send(&json!({ "t": "key", "d": false, "key": "a", "code": "KeyA", "loc": 0, "m": 0 }).to_string());
    viewer.drain(Duration::from_millis(500));

    // Still, with the viewer connected: CPU of the daemon and its web processes.
    let processes: Vec<u32> = std::iter::once(daemon.pid).chain(webkit_children(daemon.pid)).collect();
    let before: u64 = processes.iter().map(|pid| cpu_ms(*pid)).sum();
    let window = Duration::from_secs(10);
    let begun = Instant::now();
    let mut still_frames = 0;
    while begun.elapsed() < window {
        if let Some((true, _)) = viewer.next(window.saturating_sub(begun.elapsed()).max(Duration::from_millis(1))) {
            still_frames += 1;
        }
    }
    let used = processes.iter().map(|pid| cpu_ms(*pid)).sum::<u64>() - before;
    let share = used as f64 / 10.0 / begun.elapsed().as_secs_f64();
    println!("{:<52} {:>9.2}", "CPU while still, viewer connected (% of a core)", share);
    println!("{:<52} {:>9}", "frames sent while still (10 s)", still_frames);
}
