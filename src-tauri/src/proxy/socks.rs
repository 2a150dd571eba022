//! The SOCKS5 handshake (RFC 1928) with username/password authentication (RFC 1929), as
//! the session proxy speaks it to an upstream SOCKS5 proxy: a CONNECT to the origin's
//! host name (the proxy resolves it) or address. Failures are named for a navigation
//! (`proxy_failed: <kind>: ...`, `chain::ProxyFailure`); the password is never part of one.

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

use super::chain::ProxyFailure;

const VERSION: u8 = 5;
const NO_AUTHENTICATION: u8 = 0x00;
const USERNAME_PASSWORD: u8 = 0x02;
const NO_ACCEPTABLE_METHOD: u8 = 0xff;

/// Asks the SOCKS5 proxy on `stream` for a connection to `host:port`, logging in with
/// `credentials` when it asks for them.
pub(super) async fn connect<S: AsyncRead + AsyncWrite + Unpin>(
    stream: &mut S,
    host: &str,
    port: u16,
    credentials: Option<(&str, &str)>,
) -> Result<(), String> {
    let io = |error: std::io::Error| ProxyFailure::ProtocolError.because(format_args!("the SOCKS5 proxy closed the handshake ({error})"));
    let greeting: &[u8] =
        if credentials.is_some() { &[VERSION, 2, NO_AUTHENTICATION, USERNAME_PASSWORD] } else { &[VERSION, 1, NO_AUTHENTICATION] };
    stream.write_all(greeting).await.map_err(io)?;
    let mut chosen = [0u8; 2];
    stream.read_exact(&mut chosen).await.map_err(io)?;
    if chosen[0] != VERSION {
        return Err(ProxyFailure::ProtocolError.because("the proxy does not speak SOCKS5"));
    }
    match (chosen[1], credentials) {
        (NO_AUTHENTICATION, _) => {}
        (USERNAME_PASSWORD, Some((username, password))) => {
            let mut login = vec![1, username.len() as u8];
            login.extend_from_slice(username.as_bytes());
            login.push(password.len() as u8);
            login.extend_from_slice(password.as_bytes());
            stream.write_all(&login).await.map_err(io)?;
            let mut status = [0u8; 2];
            stream.read_exact(&mut status).await.map_err(io)?;
            if status[1] != 0 {
                return Err(ProxyFailure::AuthFailed.because("the SOCKS5 proxy refused the username or password"));
            }
        }
        (USERNAME_PASSWORD, None) => return Err(ProxyFailure::AuthFailed.because("the SOCKS5 proxy asks for a username and password")),
        (NO_ACCEPTABLE_METHOD, _) => {
            return Err(ProxyFailure::AuthFailed.because("the SOCKS5 proxy accepts none of the offered authentication methods"))
        }
        (other, _) => {
            return Err(ProxyFailure::ProtocolError.because(format_args!("the SOCKS5 proxy chose an unknown authentication method {other}")))
        }
    }
    let mut request = vec![VERSION, 1, 0];
    match host.parse::<std::net::IpAddr>() {
        Ok(std::net::IpAddr::V4(v4)) => {
            request.push(1);
            request.extend_from_slice(&v4.octets());
        }
        Ok(std::net::IpAddr::V6(v6)) => {
            request.push(4);
            request.extend_from_slice(&v6.octets());
        }
        Err(_) => {
            if host.len() > 255 {
                return Err(ProxyFailure::TunnelFailed.because("the host name is too long for SOCKS5"));
            }
            request.push(3);
            request.push(host.len() as u8);
            request.extend_from_slice(host.as_bytes());
        }
    }
    request.extend_from_slice(&port.to_be_bytes());
    stream.write_all(&request).await.map_err(io)?;
    let mut head = [0u8; 4];
    stream.read_exact(&mut head).await.map_err(io)?;
    if head[1] != 0 {
        return Err(ProxyFailure::TunnelFailed
            .because(format_args!("the SOCKS5 proxy could not connect to {host}:{port} ({})", reply_name(head[1]))));
    }
    // The address the proxy bound: read and forgotten.
    let rest = match head[3] {
        1 => 4 + 2,
        4 => 16 + 2,
        3 => {
            let mut length = [0u8; 1];
            stream.read_exact(&mut length).await.map_err(io)?;
            length[0] as usize + 2
        }
        other => return Err(ProxyFailure::ProtocolError.because(format_args!("the SOCKS5 proxy answered an unknown address type {other}"))),
    };
    let mut bound = vec![0u8; rest];
    stream.read_exact(&mut bound).await.map_err(io)?;
    Ok(())
}

/// RFC 1928's reply codes.
fn reply_name(code: u8) -> &'static str {
    match code {
        1 => "general failure",
        2 => "not allowed by its rules",
        3 => "network unreachable",
        4 => "host unreachable",
        5 => "connection refused",
        6 => "TTL expired",
        7 => "command not supported",
        8 => "address type not supported",
        _ => "unknown reply",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted proxy end: for each step, checks what it reads, then writes its answer.
    async fn serve(mut far: tokio::io::DuplexStream, steps: Vec<(Vec<u8>, Vec<u8>)>) {
        for (expect, answer) in steps {
            let mut got = vec![0u8; expect.len()];
            far.read_exact(&mut got).await.unwrap();
            assert_eq!(got, expect);
            far.write_all(&answer).await.unwrap();
        }
    }

    #[tokio::test]
    async fn a_login_and_a_connect_by_name() {
        let (mut near, far) = tokio::io::duplex(4096);
        let mut request = vec![5, 1, 0, 3, 4];
        request.extend_from_slice(b"a.io");
        request.extend_from_slice(&443u16.to_be_bytes());
        let steps = vec![
            (vec![5, 2, 0, 2], vec![5, 2]),
            (vec![1, 1, b'u', 2, b'p', b'w'], vec![1, 0]),
            (request, vec![5, 0, 0, 1, 0, 0, 0, 0, 0, 0]),
        ];
        let server = tokio::spawn(serve(far, steps));
        connect(&mut near, "a.io", 443, Some(("u", "pw"))).await.unwrap();
        server.await.unwrap();
    }

    #[tokio::test]
    async fn a_refused_password_is_named_without_it() {
        let (mut near, far) = tokio::io::duplex(4096);
        let steps = vec![(vec![5, 2, 0, 2], vec![5, 2]), (vec![1, 1, b'u', 6, b's', b'e', b'c', b'r', b'e', b't'], vec![1, 1])];
        let server = tokio::spawn(serve(far, steps));
        let failure = connect(&mut near, "a.io", 443, Some(("u", "secret"))).await.unwrap_err();
        server.await.unwrap();
        assert!(failure.starts_with("proxy_failed: proxy_auth_failed:") && !failure.contains("secret"), "{failure}");
    }
}
