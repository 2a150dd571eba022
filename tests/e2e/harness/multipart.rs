//! A parser of `multipart/form-data` bodies, for the uploads the fixture server receives.

/// One part of a multipart form the fixture server received.
#[derive(Clone, Debug)]
pub struct UploadedPart {
    pub field: String,
    pub filename: Option<String>,
    pub bytes: Vec<u8>,
}

/// The parts of a `multipart/form-data` body.
pub fn parse_multipart(content_type: &str, body: &[u8]) -> Vec<UploadedPart> {
    let Some(boundary) = content_type.split("boundary=").nth(1).map(|boundary| boundary.trim_matches('"')) else { return Vec::new() };
    let delimiter = format!("--{boundary}");
    let mut parts = Vec::new();
    let mut rest = body;
    while let Some(start) = find(rest, delimiter.as_bytes()) {
        rest = &rest[start + delimiter.len()..];
        if rest.starts_with(b"--") {
            break;
        }
        let Some(head_end) = find(rest, b"\r\n\r\n") else { break };
        let head = String::from_utf8_lossy(&rest[..head_end]).to_string();
        let content = &rest[head_end + 4..];
        let Some(end) = find(content, format!("\r\n{delimiter}").as_bytes()) else { break };
        let disposition = head.lines().find(|line| line.to_ascii_lowercase().starts_with("content-disposition")).unwrap_or("");
        let attribute = |name: &str| {
            disposition
                .split(';')
                .map(str::trim)
                .find_map(|item| item.strip_prefix(&format!("{name}=\"")).map(|value| value.trim_end_matches('"').to_string()))
        };
        parts.push(UploadedPart {
            field: attribute("name").unwrap_or_default(),
            filename: attribute("filename"),
            bytes: content[..end].to_vec(),
        });
        rest = &content[end + 2..];
    }
    parts
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}
