//! How the daemon's listeners admit connections. Anyone on the machine may connect to a
//! loopback port without a token, so a connection is a resource to ration: each port
//! holds at most [`MAX_CONNECTIONS_PER_PORT`], the whole daemon at most a budget derived
//! from its open-file limit, and a newcomer past either limit takes the place of the
//! oldest connection that has not made a request yet (an idle or slowloris client), else
//! of the one whose request body has gone longest without a byte (a half-sent body is
//! not work in progress), else of the connection idle the longest. A connection whose
//! client has sent bytes the server has not read yet is never the one replaced: under a
//! flood of reconnecting idle clients, a request that arrived whole would otherwise lose
//! its place before its task first ran. A newcomer with no one to replace still gets one
//! of [`RESERVED_PER_PORT`] places kept for newcomers, so a port full of
//! answered-but-unfinished requests still lets a client in; past those it is refused.
//! The servers ([`crate::http`], [`crate::proxy`]) close connections whose request
//! headers or bodies trickle in too slowly.

use std::os::fd::{AsRawFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::Notify;

/// Connections one API port holds at once.
pub const MAX_CONNECTIONS_PER_PORT: usize = 256;
/// Places a port keeps beyond its limit for newcomers when no connection can be replaced.
pub const RESERVED_PER_PORT: usize = 16;
/// File descriptors kept out of the connection budget: WebKit's IPC, logs, session files,
/// upstream connections of the proxies.
const RESERVED_DESCRIPTORS: u64 = 256;
/// The budget never goes below this, whatever the limit says.
const MIN_BUDGET: usize = 64;
/// Nor above this (a daemon serving more connections than this is under attack anyway).
const MAX_BUDGET: usize = 16_384;

/// How long a client may take to send a request's headers (the first request's included:
/// an idle connection is closed after this).
pub const HEADER_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a request body may go without a byte (before its first one, too).
pub const BODY_STALL: Duration = Duration::from_secs(5);
/// The slowest rate an honest client sends a body at: a body of `n` bytes may take
/// [`BODY_STALL`] plus `n` bytes at this rate from its first byte (1 MB: about 66 s).
pub const HONEST_BODY_RATE: u64 = 16 * 1024;

/// How long a body of `length` bytes may take from its first byte to its last.
pub fn body_time_limit(length: u64) -> Duration {
    BODY_STALL + Duration::from_millis(length.saturating_mul(1000) / HONEST_BODY_RATE)
}

/// Raises the soft open-file limit to the hard one (logged), and sizes the daemon-wide
/// connection budget from the result.
pub fn raise_open_file_limit() {
    let (before, after) = match open_file_limit() {
        Some((soft, hard)) if soft < hard => match set_open_file_limit(hard, hard) {
            Ok(()) => (soft, hard),
            Err(error) => {
                tracing::warn!(soft, hard, %error, "cannot raise the open-file limit");
                (soft, soft)
            }
        },
        Some((soft, _)) => (soft, soft),
        None => {
            tracing::warn!("cannot read the open-file limit");
            return;
        }
    };
    let budget = budget_for(after);
    registry().budget.store(budget, Ordering::Relaxed);
    tracing::info!(soft_before = before, soft_now = after, connection_budget = budget, "open-file limit");
}

/// The daemon-wide connection budget for an open-file limit.
fn budget_for(limit: u64) -> usize {
    let usable = limit.saturating_sub(RESERVED_DESCRIPTORS).min(MAX_BUDGET as u64) as usize;
    usable.max(MIN_BUDGET)
}

fn open_file_limit() -> Option<(u64, u64)> {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    #[allow(unsafe_code)]
    // SAFETY: `getrlimit` writes one `rlimit` into memory we own.
    let status = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) };
    (status == 0).then_some((limit.rlim_cur, limit.rlim_max))
}

fn set_open_file_limit(soft: u64, hard: u64) -> std::io::Result<()> {
    let limit = libc::rlimit { rlim_cur: soft, rlim_max: hard };
    #[allow(unsafe_code)]
    // SAFETY: `setrlimit` only reads the `rlimit` we pass.
    let status = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &limit) };
    if status == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Every admitted connection of the daemon.
