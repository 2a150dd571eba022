//! The fixture web server (axum, port 0): pages of `tests/fixtures/` read from disk, and
//! routes for cookies, statuses, slow answers, login, downloads, uploads and a small API;
//! it records what it saw.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use super::{parse_multipart, UploadedPart};

/// What the fixture server saw of one request.
#[derive(Clone, Debug)]
pub struct Seen {
    pub path: String,
    pub query: String,
    pub cookie: Option<String>,
    pub user_agent: Option<String>,
    /// Every header, lower-cased names, in order.
    pub headers: Vec<(String, String)>,
}

/// What the fixture server keeps of what it saw.
#[derive(Clone, Default)]
struct FixtureLog {
    seen: Arc<Mutex<Vec<Seen>>>,
    uploads: Arc<Mutex<Vec<Vec<UploadedPart>>>>,
}

/// The bytes `/download/<name>?size=N` serves: a pattern no two offsets share nearby, so
/// a file cut short or shifted never matches.
pub fn download_bytes(size: usize) -> Vec<u8> {
    (0..size).map(|index| (index * 7 + index / 251 + 13) as u8).collect()
}

/// A local web server of fixture pages, on a port chosen by the OS.
pub struct Fixtures {
    pub port: u16,
    seen: Arc<Mutex<Vec<Seen>>>,
    uploads: Arc<Mutex<Vec<Vec<UploadedPart>>>>,
}

impl Fixtures {
    pub fn start() -> Fixtures {
        Fixtures::start_serving(None)
    }

    /// Also serves the files of `dir` under `/b/`.
    pub fn start_serving(dir: Option<PathBuf>) -> Fixtures {
        static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
        let runtime = RUNTIME.get_or_init(|| tokio::runtime::Builder::new_multi_thread().worker_threads(1).enable_all().build().unwrap());
        let log = FixtureLog::default();
        let listener = runtime.block_on(tokio::net::TcpListener::bind("127.0.0.1:0")).unwrap();
        let port = listener.local_addr().unwrap().port();
        let router = fixture_router(log.clone(), dir);
        runtime.spawn(async move {
            let _ = axum::serve(listener, router).await;
        });
        Fixtures { port, seen: log.seen, uploads: log.uploads }
    }

