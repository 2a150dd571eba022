//! Giving freed memory back to the system. glibc's allocator keeps what a closed session
//! freed (webview and page buffers, screenshots, captured traffic) in its arenas for
//! reuse, so without help the daemon stays near its busiest size long after its sessions
//! are gone (measured after an 8 x 4 soak: 59 MiB above idle untrimmed, 35 trimmed). After
//! sessions close, and once things have settled, the daemon trims.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long after a close the trim runs: WebKit frees some of a closed view's memory
/// from idle callbacks a moment later, and closes come in bursts (a lease's sessions).
const SETTLE: Duration = Duration::from_secs(2);

static PENDING: AtomicBool = AtomicBool::new(false);

/// Trims once, [`SETTLE`] from now, however many times it is asked to meanwhile. Needs
/// a tokio runtime; without one (unit tests of other parts), does nothing.
pub fn trim_soon() {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    if PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    runtime.spawn(async {
        tokio::time::sleep(SETTLE).await;
        PENDING.store(false, Ordering::Release);
        let _ = tokio::task::spawn_blocking(trim).await;
    });
}

/// Returns the allocator's free pages to the system now.
fn trim() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(unsafe_code)]
        // SAFETY: malloc_trim takes each arena's lock itself and only releases pages
        // that hold no allocation; it is safe to call from any thread at any time.
        unsafe {
            libc::malloc_trim(0);
        }
    }
}
