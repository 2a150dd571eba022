//! Which origins a `storage_state` export reads localStorage from. WebKit lists no
//! origins with storage, so, as Playwright does with the frames it saw: every origin a
//! document of the session's tabs came from (their current pages and the documents their
//! request logs keep), and every first-party origin WebKit keeps storage for in the
//! session's data directory (`storage/<hash>/<hash>/origin`, which also covers a profile's
//! earlier sessions and what an import wrote).

use std::collections::BTreeSet;
use std::path::Path;

use crate::network::ResourceType;
use crate::session::Session;

/// Most origins one export reads.
const MAX_EXPORT_ORIGINS: usize = 200;

/// The origins to read, sorted (at most [`MAX_EXPORT_ORIGINS`]).
pub(super) fn known_origins(session: &Session) -> Vec<String> {
    let mut origins = BTreeSet::new();
    for tab in session.tabs.list() {
        add_origin(&mut origins, &tab.status.get().0);
        for entry in tab.traffic.all() {
            let record = entry.lock().expect("record poisoned");
            if record.resource_type == ResourceType::Document {
                add_origin(&mut origins, &record.url);
            }
        }
    }
    origins.extend(stored_origins(&session.dirs.web_data));
    origins.into_iter().take(MAX_EXPORT_ORIGINS).collect()
}

fn add_origin(origins: &mut BTreeSet<String>, url: &str) {
    if let Ok(url) = url::Url::parse(url) {
        if matches!(url.scheme(), "http" | "https") {
            origins.insert(url.origin().ascii_serialization());
        }
    }
}

/// The first-party origins WebKit keeps storage for under `web_data`.
fn stored_origins(web_data: &Path) -> Vec<String> {
    let mut origins = Vec::new();
    for top in std::fs::read_dir(web_data.join("storage")).into_iter().flatten().flatten() {
        for client in std::fs::read_dir(top.path()).into_iter().flatten().flatten() {
            let Ok(bytes) = std::fs::read(client.path().join("origin")) else { continue };
            if bytes.len() > 4096 {
                continue;
            }
            if let Some((top_origin, client_origin)) = parse_origin_file(&bytes) {
                if top_origin == client_origin {
                    origins.push(client_origin);
                }
            }
        }
    }
    origins
}

/// WebKit's `origin` file: the top origin, then the client origin, each as its scheme and
/// host (a `u32` length, a `u8` set for 8-bit characters, the characters) and its port (a
/// `u8` set when present, then a `u16`), little-endian. Measured on WebKitGTK 2.50.
fn parse_origin_file(bytes: &[u8]) -> Option<(String, String)> {
    let mut reader = Reader { bytes, at: 0 };
    let top = reader.origin()?;
    let client = reader.origin()?;
    Some((top, client))
}

struct Reader<'bytes> {
    bytes: &'bytes [u8],
    at: usize,
}

impl Reader<'_> {
    fn take(&mut self, count: usize) -> Option<&[u8]> {
        let end = self.at.checked_add(count)?;
        let taken = self.bytes.get(self.at..end)?;
        self.at = end;
        Some(taken)
    }

    fn string(&mut self) -> Option<String> {
        let length = u32::from_le_bytes(self.take(4)?.try_into().ok()?) as usize;
        let eight_bit = self.take(1)?[0] == 1;
        if eight_bit {
            Some(self.take(length)?.iter().map(|&byte| byte as char).collect())
        } else {
            let units: Vec<u16> = self.take(length.checked_mul(2)?)?.chunks(2).map(|pair| u16::from_le_bytes([pair[0], pair[1]])).collect();
            String::from_utf16(&units).ok()
        }
    }

    fn origin(&mut self) -> Option<String> {
        let scheme = self.string()?;
        let host = self.string()?;
        let port = match self.take(1)?[0] {
            1 => Some(u16::from_le_bytes(self.take(2)?.try_into().ok()?)),
            _ => None,
        };
        if !matches!(scheme.as_str(), "http" | "https") || host.is_empty() {
            return None;
        }
        let text = match port {
            Some(port) => format!("{scheme}://{host}:{port}"),
            None => format!("{scheme}://{host}"),
        };
        // Written as the browser writes an origin (default ports left out, IPv6 bracketed).
        url::Url::parse(&text).ok().map(|url| url.origin().ascii_serialization())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn webkits_origin_file_reads_as_its_two_origins() {
        // A file WebKitGTK 2.50 wrote for http://127.0.0.1:39763.
        let bytes = [
            4, 0, 0, 0, 1, b'h', b't', b't', b'p', 9, 0, 0, 0, 1, b'1', b'2', b'7', b'.', b'0', b'.', b'0', b'.', b'1', 1, 0x53, 0x9b, 4,
            0, 0, 0, 1, b'h', b't', b't', b'p', 9, 0, 0, 0, 1, b'1', b'2', b'7', b'.', b'0', b'.', b'0', b'.', b'1', 1, 0x53, 0x9b,
        ];
        let origin = "http://127.0.0.1:39763".to_string();
        assert_eq!(parse_origin_file(&bytes), Some((origin.clone(), origin)));
        assert_eq!(parse_origin_file(&bytes[..20]), None);
    }
}