    /// The multipart forms posted to `/upload`, in order.
    pub fn uploads(&self) -> Vec<Vec<UploadedPart>> {
        self.uploads.lock().unwrap().clone()
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Requests seen whose path is `path`.
    pub fn seen(&self, path: &str) -> Vec<Seen> {
        self.seen.lock().unwrap().iter().filter(|seen| seen.path == path).cloned().collect()
    }

    /// Every request seen, in order.
    pub fn seen_all(&self) -> Vec<Seen> {
        self.seen.lock().unwrap().clone()
    }

    /// The fixture routes, recording into this server's log (to serve them on another listener).
    pub(super) fn router(&self) -> axum::Router {
        fixture_router(FixtureLog { seen: self.seen.clone(), uploads: self.uploads.clone() }, None)
    }
}

fn fixture_router(log: FixtureLog, static_dir: Option<PathBuf>) -> axum::Router {
    use axum::extract::{Path, Query, Request, State};
    use axum::http::{header, StatusCode};
    use axum::response::{Html, IntoResponse, Response};
    use axum::routing::get;

    async fn page(Path(name): Path<String>) -> Response {
        match fixture(&name) {
            Some(html) => Html(html).into_response(),
            None => (StatusCode::NOT_FOUND, Html("<title>missing</title>no such fixture")).into_response(),
        }
    }
    async fn set_cookie(Query(query): Query<HashMap<String, String>>) -> Response {
        let value = query.get("value").cloned().unwrap_or_else(|| "1".into());
        ([(header::SET_COOKIE, format!("marker={value}; Path=/; Max-Age=3600"))], Html(format!("<title>cookie set {value}</title>set")))
            .into_response()
    }
    /// Signs in as a site does: an httpOnly session cookie, an httpOnly persistent one, then
    /// the account page, which stores a greeting in localStorage.
    async fn state_login() -> Response {
        let mut response = (StatusCode::SEE_OTHER, [(header::LOCATION, "/f/account.html?greet=welcome")], "").into_response();
        let headers = response.headers_mut();
        headers.append(header::SET_COOKIE, "sid=site-session-51d2; Path=/; HttpOnly; SameSite=Lax".parse().unwrap());
        headers.append(header::SET_COOKIE, "remember=site-remember-8e07; Path=/; Max-Age=86400; HttpOnly; SameSite=Lax".parse().unwrap());
        response
    }
    async fn status(Path(code): Path<u16>) -> Response {
        let code = StatusCode::from_u16(code).unwrap_or(StatusCode::IM_A_TEAPOT);
        (code, Html(format!("<title>status {}</title>status page", code.as_u16()))).into_response()
    }
    /// HTTP Basic authentication: `ann` / `open-sesame-71` get the page, anyone else a 401.
    async fn basic_auth(headers: axum::http::HeaderMap) -> Response {
        let expected = format!("Basic {}", base64::Engine::encode(&base64::engine::general_purpose::STANDARD, "ann:open-sesame-71"));
        if headers.get(header::AUTHORIZATION).is_some_and(|given| given.as_bytes() == expected.as_bytes()) {
            return Html("<title>authenticated</title>welcome, ann").into_response();
        }
        (StatusCode::UNAUTHORIZED, [(header::WWW_AUTHENTICATE, "Basic realm=\"fixtures\"")], Html("<title>unauthorized</title>no"))
            .into_response()
    }
    async fn slow(Query(query): Query<HashMap<String, String>>) -> Response {
        let ms: u64 = query.get("ms").and_then(|ms| ms.parse().ok()).unwrap_or(500);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        Html(format!("<title>slow {ms}</title>slow")).into_response()
    }
    async fn login(axum::Form(form): axum::Form<HashMap<String, String>>) -> Response {
        if form.get("user").map(String::as_str) == Some("demo") && form.get("pass").map(String::as_str) == Some("s3cret-pass") {
            (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, "/f/welcome.html"), (header::SET_COOKIE, "session=signed-in; Path=/; Max-Age=3600")],
                "",
            )
                .into_response()
        } else {
            let page = fixture("login.html").unwrap().replace("<form", "<p class=\"error\">Invalid username or password.</p><form");
            Html(page).into_response()
        }
    }
    /// The first step of `login-2fa.html`: the right password leads to the code page.
    async fn login_2fa(axum::Form(form): axum::Form<HashMap<String, String>>) -> Response {
        let right = form.get("user").map(String::as_str) == Some("demo") && form.get("pass").map(String::as_str) == Some("s3cret-pass");
        let next = if right { "/f/login-2fa-code.html" } else { "/f/login-2fa.html?wrong" };
        (StatusCode::SEE_OTHER, [(header::LOCATION, next)], "").into_response()
    }
    /// The second step: the right code signs in.
    async fn login_2fa_code(axum::Form(form): axum::Form<HashMap<String, String>>) -> Response {
        if form.get("code").map(String::as_str) == Some("424242") {
            (
                StatusCode::SEE_OTHER,
                [(header::LOCATION, "/f/welcome.html"), (header::SET_COOKIE, "session=signed-in; Path=/; Max-Age=3600")],
                "",
            )
                .into_response()
        } else {
            (StatusCode::SEE_OTHER, [(header::LOCATION, "/f/login-2fa-code.html?wrong")], "").into_response()
        }
    }
    /// Small API answers for the network tests.
    async fn api(Path(path): Path<String>, method: axum::http::Method, body: axum::body::Bytes) -> Response {
        let json = |text: String| ([(header::CONTENT_TYPE, "application/json"), (header::CACHE_CONTROL, "no-store")], text).into_response();
        match path.as_str() {
            "items.json" => json(r#"{"items":[1,2,3],"name":"items"}"#.to_string()),
            "xhr.json" => json(r#"{"via":"xhr"}"#.to_string()),
            "empty" => StatusCode::NO_CONTENT.into_response(),
            "big" => ([(header::CONTENT_TYPE, "text/plain")], api_big_body()).into_response(),
            "binary" => ([(header::CONTENT_TYPE, "application/octet-stream")], vec![0xffu8, 0xfe, 0x00, 0x81, 0x9c, 0xd3]).into_response(),
            "gzip.json" => {
                use std::io::Write;
                let mut encoder = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
                encoder.write_all(br#"{"compressed":true}"#).unwrap();
                ([(header::CONTENT_TYPE, "application/json"), (header::CONTENT_ENCODING, "gzip")], encoder.finish().unwrap())
                    .into_response()
            }
            "pixel.png" => ([(header::CONTENT_TYPE, "image/png")], PIXEL_PNG.to_vec()).into_response(),
            "echo" => json(format!(r#"{{"method":"{method}","bytes":{}}}"#, body.len())),
            other if other.starts_with("status/") => {
                let code = other
                    .trim_start_matches("status/")
                    .parse()
                    .ok()
                    .and_then(|code| StatusCode::from_u16(code).ok())
                    .unwrap_or(StatusCode::IM_A_TEAPOT);
                (code, format!("status {}", code.as_u16())).into_response()
            }
            other if other.starts_with("count/") => json(format!(r#"{{"n":"{}"}}"#, other.trim_start_matches("count/"))),
            _ => (StatusCode::NOT_FOUND, "no such api").into_response(),
        }
    }
    /// A fixture page served after `ms` milliseconds.
    async fn delayed(Path(name): Path<String>, Query(query): Query<HashMap<String, String>>) -> Response {
        let ms: u64 = query.get("ms").and_then(|ms| ms.parse().ok()).unwrap_or(1000);
        tokio::time::sleep(Duration::from_millis(ms)).await;
        page(Path(name)).await
    }
    async fn download(Path(name): Path<String>, Query(query): Query<HashMap<String, String>>) -> Response {
        let size: usize = query.get("size").and_then(|size| size.parse().ok()).unwrap_or(1000);
        let disposition = format!("attachment; filename=\"{name}\"");
        ([(header::CONTENT_TYPE, "application/octet-stream".to_string()), (header::CONTENT_DISPOSITION, disposition)], download_bytes(size))
            .into_response()
    }
    /// A download that trickles in: `size` bytes in `chunk`s every `delay_ms`.
    async fn trickle(Query(query): Query<HashMap<String, String>>) -> Response {
        let number = |key: &str, default: usize| query.get(key).and_then(|value| value.parse().ok()).unwrap_or(default);
        let (size, chunk, delay) = (number("size", 100_000), number("chunk", 1000).max(1), number("delay_ms", 50) as u64);
        let bytes = download_bytes(size);
        let stream = chunked(bytes, chunk, Duration::from_millis(delay));
        (
            [
                (header::CONTENT_TYPE, "application/octet-stream".to_string()),
                (header::CONTENT_DISPOSITION, "attachment; filename=\"slow.bin\"".to_string()),
                (header::CONTENT_LENGTH, size.to_string()),
            ],
            axum::body::Body::from_stream(stream),
        )
            .into_response()
    }
    async fn upload(State(log): State<FixtureLog>, headers: axum::http::HeaderMap, body: axum::body::Bytes) -> Response {
        let content_type = headers.get(header::CONTENT_TYPE).and_then(|value| value.to_str().ok()).unwrap_or("");
        let parts = parse_multipart(content_type, &body);
        let summary: Vec<String> =
            parts.iter().map(|part| format!("{}={}:{}", part.field, part.filename.clone().unwrap_or_default(), part.bytes.len())).collect();
        log.uploads.lock().unwrap().push(parts);
        Html(format!("<title>uploaded</title><p id=result>{}</p>", summary.join(" "))).into_response()
    }
    /// A count of the requests for it, cacheable for an hour: an answer from a cache
    /// repeats an earlier count.
    async fn cached(State(log): State<FixtureLog>) -> Response {
        let count = log.seen.lock().unwrap().iter().filter(|seen| seen.path == "/cached").count();
        ([(header::CACHE_CONTROL, "public, max-age=3600")], count.to_string()).into_response()
    }
    async fn record(State(log): State<FixtureLog>, request: Request, next: axum::middleware::Next) -> Response {
        let seen = log.seen;
        let seen_now = {
            let header_text =
                |name: header::HeaderName| request.headers().get(name).and_then(|value| value.to_str().ok()).map(str::to_string);
            Seen {
                path: request.uri().path().to_string(),
                query: request.uri().query().unwrap_or("").to_string(),
                cookie: header_text(header::COOKIE),
                user_agent: header_text(header::USER_AGENT),
                headers: request
                    .headers()
                    .iter()
                    .map(|(name, value)| (name.as_str().to_string(), value.to_str().unwrap_or("").to_string()))
                    .collect(),
            }
        };
        seen.lock().unwrap().push(seen_now);
        next.run(request).await
    }
    let static_files = move |Path(path): Path<String>| {
        let dir = static_dir.clone();
        async move {
            let Some(dir) = dir else { return StatusCode::NOT_FOUND.into_response() };
            if path.split('/').any(|part| part == ".." || part.is_empty()) {
                return StatusCode::FORBIDDEN.into_response();
            }
            match tokio::fs::read(dir.join(&path)).await {
                Ok(bytes) => {
                    let kind = if path.ends_with(".json") { "application/json" } else { "text/html; charset=utf-8" };
                    ([(header::CONTENT_TYPE, kind), (header::CACHE_CONTROL, "no-store")], bytes).into_response()
                }
                Err(_) => StatusCode::NOT_FOUND.into_response(),
            }
        }
    };
    axum::Router::new()
        .route("/f/{name}", get(page))
        .route("/b/{*path}", get(static_files))
        .route("/set-cookie", get(set_cookie))
        .route("/state/login", get(state_login))
        .route("/echo", get(|| async { Html("<title>echo</title>echo") }))
        .route("/status/{code}", get(status))
        .route("/slow", get(slow))
        .route("/basic-auth", get(basic_auth))
        .route("/login", axum::routing::post(login))
        .route("/login-2fa", axum::routing::post(login_2fa))
        .route("/login-2fa/code", axum::routing::post(login_2fa_code))
        .route("/download/{name}", get(download))
        .route("/delayed/{name}", get(delayed))
        .route("/api/{*path}", axum::routing::any(api))
        .route("/redirect-to-file", get(|| async { (StatusCode::FOUND, [(header::LOCATION, "file:///etc/passwd")], "").into_response() }))
        .route("/trickle", get(trickle))
        .route("/upload", axum::routing::post(upload))
        .route("/cached", get(cached))
        .route("/sw.js", get(|| async { ([(header::CONTENT_TYPE, "text/javascript")], "self.addEventListener('fetch', () => {});") }))
        .layer(axum::middleware::from_fn_with_state(log.clone(), record))
        .with_state(log)
}

/// `/api/big`: 1.5 MiB of text, each line numbered.
pub fn api_big_body() -> String {
    let mut body = String::new();
    let mut line = 0;
    while body.len() < 1_572_864 {
        body.push_str(&format!("line {line:08}\n"));
        line += 1;
    }
    body
}

/// A 1x1 PNG.
const PIXEL_PNG: [u8; 67] = [
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00,
    0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4, 0x89, 0x00, 0x00, 0x00, 0x0a, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63,
    0x00, 0x01, 0x00, 0x00, 0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae, 0x42, 0x60,
    0x82,
];

/// `bytes` as a stream of `chunk`-sized pieces, one every `delay`.
fn chunked(bytes: Vec<u8>, chunk: usize, delay: Duration) -> impl futures_util::Stream<Item = Result<Vec<u8>, std::io::Error>> + Send {
    futures_util::stream::unfold((bytes, 0usize), move |(bytes, offset)| async move {
        if offset >= bytes.len() {
            return None;
        }
        if offset > 0 {
            tokio::time::sleep(delay).await;
        }
        let end = (offset + chunk).min(bytes.len());
        Some((Ok(bytes[offset..end].to_vec()), (bytes, end)))
    })
}

/// A fixture page of `tests/fixtures/`, read from disk (a new page needs no registration).
fn fixture(name: &str) -> Option<String> {
    let plain = !name.is_empty() && !name.starts_with('.') && name.chars().all(|c| c.is_ascii_alphanumeric() || "-_.".contains(c));
    if !plain {
        return None;
    }
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures").join(name)).ok()
}