struct Registry {
    open: Mutex<Vec<Arc<Slot>>>,
    budget: AtomicUsize,
    next_id: AtomicU64,
    epoch: Instant,
    /// Refusals and evictions, for the log (at most one line per few seconds).
    pressure: Mutex<Pressure>,
}

#[derive(Default)]
struct Pressure {
    evicted: u64,
    refused: u64,
    logged: Option<Instant>,
}

fn registry() -> &'static Registry {
    static REGISTRY: OnceLock<Registry> = OnceLock::new();
    REGISTRY.get_or_init(|| Registry {
        open: Mutex::default(),
        budget: AtomicUsize::new(budget_for(1024)),
        next_id: AtomicU64::new(0),
        epoch: Instant::now(),
        pressure: Mutex::default(),
    })
}

/// One admitted connection, as the registry sees it.
struct Slot {
    id: u64,
    port: u16,
    admitted: Instant,
    /// The connection's socket, asked whether its client sent bytes not read yet.
    socket: RawFd,
    /// Whether a complete request head has arrived.
    served: AtomicBool,
    /// Requests whose answer has not been sent to the end.
    in_flight: AtomicUsize,
    /// When the last request ended (ms since the registry's epoch).
    idle_since_ms: AtomicU64,
    /// Whether a request's body is still being received.
    receiving_body: AtomicBool,
    /// When the body being received last brought a byte (ms since the registry's epoch).
    body_progress_ms: AtomicU64,
    evict: Notify,
}

/// A connection's place in the registry; dropping it frees the place.
pub struct Admission {
    slot: Arc<Slot>,
}

impl Admission {
    /// Admits a new connection on `port`, which holds at most `cap`, replacing another if
    /// a limit is reached; `None` when it must be refused (close it at once). Keep
    /// `socket` open while the admission lives.
    pub fn admit(port: u16, cap: usize, socket: &impl AsRawFd) -> Option<Admission> {
        let registry = registry();
        let mut open = registry.open.lock().expect("connection registry poisoned");
        let on_port = open.iter().filter(|slot| slot.port == port).count();
        let victim = if on_port >= cap {
            match victim(&open, Some(port)) {
                Some(index) => Some(Some(index)),
                // No one to replace: a newcomer may still take one of the reserved places.
                None if on_port < cap + RESERVED_PER_PORT => None,
                None => Some(None),
            }
        } else if open.len() >= registry.budget.load(Ordering::Relaxed) {
            Some(victim(&open, None))
        } else {
            None
        };
        match victim {
            Some(None) => {
                drop(open);
                note_pressure(false);
                return None;
            }
            Some(Some(index)) => {
                let evicted = open.swap_remove(index);
                evicted.evict.notify_one();
                note_pressure(true);
            }
            None => {}
        }
        let slot = Arc::new(Slot {
            id: registry.next_id.fetch_add(1, Ordering::Relaxed),
            port,
            admitted: Instant::now(),
            socket: socket.as_raw_fd(),
            served: AtomicBool::new(false),
            in_flight: AtomicUsize::new(0),
            idle_since_ms: AtomicU64::new(now_ms()),
            receiving_body: AtomicBool::new(false),
            body_progress_ms: AtomicU64::new(0),
            evict: Notify::new(),
        });
        open.push(slot.clone());
        Some(Admission { slot })
    }

    /// Frees one place on `port` when the system has no descriptor left for a new
    /// connection (`accept` failed with EMFILE); whether one was freed.
    pub fn relieve(port: u16) -> bool {
        let mut open = registry().open.lock().expect("connection registry poisoned");
        match victim(&open, Some(port)).or_else(|| victim(&open, None)) {
            Some(index) => {
                let evicted = open.swap_remove(index);
                evicted.evict.notify_one();
                drop(open);
                note_pressure(true);
                true
            }
            None => false,
        }
    }

    /// Resolves when another connection took this one's place: close it.
    pub async fn evicted(&self) {
        self.slot.evict.notified().await;
    }

