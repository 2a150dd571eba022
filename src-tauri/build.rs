//! Tauri's build step, and (on Linux) malo's WebKit web-process extension: one Rust crate
//! (`web-process/`) built with plain `rustc` into a shared object the binary carries
//! (`engine::webkit::web_process`).

fn main() {
    tauri_build::build();
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
