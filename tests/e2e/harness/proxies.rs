//! Upstream proxies for a session to go through, written here: an HTTP proxy (CONNECT,
//! `Proxy-Authorization: Basic`) and a SOCKS5 proxy (RFC 1928, username/password of RFC
//! 1929), each on 127.0.0.1 port 0, asking for a username and password, recording the
//! tunnels they opened and the logins they refused.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// Which protocol a test proxy speaks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ProxyKind {
    Http,
    Socks5,
}

/// A running test proxy.
pub struct TestProxy {
    pub port: u16,
    pub kind: ProxyKind,
    relayed: Arc<Mutex<Vec<String>>>,
    refused: Arc<AtomicUsize>,
}

/// What every connection of one proxy shares.
#[derive(Clone)]
struct ProxyState {
    username: String,
    password: String,
    relayed: Arc<Mutex<Vec<String>>>,
    refused: Arc<AtomicUsize>,
}

impl TestProxy {
    /// An HTTP CONNECT proxy that wants `username` and `password`.
    pub fn http(username: &str, password: &str) -> TestProxy {
        TestProxy::start(ProxyKind::Http, username, password)
    }

    /// A SOCKS5 proxy that wants `username` and `password`.
    pub fn socks5(username: &str, password: &str) -> TestProxy {
        TestProxy::start(ProxyKind::Socks5, username, password)
    }

    fn start(kind: ProxyKind, username: &str, password: &str) -> TestProxy {
        static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        let runtime = RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build().unwrap());
        let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let state =
            ProxyState { username: username.to_string(), password: password.to_string(), relayed: Arc::default(), refused: Arc::default() };
        let (relayed, refused) = (state.relayed.clone(), state.refused.clone());
        runtime.spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let state = state.clone();
                tokio::spawn(async move {
                    let _ = match kind {
                        ProxyKind::Http => serve_http(stream, state).await,
                        ProxyKind::Socks5 => serve_socks5(stream, state).await,
                    };
                });
            }
        });
        TestProxy { port, kind, relayed, refused }
    }

    /// The proxy's URL as a session names it.
    pub fn url(&self) -> String {
        match self.kind {
            ProxyKind::Http => format!("http://127.0.0.1:{}", self.port),
            ProxyKind::Socks5 => format!("socks5://127.0.0.1:{}", self.port),
        }
    }

    /// The `host:port` of every tunnel it opened, in order.
    pub fn relayed(&self) -> Vec<String> {
        self.relayed.lock().unwrap().clone()
    }

    /// How many logins it refused.
    pub fn refused(&self) -> usize {
        self.refused.load(Ordering::SeqCst)
    }
}

/// Reads up to the blank line ending an HTTP head.
async fn read_head(stream: &mut TcpStream) -> std::io::Result<String> {
    let mut head = Vec::new();
    while !head.ends_with(b"\r\n\r\n") && head.len() < 16 * 1024 {
        let mut byte = [0u8; 1];
        if stream.read(&mut byte).await? == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        head.push(byte[0]);
    }
    Ok(String::from_utf8_lossy(&head).to_string())
}

async fn serve_http(mut stream: TcpStream, state: ProxyState) -> std::io::Result<()> {
    use base64::Engine;
    let head = read_head(&mut stream).await?;
    let mut lines = head.split("\r\n");
    let request_line = lines.next().unwrap_or_default().to_string();
    let mut parts = request_line.split(' ');
    let (method, target) = (parts.next().unwrap_or_default(), parts.next().unwrap_or_default().to_string());
    if method != "CONNECT" {
        stream.write_all(b"HTTP/1.1 405 Method Not Allowed\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await?;
        return Ok(());
    }
    let expected = format!("Basic {}", base64::engine::general_purpose::STANDARD.encode(format!("{}:{}", state.username, state.password)));
    let authorized = lines
        .filter_map(|line| line.split_once(':'))
        .any(|(name, value)| name.trim().eq_ignore_ascii_case("proxy-authorization") && value.trim() == expected);
    if !authorized {
        state.refused.fetch_add(1, Ordering::SeqCst);
        stream
            .write_all(b"HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"test\"\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
            .await?;
        return Ok(());
    }
    let Ok(mut origin) = TcpStream::connect(target.as_str()).await else {
        stream.write_all(b"HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n").await?;
        return Ok(());
    };
    state.relayed.lock().unwrap().push(target);
    stream.write_all(b"HTTP/1.1 200 Connection established\r\n\r\n").await?;
    tokio::io::copy_bidirectional(&mut stream, &mut origin).await?;
    Ok(())
}

async fn read_bytes(stream: &mut (impl AsyncRead + Unpin), count: usize) -> std::io::Result<Vec<u8>> {
    let mut bytes = vec![0u8; count];
    stream.read_exact(&mut bytes).await?;
    Ok(bytes)
}

async fn serve_socks5(mut stream: TcpStream, state: ProxyState) -> std::io::Result<()> {
    let greeting = read_bytes(&mut stream, 2).await?;
    let methods = read_bytes(&mut stream, greeting[1] as usize).await?;
    if greeting[0] != 5 || !methods.contains(&2) {
        stream.write_all(&[5, 0xff]).await?;
        return Ok(());
    }
    stream.write_all(&[5, 2]).await?;
    let version_and_length = read_bytes(&mut stream, 2).await?;
    let username = read_bytes(&mut stream, version_and_length[1] as usize).await?;
    let password_length = read_bytes(&mut stream, 1).await?;
    let password = read_bytes(&mut stream, password_length[0] as usize).await?;
    if username != state.username.as_bytes() || password != state.password.as_bytes() {
        state.refused.fetch_add(1, Ordering::SeqCst);
        stream.write_all(&[1, 1]).await?;
        return Ok(());
    }
    stream.write_all(&[1, 0]).await?;
    let request = read_bytes(&mut stream, 4).await?;
    let host = match request[3] {
        1 => std::net::Ipv4Addr::from(<[u8; 4]>::try_from(read_bytes(&mut stream, 4).await?).unwrap()).to_string(),
        4 => format!("[{}]", std::net::Ipv6Addr::from(<[u8; 16]>::try_from(read_bytes(&mut stream, 16).await?).unwrap())),
        _ => {
            let length = read_bytes(&mut stream, 1).await?;
            String::from_utf8_lossy(&read_bytes(&mut stream, length[0] as usize).await?).to_string()
        }
    };
    let port = u16::from_be_bytes(<[u8; 2]>::try_from(read_bytes(&mut stream, 2).await?).unwrap());
    let target = format!("{host}:{port}");
    let Ok(mut origin) = TcpStream::connect(target.as_str()).await else {
        stream.write_all(&[5, 5, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
        return Ok(());
    };
    state.relayed.lock().unwrap().push(target);
    stream.write_all(&[5, 0, 0, 1, 0, 0, 0, 0, 0, 0]).await?;
    tokio::io::copy_bidirectional(&mut stream, &mut origin).await?;
    Ok(())
}
