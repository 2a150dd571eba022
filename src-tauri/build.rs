//! Tauri's build step, and (on Linux) malo's WebKit web-process extension: one Rust crate
//! (`web-process/`) built with plain `rustc` into a shared object the binary carries
//! (`engine::webkit::web_process`). And axe-core, the accessibility rules of `a11y`, when
//! scripts/setup.sh has installed it (`axe/`): bundled as is, else `a11y` is unsupported.

fn main() {
    tauri_build::build();
    bundle_axe();
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        build_web_process_extension();
    }
}

fn build_web_process_extension() {
    const SOURCE: &str = "web-process/extension.rs";
    // The whole folder: the extension's modules are files beside it.
    println!("cargo:rerun-if-changed=web-process");
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let target = std::env::var("TARGET").expect("cargo sets TARGET");
    let output = out_dir.join("libmalo_web_process.so");
    let status = std::process::Command::new(rustc)
        .args(["--edition", "2021", "--crate-type", "cdylib", "--crate-name", "malo_web_process", "--target", &target])
        .args(["-C", "opt-level=2", "-C", "panic=abort", "-C", "strip=symbols", "-D", "warnings"])
        .arg("-o")
        .arg(&output)
        .arg(SOURCE)
        .status()
        .expect("rustc runs");
    assert!(status.success(), "building {SOURCE} failed");
}

/// Copies `axe/node_modules/axe-core/axe.min.js` (the version `axe/package.json` pins, which
/// scripts/setup.sh installs) to `$OUT_DIR/axe.min.js`, which `tools/a11y.rs` includes; an
/// empty file there when it is not installed.
fn bundle_axe() {
    // The folder, not the file: a missing file would rerun this script on every build.
    println!("cargo:rerun-if-changed=axe");
    let out_dir = std::path::PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let source = std::fs::read("axe/node_modules/axe-core/axe.min.js").unwrap_or_default();
    std::fs::write(out_dir.join("axe.min.js"), source).expect("OUT_DIR is writable");
}