    /// A request's head arrived; the guard marks its end (drop it when the answer has
    /// been sent, body included).
    pub fn request_started(&self) -> RequestGuard {
        self.slot.served.store(true, Ordering::Relaxed);
        self.slot.in_flight.fetch_add(1, Ordering::Relaxed);
        RequestGuard { slot: self.slot.clone() }
    }
}

impl Drop for Admission {
    fn drop(&mut self) {
        let mut open = registry().open.lock().expect("connection registry poisoned");
        if let Some(index) = open.iter().position(|slot| slot.id == self.slot.id) {
            open.swap_remove(index);
        }
    }
}

/// One request in flight on an admitted connection.
pub struct RequestGuard {
    slot: Arc<Slot>,
}

impl RequestGuard {
    /// The request has a body to receive: until [`BodyProgress::done`], the connection
    /// ranks by when that body last brought a byte, and one that stalls is replaceable.
    pub fn body_progress(&self) -> BodyProgress {
        self.slot.body_progress_ms.store(now_ms(), Ordering::Relaxed);
        self.slot.receiving_body.store(true, Ordering::Relaxed);
        BodyProgress { slot: self.slot.clone() }
    }
}

/// How a request body is arriving, as the registry's choice of a connection to replace
/// sees it.
pub struct BodyProgress {
    slot: Arc<Slot>,
}

impl BodyProgress {
    /// Some of the body arrived.
    pub fn arrived(&self) {
        self.slot.body_progress_ms.store(now_ms(), Ordering::Relaxed);
    }

    /// The body has arrived whole (or failed).
    pub fn done(&self) {
        self.slot.receiving_body.store(false, Ordering::Relaxed);
    }
}

impl Drop for BodyProgress {
    fn drop(&mut self) {
        self.done();
    }
}

