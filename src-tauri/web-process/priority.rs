//! Page work runs 10 nice steps behind the daemon: the daemon's one main thread serves
//! every session, and on a machine whose cores are taken by many busy pages it must still
//! get its turn (measured with `bench busy`, 16 sessions reloading a large page on 2 cores:
//! a 17th session's click by ref 59-93 ms median against 155-210 without). It also keeps
//! agents' pages behind the person's own programs. A process may always lower its own
//! priority; only raising it back needs a privilege, which pages have no use for.
//!
//! A thread's nice value is its own on Linux and new threads take their starter's, so
//! every thread the process has when a page is created is lowered: WebKit starts several
//! before the extension loads.

use std::sync::OnceLock;

/// How much lower than the daemon's a web process sets its page work's priority (in nice
/// steps; the kernel stops at 19, the lowest).
const PAGE_NICE: i32 = 10;
/// `PRIO_PROCESS`: `who` names a thread.
const PRIO_PROCESS: i32 = 0;

/// The nice value page work runs at: the daemon's (which the process started with) plus
/// [`PAGE_NICE`].
static TARGET: OnceLock<i32> = OnceLock::new();

// The C library's.
unsafe extern "C" {
    /// Adds to the calling thread's nice value and returns the new one.
    fn nice(increment: i32) -> i32;
    fn setpriority(which: i32, who: u32, prio: i32) -> i32;
}

/// Lowers every thread of the process to the page's nice value.
pub(crate) fn put_behind() {
    // SAFETY: a plain system call on this thread; `nice(0)` only reads.
    let target = *TARGET.get_or_init(|| (unsafe { nice(0) } + PAGE_NICE).min(19));
    crate::threads::each(|thread| {
        // SAFETY: a plain system call about a thread of this process; one that has ended
        // since, one already lower (raising it is refused) or a sandbox that forbids it
        // makes it fail, which changes nothing.
        let _ = unsafe { setpriority(PRIO_PROCESS, thread as u32, target) };
    });
}
