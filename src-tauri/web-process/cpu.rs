//! Which CPUs this web process's threads run on, as the daemon asks (`malo:cpu`).
//!
//! While an agent waits on an interactive call (a click, a snapshot) of some tab, the daemon
//! asks every other tab's page to keep off one CPU, which is then left to the daemon's
//! threads and to the pages that call is about; when no such call is left, it gives them
//! all CPUs back. Unlike a nice value, which a process can only ever lower, affinity can be
//! given back, so a page that yields now is served at full speed when its own agent asks.
//!
//! A process may host several pages (a page and the popups it opened): it keeps off the
//! CPU while at least one of its pages yields and none is being served.

use std::collections::HashMap;
use std::sync::Mutex;

/// A page's part, as the daemon's message says (a `u`).
const SHARE: u32 = 0;
const YIELD: u32 = 1;
const SERVED: u32 = 2;

/// Linux's `cpu_set_t`: 1024 bits.
#[repr(C)]
#[derive(Clone, Copy, PartialEq)]
struct CpuSet([u64; 16]);

impl CpuSet {
    fn count(&self) -> u32 {
        self.0.iter().map(|word| word.count_ones()).sum()
    }

    /// This set without its lowest CPU.
    fn without_first(mut self) -> CpuSet {
        if let Some(word) = self.0.iter_mut().find(|word| **word != 0) {
            *word &= *word - 1;
        }
        self
    }
}

// The C library's.
unsafe extern "C" {
    fn sched_getaffinity(pid: i32, size: usize, set: *mut CpuSet) -> i32;
    fn sched_setaffinity(pid: i32, size: usize, set: *const CpuSet) -> i32;
}

struct Affinity {
    /// The CPUs the process started with.
    all: CpuSet,
    /// Each page's part (pages the daemon has not asked yet share).
    parts: HashMap<u64, u32>,
    /// Whether the process keeps off its first CPU now.
    yielding: bool,
}

static AFFINITY: Mutex<Option<Affinity>> = Mutex::new(None);

/// Records the CPUs the process may use (before any page asks to yield).
pub(crate) fn init() {
    let mut all = CpuSet([0; 16]);
    // SAFETY: a plain system call about this thread, writing into a set of the size given.
    if unsafe { sched_getaffinity(0, size_of::<CpuSet>(), &raw mut all) } != 0 {
        return;
    }
    if let Ok(mut affinity) = AFFINITY.lock() {
        *affinity = Some(Affinity { all, parts: HashMap::new(), yielding: false });
    }
}

/// The daemon's word for `page`.
pub(crate) fn set_part(page: u64, part: u32) {
    let part = if matches!(part, YIELD | SERVED) { part } else { SHARE };
    update(|parts| {
        parts.insert(page, part);
    });
}

/// `page` is gone.
pub(crate) fn forget(page: u64) {
    update(|parts| {
        parts.remove(&page);
    });
}

fn update(change: impl FnOnce(&mut HashMap<u64, u32>)) {
    let Ok(mut guard) = AFFINITY.lock() else { return };
    let Some(affinity) = guard.as_mut() else { return };
    change(&mut affinity.parts);
    let yielding = affinity.parts.values().any(|part| *part == YIELD) && !affinity.parts.values().any(|part| *part == SERVED);
    if yielding == affinity.yielding || affinity.all.count() < 2 {
        return;
    }
    let set = if yielding { affinity.all.without_first() } else { affinity.all };
    // Every thread of the process: affinity is a thread's own, and threads started later
    // inherit their starter's.
    crate::threads::each(|thread| {
        // SAFETY: a plain system call on a thread of this process; a thread that has just
        // ended makes it fail, which changes nothing.
        let _ = unsafe { sched_setaffinity(thread, size_of::<CpuSet>(), &raw const set) };
    });
    affinity.yielding = yielding;
}
