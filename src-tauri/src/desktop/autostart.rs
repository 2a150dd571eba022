//! `malo autostart on|off`: starts the daemon when the person logs in, through an XDG
//! autostart entry (`~/.config/autostart/malo-browser.desktop`), or stops doing so.

use std::path::PathBuf;

const ENTRY: &str = "malo-browser.desktop";

fn autostart_dir() -> Result<PathBuf, String> {
    let config = match std::env::var_os("XDG_CONFIG_HOME").filter(|value| !value.is_empty()) {
        Some(config) => PathBuf::from(config),
        None => PathBuf::from(std::env::var_os("HOME").ok_or("HOME is not set")?).join(".config"),
    };
    Ok(config.join("autostart"))
}

/// Turns starting at login on or off; says what it did.
pub fn set(enabled: bool) -> Result<String, String> {
    let path = autostart_dir()?.join(ENTRY);
    if !enabled {
        return match std::fs::remove_file(&path) {
            Ok(()) => Ok(format!("autostart off: removed {}", path.display())),
            Err(error) if error.kind() == std::io::ErrorKind::NotFound => Ok("autostart was already off".to_string()),
            Err(error) => Err(format!("cannot remove {}: {error}", path.display())),
        };
    }
    let exe = std::env::current_exe().map_err(|error| format!("cannot find the malo binary: {error}"))?;
    let exe = exe.to_string_lossy();
    if exe.chars().any(|character| character.is_whitespace() || "\"'\\`$".contains(character)) {
        return Err(format!("the malo binary's path {exe:?} has characters an autostart entry cannot carry; install it elsewhere"));
    }
    let entry = format!(
        "[Desktop Entry]\nType=Application\nName=malo-browser\nComment=A local browser for AI agents (the daemon, in the tray)\n\
         Exec={exe} daemon\nIcon=malo\nTerminal=false\nNoDisplay=true\nX-GNOME-Autostart-enabled=true\n"
    );
    let dir = autostart_dir()?;
    std::fs::create_dir_all(&dir).map_err(|error| format!("cannot create {}: {error}", dir.display()))?;
    std::fs::write(&path, entry).map_err(|error| format!("cannot write {}: {error}", path.display()))?;
    Ok(format!("autostart on: {} starts `{exe} daemon` when you log in", path.display()))
}
