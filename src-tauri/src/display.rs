//! The screen the engine draws on: the person's display when the daemon has one, else a
//! private X server (Xvfb) that the daemon starts, owns and stops. On a private screen no
//! person can see anything, so the tray, notifications and takeover windows are off.

use std::io::{BufRead, BufReader};
use std::os::fd::AsRawFd;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long Xvfb may take to say which display it took.
const XVFB_START: Duration = Duration::from_secs(10);

static PRIVATE: AtomicBool = AtomicBool::new(false);

/// Whether the daemon draws on a private screen no person can see.
pub fn is_private() -> bool {
    PRIVATE.load(Ordering::Relaxed)
}

/// The screen in use; keep it for the daemon's lifetime (dropping a private one stops it).
#[derive(Debug)]
pub enum Screen {
    /// The display the daemon was started on (`DISPLAY` or `WAYLAND_DISPLAY`).
    Person,
    /// A private Xvfb.
    Private(PrivateX),
}

impl Screen {
    /// What the log says of it.
    pub fn describe(&self) -> String {
        match self {
            Screen::Person if cfg!(target_os = "macos") => "the person's screen".into(),
            Screen::Person => {
                let wayland = std::env::var("WAYLAND_DISPLAY").unwrap_or_default();
                let backend = std::env::var("GDK_BACKEND").unwrap_or_default();
                let display = std::env::var("DISPLAY").unwrap_or_default();
                match (wayland.is_empty(), backend == "x11") {
                    (false, false) => format!("the person's Wayland display {wayland} (input tools need the compositor to offer a seat)"),
                    (false, true) => {
                        format!("the person's Wayland desktop through XWayland ({display}); GDK_BACKEND=wayland draws on Wayland itself")
                    }
                    _ => format!("the person's X display {display}"),
                }
            }
            Screen::Private(x) => format!("a private X server {} (Xvfb, pid {}): no display was set", x.name, x.child.id()),
        }
    }
}

/// An Xvfb the daemon started; stopped on drop, and by the kernel if the daemon dies.
#[derive(Debug)]
pub struct PrivateX {
    /// `:<number>`.
    pub name: String,
    child: Child,
}

impl Drop for PrivateX {
    fn drop(&mut self) {
        // SIGTERM lets it remove its lock file and socket.
        let pid = self.child.id() as libc::pid_t;
        // SAFETY: signalling our own child, which has not been reaped yet.
        #[allow(unsafe_code)]
        unsafe {
            libc::kill(pid, libc::SIGTERM)
        };
        for _ in 0..40 {
            if self.child.try_wait().ok().flatten().is_some() {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The person's display if the environment names one; else starts a private Xvfb and
/// points `DISPLAY` at it. Call before any other thread starts: it sets `DISPLAY`.
pub fn choose() -> Result<Screen, String> {
    let set = |name: &str| std::env::var_os(name).is_some_and(|value| !value.is_empty());
    if set("WAYLAND_DISPLAY") && set("DISPLAY") && !set("GDK_BACKEND") && cfg!(target_os = "linux") {
        // A Wayland desktop with XWayland: draw through X11. Input is delivered to offscreen
        // pages through a seat's devices, which a Wayland compositor may not offer, and only
        // X11 lets a window appear without taking focus. GDK_BACKEND=wayland forces Wayland.
        std::env::set_var("GDK_BACKEND", "x11");
    }
    if !set("GDK_RENDERING") && cfg!(target_os = "linux") {
        // A hidden page's host draws into a surface "similar" to the screen's: on X11 a
        // pixmap in the X server, filled through shared-memory images the daemon keeps
        // (measured: 24 MiB in the X server with 5 sessions, 18-22 MiB of System V shm
        // left in the daemon after a soak). Image surfaces keep it in the daemon's own heap,
        // where it goes with the tab; a shown window still paints to the screen as usual.
        std::env::set_var("GDK_RENDERING", "image");
    }
    if !set("GDK_GL") && cfg!(target_os = "linux") {
        // Nothing the daemon draws uses GL (pages draw without accelerated compositing, in
        // image surfaces), yet GDK opens GLX when it opens the screen, to choose visuals:
        // Mesa's driver, its configuration files and LLVM, 15 ms of CPU and 24 ms before
        // the daemon announces itself (measured, median of 6 cold starts).
        std::env::set_var("GDK_GL", "disable");
    }
    if cfg!(target_os = "macos") || set("DISPLAY") || set("WAYLAND_DISPLAY") {
        return Ok(Screen::Person);
    }
    let private = start_xvfb()?;
    // Nothing else reads the environment yet (see above); GTK and every web process read it later.
    std::env::set_var("DISPLAY", &private.name);
    PRIVATE.store(true, Ordering::Relaxed);
    Ok(Screen::Private(private))
}

fn start_xvfb() -> Result<PrivateX, String> {
    let (reader, writer) = std::io::pipe().map_err(|error| format!("cannot start Xvfb: {error}"))?;
    let fd = writer.as_raw_fd();
    let mut command = Command::new("Xvfb");
    command
        .args(["-displayfd", &fd.to_string(), "-screen", "0", "1920x1080x24", "-nolisten", "tcp", "-nocursor"])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    // SAFETY: only async-signal-safe calls between fork and exec.
    #[allow(unsafe_code)]
    unsafe {
        command.pre_exec(move || {
            // The X server goes when the daemon goes, however it goes.
            if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Xvfb writes its display number to this descriptor.
            let flags = libc::fcntl(fd, libc::F_GETFD);
            if flags < 0 || libc::fcntl(fd, libc::F_SETFD, flags & !libc::FD_CLOEXEC) < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
    let mut child = command.spawn().map_err(|error| match error.kind() {
        std::io::ErrorKind::NotFound => {
            "there is no display (DISPLAY and WAYLAND_DISPLAY are unset) and Xvfb is not installed: install the xvfb package \
             (scripts/setup.sh does) or run malo inside a desktop session"
                .to_string()
        }
        _ => format!("there is no display and Xvfb cannot start: {error}"),
    })?;
    drop(writer);
    let (sender, receiver) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(reader).read_line(&mut line);
        let _ = sender.send(line);
    });
    let number = receiver.recv_timeout(XVFB_START).ok().and_then(|line| line.trim().parse::<u32>().ok());
    match number {
        Some(number) => Ok(PrivateX { name: format!(":{number}"), child }),
        None => {
            let _ = child.kill();
            let status = child.wait().map(|status| status.to_string()).unwrap_or_default();
            Err(format!("there is no display and the private X server (Xvfb) did not start within 10 s ({status})"))
        }
    }
}
