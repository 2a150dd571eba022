//! Files tools write for the agent (screenshots, PDFs, HAR files, run reports), always
//! inside the session's `artifacts/`: a name the agent asks for is a plain file name there,
//! never a path that leads elsewhere.

use std::path::PathBuf;

use super::ToolContext;
use crate::error::{Error, Result};

/// Where a tool writes a file: `asked` (a plain file name ending in one of `extensions`,
/// refused as `E_BAD_REQUEST` naming `field` otherwise), or `<stem>-<millis>.<extension>`
/// when the agent named none. Both lie directly in the session's `artifacts/`.
pub(crate) fn artifact_path(context: &ToolContext, asked: Option<&str>, field: &str, stem: &str, extensions: &[&str]) -> Result<PathBuf> {
    let name = match asked {
        Some(name) => checked_name(name, field, extensions)?.to_string(),
        None => {
            let millis = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_millis();
            format!("{stem}-{millis}.{}", extensions.first().copied().unwrap_or("bin"))
        }
    };
    Ok(context.session.dirs.artifacts.join(name))
}

/// A file name the agent asked for, if it is one: no directory part, no `..`, not hidden,
/// at most 200 bytes, ending in one of `extensions` (any case).
fn checked_name<'name>(name: &'name str, field: &str, extensions: &[&str]) -> Result<&'name str> {
    let plain = !name.is_empty()
        && name.len() <= 200
        && !name.starts_with('.')
        && !name.contains(['/', '\\', '\0'])
        && name.chars().all(|character| !character.is_control());
    if !plain {
        return Err(Error::bad_request(format!(
            "{field}: give a plain file name (it is written in the session's artifacts/), not {name:?}"
        )));
    }
    let lower = name.to_ascii_lowercase();
    if !extensions.iter().any(|extension| lower.ends_with(&format!(".{extension}"))) {
        let listed: Vec<String> = extensions.iter().map(|extension| format!(".{extension}")).collect();
        return Err(Error::bad_request(format!("{field}: {name:?} must end in {}", listed.join(" or "))));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_plain_names_with_the_right_extension_pass() {
        assert_eq!(checked_name("page.PNG", "path", &["png"]).unwrap(), "page.PNG");
        for refused in ["../x.png", "/tmp/x.png", "a/b.png", ".hidden.png", "", "x.txt", "x.png\n", "..png"] {
            let error = checked_name(refused, "path", &["png"]).unwrap_err();
            assert!(error.message.starts_with("path:"), "{refused:?}: {}", error.message);
        }
    }
}
