//! Giving freed memory back to the system. glibc's allocator keeps what a closed session
//! freed (webview and page buffers, screenshots, captured traffic) in its arenas for
//! reuse, so without help the daemon stays near its busiest size long after its sessions
//! are gone (measured after an 8 x 4 soak: 59 MiB above idle untrimmed, 35 trimmed). After
//! sessions close, and once things have settled, the daemon trims.
//!
//! Trimming alone does not reach everything: `malloc_trim` shrinks the main arena's top but
//! leaves the top of every other arena (one per thread that allocated: the runtime's
//! workers, the blocking pools, WebKit's and GIO's threads) to `free`, which gives it back
//! only above the trim threshold. glibc raises that threshold to twice the largest mapped
//! block freed so far (up to 64 MiB), and serves blocks below half of it from the arenas:
//! after a screenshot's 3 MiB of pixels, each arena could keep 6 MiB, and a 4 x 4 soak left
//! 25 MiB in 19 arenas that no trim returned. [`configure`] fixes both thresholds at
//! glibc's defaults, so large buffers are mapped and unmapped whole and arena tops shrink
//! as they are freed (the same soak: 5 MiB in 18 arenas, no call slower).

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

/// How long after a close the trim runs: WebKit frees some of a closed view's memory
/// from idle callbacks a moment later, and closes come in bursts (a lease's sessions).
const SETTLE: Duration = Duration::from_secs(2);

/// When the trim runs once more: what WebKit lets go later (its shared JavaScript context
/// in this process after 10 s unused, connections of exited processes) is given back too.
const LATE: Duration = Duration::from_secs(15);

/// Blocks of this size or more are mapped on their own and unmapped when freed (glibc's
/// default, kept fixed instead of rising with the largest block freed).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const MMAP_THRESHOLD: i32 = 128 * 1024;

/// Free memory above this at the top of an arena goes back to the system as it is freed
/// (glibc's default, kept fixed).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const TRIM_THRESHOLD: i32 = 128 * 1024;

static PENDING: AtomicBool = AtomicBool::new(false);

/// Sets the allocator's thresholds for a long-running process (see the module's note).
/// Called first thing by the daemon, before its threads start.
pub fn configure() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        #[allow(unsafe_code)]
        // SAFETY: mallopt only changes the allocator's parameters under its own lock; the
        // values are glibc's documented defaults.
        unsafe {
            libc::mallopt(libc::M_MMAP_THRESHOLD, MMAP_THRESHOLD);
            libc::mallopt(libc::M_TRIM_THRESHOLD, TRIM_THRESHOLD);
        }
    }
}

/// Trims once, [`SETTLE`] from now, and again [`LATE`] after that, however many times it
/// is asked to meanwhile. Needs a tokio runtime; without one (unit tests of other parts),
/// does nothing.
pub fn trim_soon() {
    let Ok(runtime) = tokio::runtime::Handle::try_current() else { return };
    if PENDING.swap(true, Ordering::AcqRel) {
        return;
    }
    runtime.spawn(async {
        tokio::time::sleep(SETTLE).await;
        PENDING.store(false, Ordering::Release);
        let _ = tokio::task::spawn_blocking(trim).await;
        tokio::time::sleep(LATE).await;
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
