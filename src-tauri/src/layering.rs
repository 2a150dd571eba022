//! The layers of the crate point one way (docs/ARCHITECTURE.md, "Layers"): a module may
//! use only modules of lower layers. This test reads the sources and fails when a module
//! reaches up (say, `broker/` importing `http`) or when a new module has no layer yet.

use std::collections::HashMap;
use std::path::Path;

/// Each top-level module and its layer, lowest first. Modules on one layer do not use
/// each other.
const LAYERS: &[(&str, u8)] = &[
    ("error", 0),
    ("clock", 0),
    ("secret", 0),
    ("imaging", 0),
    ("logging", 0),
    ("testing", 0),
    ("config", 1),
    ("urls", 1),
    ("events", 1),
    ("listen", 1),
    ("display", 1),
    ("daemon_binary", 1),
    ("command_line", 1),
    ("memory", 1),
    ("network", 2),
    ("policy", 2),
    ("state", 3),
    ("engine", 4),
    ("vault", 4),
    ("proxy", 4),
    ("session", 5),
    ("live", 6),
    ("broker", 7),
    ("tools", 7),
    ("client", 8),
    ("cdp", 8),
    ("mcp", 9),
    ("cli", 9),
    ("doctor", 9),
    ("http", 10),
    ("desktop", 11),
    ("app", 12),
];

/// Files that are not a layer: the crate root, the two binaries' roots and the layering
/// test itself.
const OUTSIDE: &[&str] = &["lib", "main", "main_daemon", "layering"];

fn module_of(path: &Path, root: &Path) -> String {
    let relative = path.strip_prefix(root).expect("below the source root");
    let first = relative.components().next().expect("a file").as_os_str().to_string_lossy().to_string();
    first.trim_end_matches(".rs").to_string()
}

fn sources(dir: &Path, found: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("the source folder is readable").flatten() {
        let path = entry.path();
        if path.is_dir() {
            sources(&path, found);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            found.push(path);
        }
    }
}

/// The top-level modules a source text uses through `crate::` paths (comments left out).
fn uses(text: &str) -> Vec<String> {
    let mut used = Vec::new();
    for line in text.lines() {
        let code = line.split("//").next().unwrap_or("");
        let mut rest = code;
        while let Some(start) = rest.find("crate::") {
            let after = &rest[start + "crate::".len()..];
            let name: String = after.chars().take_while(|character| character.is_ascii_alphanumeric() || *character == '_').collect();
            if !name.is_empty() {
                used.push(name);
            }
            rest = after;
        }
    }
    used
}

/// Every use that reaches a module of the same or a higher layer: `(file, module, used)`.
fn violations(root: &Path) -> Vec<(String, String, String)> {
    let layers: HashMap<&str, u8> = LAYERS.iter().copied().collect();
    let mut files = Vec::new();
    sources(root, &mut files);
    let mut found = Vec::new();
    for file in files {
        let module = module_of(&file, root);
        if OUTSIDE.contains(&module.as_str()) {
            continue;
        }
        let text = std::fs::read_to_string(&file).expect("a readable source");
        let display = file.strip_prefix(root).unwrap_or(&file).display().to_string();
        let Some(&layer) = layers.get(module.as_str()) else {
            found.push((display, module, "(no layer: add it to LAYERS)".to_string()));
            continue;
        };
        for used in uses(&text) {
            if used == module || !layers.contains_key(used.as_str()) {
                continue;
            }
            if layers[used.as_str()] >= layer {
                found.push((display.clone(), module.clone(), used));
            }
        }
    }
    found.sort();
    found.dedup();
    found
}

#[test]
fn lower_layers_never_use_higher_ones() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let found = violations(&root);
    assert!(found.is_empty(), "modules that reach up or sideways (file, module, uses): {found:#?}");
}

#[test]
fn the_check_sees_a_use_that_reaches_up() {
    assert_eq!(uses("use crate::http::serve; // crate::app in a comment"), vec!["http"]);
    assert_eq!(uses("let x = crate::engine::keyval(\"a\");"), vec!["engine"]);
}