impl Drop for RequestGuard {
    fn drop(&mut self) {
        self.slot.idle_since_ms.store(now_ms(), Ordering::Relaxed);
        self.slot.in_flight.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Connections open on `port` right now.
#[cfg(test)]
fn open_on(port: u16) -> usize {
    registry().open.lock().expect("connection registry poisoned").iter().filter(|slot| slot.port == port).count()
}

/// What `GET /v1/stats` says of the daemon's connections.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ConnectionReport {
    /// Connections admitted right now, on every port.
    pub open: usize,
    /// How many may be open at once (from the open-file limit).
    pub budget: usize,
    /// Each port's limit.
    pub per_port: usize,
    /// Connections closed to make room for others since the start.
    pub evicted: u64,
    /// Connections refused because every place was answering a request.
    pub refused: u64,
}

/// The connections right now.
pub fn report() -> ConnectionReport {
    let registry = registry();
    let open = registry.open.lock().expect("connection registry poisoned").len();
    let pressure = registry.pressure.lock().expect("pressure poisoned");
    ConnectionReport {
        open,
        budget: registry.budget.load(Ordering::Relaxed),
        per_port: MAX_CONNECTIONS_PER_PORT,
        evicted: pressure.evicted,
        refused: pressure.refused,
    }
}

/// The connection to give up (among `port`'s, or all): the oldest that has made no
/// request and has no unread bytes waiting; else the one whose request body has gone
/// longest without a byte; else the one idle the longest; none while every one is
/// answering a request it has received or has one waiting to be read.
fn victim(open: &[Arc<Slot>], port: Option<u16>) -> Option<usize> {
    let candidates = || open.iter().enumerate().filter(move |(_, slot)| port.is_none_or(|port| slot.port == port));
    let never_served = || {
        // The oldest first, so a flood of idle clients costs one question per newcomer.
        let mut waiting = Vec::new();
        loop {
            let (index, slot) = candidates()
                .filter(|(index, slot)| !slot.served.load(Ordering::Relaxed) && !waiting.contains(index))
                .min_by_key(|(_, slot)| slot.admitted)?;
            if !has_unread_bytes(slot.socket) {
                return Some(index);
            }
            waiting.push(index);
        }
    };
    let body_stalled = || {
        candidates()
            .filter(|(_, slot)| slot.receiving_body.load(Ordering::Relaxed))
            .min_by_key(|(_, slot)| slot.body_progress_ms.load(Ordering::Relaxed))
            .map(|(index, _)| index)
    };
    let idle = || {
        candidates()
            .filter(|(_, slot)| slot.served.load(Ordering::Relaxed) && slot.in_flight.load(Ordering::Relaxed) == 0)
            .min_by_key(|(_, slot)| slot.idle_since_ms.load(Ordering::Relaxed))
            .map(|(index, _)| index)
    };
    never_served().or_else(body_stalled).or_else(idle)
}

/// Whether the client of `socket` sent bytes the server has not read yet.
fn has_unread_bytes(socket: RawFd) -> bool {
    let mut unread: libc::c_int = 0;
    #[allow(unsafe_code)]
    // SAFETY: FIONREAD writes one int into memory we own. The descriptor stays open while
    // its admission lives; in the instant between its close and the admission's drop it
    // may name another file, whose answer only misranks one choice.
    let status = unsafe { libc::ioctl(socket, libc::FIONREAD, &mut unread) };
    status == 0 && unread > 0
}

fn note_pressure(evicted: bool) {
    let mut pressure = registry().pressure.lock().expect("pressure poisoned");
    if evicted {
        pressure.evicted += 1;
    } else {
        pressure.refused += 1;
    }
    if pressure.logged.is_none_or(|logged| logged.elapsed() > Duration::from_secs(10)) {
        tracing::warn!(
            evicted = pressure.evicted,
            refused = pressure.refused,
            "connection limits reached: idle or slow connections are being closed"
        );
        pressure.logged = Some(Instant::now());
    }
}

fn now_ms() -> u64 {
    registry().epoch.elapsed().as_millis() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_follows_the_open_file_limit() {
        assert_eq!(budget_for(1024), 768);
        assert_eq!(budget_for(100), MIN_BUDGET);
        assert_eq!(budget_for(1 << 20), MAX_BUDGET);
    }

    #[test]
    fn a_full_port_gives_up_its_oldest_idle_connection_first() {
        // A port of its own, so other tests' connections do not count.
        let port = 1;
        let admitted: Vec<Admission> =
            (0..MAX_CONNECTIONS_PER_PORT).map(|_| Admission::admit(port, MAX_CONNECTIONS_PER_PORT, &NoSocket).unwrap()).collect();
        // All but the first two have made a request and are answering it.
        let mut guards: Vec<Option<RequestGuard>> = admitted.iter().skip(2).map(|slot| Some(slot.request_started())).collect();
        assert_eq!(open_on(port), MAX_CONNECTIONS_PER_PORT);

        // A newcomer replaces the oldest connection that never made a request.
        let newcomer = Admission::admit(port, MAX_CONNECTIONS_PER_PORT, &NoSocket).unwrap();
        assert_eq!(open_on(port), MAX_CONNECTIONS_PER_PORT);
        assert!(ready_now(admitted[0].evicted()), "the oldest idle connection is told to close");
        assert!(!ready_now(admitted[1].evicted()));

        // With every connection answering a request, newcomers take the reserved places,
        // and past those are refused.
        let _busy = (newcomer.request_started(), admitted[1].request_started());
        let reserved: Vec<(Admission, RequestGuard)> = (0..RESERVED_PER_PORT)
            .map(|_| {
                let admission = Admission::admit(port, MAX_CONNECTIONS_PER_PORT, &NoSocket).expect("a reserved place");
                let busy = admission.request_started();
                (admission, busy)
            })
            .collect();
        assert!(Admission::admit(port, MAX_CONNECTIONS_PER_PORT, &NoSocket).is_none(), "nobody to replace and no place left");

        // A connection whose request ended is idle again, and replaceable.
        guards[3] = None;
        let _later = Admission::admit(port, MAX_CONNECTIONS_PER_PORT, &NoSocket).unwrap();
        assert!(ready_now(admitted[5].evicted()), "the idle one goes");
        assert!(!ready_now(admitted[6].evicted()));
        drop(guards);
        drop(admitted);
        assert_eq!(open_on(port), 2 + reserved.len(), "the newcomer, the reserved ones and the later one");
    }

    #[test]
    fn a_body_that_stopped_arriving_gives_way_before_a_request_being_answered() {
        // Regression: 300 half-sent bodies counted as requests being answered, so a full
        // port refused every newcomer.
        let port = 2;
        let cap = 3;
        let stalled = Admission::admit(port, cap, &NoSocket).unwrap();
        let stalled_request = stalled.request_started();
        let _stalled_body = stalled_request.body_progress();
        std::thread::sleep(Duration::from_millis(5));
        let arriving = Admission::admit(port, cap, &NoSocket).unwrap();
        let arriving_request = arriving.request_started();
        let arriving_body = arriving_request.body_progress();
        let answering = Admission::admit(port, cap, &NoSocket).unwrap();
        let _answering_request = answering.request_started();
        std::thread::sleep(Duration::from_millis(5));
        arriving_body.arrived();

        let newcomer = Admission::admit(port, cap, &NoSocket).expect("the stalled body gives way");
        assert!(ready_now(stalled.evicted()), "the body that stalled longest goes");
        assert!(!ready_now(arriving.evicted()) && !ready_now(answering.evicted()));

        // A body that has arrived whole is a request being answered again: with every
        // connection answering, a newcomer takes a reserved place.
        let _newcomer_request = newcomer.request_started();
        arriving_body.done();
        let _second = Admission::admit(port, cap, &NoSocket).expect("a reserved place");
        assert!(!ready_now(arriving.evicted()) && !ready_now(newcomer.evicted()));
    }

    #[test]
    fn bodies_may_take_their_size_at_an_honest_rate() {
        assert_eq!(body_time_limit(0), BODY_STALL);
        let megabyte = body_time_limit(1_000_000);
        assert!(megabyte > Duration::from_secs(16) * 3 && megabyte < Duration::from_secs(90), "{megabyte:?}");
    }

    #[test]
    fn a_request_waiting_to_be_read_keeps_its_place_under_a_flood() {
        // Regression: reconnecting idle clients replaced a connection whose request had
        // arrived whole before its task first read it; its client got no answer.
        let port = 3;
        let cap = 2;
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let address = listener.local_addr().unwrap();
        let connect = || {
            let client = std::net::TcpStream::connect(address).unwrap();
            (client, listener.accept().unwrap().0)
        };
        let (mut asking, asked) = connect();
        let (_idle, idle) = connect();
        std::io::Write::write_all(&mut asking, b"GET /v1/health HTTP/1.1\r\n\r\n").unwrap();
        let begun = Instant::now();
        while !has_unread_bytes(asked.as_raw_fd()) {
            assert!(begun.elapsed() < Duration::from_secs(5), "the request reaches the server's socket");
            std::thread::sleep(Duration::from_millis(1));
        }
        assert!(!has_unread_bytes(idle.as_raw_fd()));

        let oldest = Admission::admit(port, cap, &asked).unwrap();
        let younger = Admission::admit(port, cap, &idle).unwrap();
        let newcomer = Admission::admit(port, cap, &NoSocket).expect("the idle one gives way");
        assert!(!ready_now(oldest.evicted()), "the oldest has a request waiting: it stays");
        assert!(ready_now(younger.evicted()));
        // With only a waiting request and one being answered, a newcomer takes a reserved
        // place.
        let _answering = newcomer.request_started();
        let _reserved = Admission::admit(port, cap, &NoSocket).expect("a reserved place");
        assert!(!ready_now(oldest.evicted()));
    }

    /// A connection without a socket (so never with bytes waiting), for the rules alone.
    struct NoSocket;

    impl AsRawFd for NoSocket {
        fn as_raw_fd(&self) -> RawFd {
            -1
        }
    }

    /// Whether a future is ready at once.
    fn ready_now(future: impl std::future::Future<Output = ()>) -> bool {
        let waker = std::task::Waker::noop();
        let mut context = std::task::Context::from_waker(waker);
        let mut future = std::pin::pin!(future);
        future.as_mut().poll(&mut context).is_ready()
    }
}
