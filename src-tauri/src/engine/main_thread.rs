//! How the GTK main thread is doing: every engine command runs there, so a command that
//! holds it (a long synchronous step) delays every session's calls. Measured three ways:
//! how long each command waited in the queue before it started; how late a heartbeat on
//! the main thread fires (a stall, whatever caused it); and which commands held the
//! thread the longest in one step. `GET /v1/stats` and the benchmark report them.
//!
//! Engine time limits are counted in time the main thread was available
//! ([`MainThread::available_since`]): a page is not blamed for the engine's own stall.

use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use serde::Serialize;

/// How often the heartbeat ticks on the main thread.
pub const HEARTBEAT: Duration = Duration::from_millis(50);
/// Recent samples kept for percentiles.
const KEPT: usize = 20_000;

/// Shared between the async side (which queues commands and reads figures) and the main
/// thread (which records them).
#[derive(Debug)]
pub struct MainThread {
    epoch: Instant,
    /// Milliseconds (since `epoch`) of the last heartbeat.
    last_beat_ms: AtomicU64,
    /// Sum of every heartbeat's lateness: time the main thread was not available.
    stalled_ms: AtomicU64,
    figures: Mutex<Figures>,
}

#[derive(Debug, Default)]
struct Figures {
    queue_waits: Samples,
    stalls: Samples,
    /// The longest single step (one poll) of each kind of command.
    steps: HashMap<&'static str, Steps>,
}

#[derive(Debug, Default)]
struct Steps {
    commands: u64,
    longest_ms: f64,
    over_50ms: u64,
}

/// Recent values, in ms.
#[derive(Debug, Default)]
struct Samples {
    recent: VecDeque<f64>,
    count: u64,
    max: f64,
}

impl Samples {
    fn add(&mut self, value: f64) {
        if self.recent.len() == KEPT {
            self.recent.pop_front();
        }
        self.recent.push_back(value);
        self.count += 1;
        self.max = self.max.max(value);
    }

    fn summary(&self) -> Summary {
        let mut sorted: Vec<f64> = self.recent.iter().copied().collect();
        sorted.sort_by(f64::total_cmp);
        let at = |quantile: f64| {
            if sorted.is_empty() {
                return 0.0;
            }
            let index = ((sorted.len() as f64 - 1.0) * quantile).round() as usize;
            round(sorted[index])
        };
        Summary { count: self.count, p50_ms: at(0.5), p99_ms: at(0.99), max_ms: round(self.max) }
    }
}

/// Percentiles of a set of durations.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
pub struct Summary {
    /// How many were measured (percentiles cover the most recent 20,000).
    pub count: u64,
    /// Median, ms.
    pub p50_ms: f64,
    /// 99th percentile, ms.
    pub p99_ms: f64,
    /// Longest, ms.
    pub max_ms: f64,
}

/// One kind of command's longest hold on the main thread.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Hold {
    /// The command (`navigate`, `agent:snapshot`, `open`, ...).
    pub command: &'static str,
    /// How many ran.
    pub commands: u64,
    /// The longest single step, ms.
    pub longest_ms: f64,
    /// Steps that held the thread more than 50 ms.
    pub over_50ms: u64,
}

/// What `GET /v1/stats` says of the main thread.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct MainThreadReport {
    /// How long commands waited before they started.
    pub queue_wait: Summary,
    /// How late the heartbeat fired (every 50 ms): the thread's stalls.
    pub stall: Summary,
    /// Time the thread was unavailable in all, ms.
    pub stalled_total_ms: u64,
    /// The commands that held the thread the longest in one step, longest first.
    pub longest_holds: Vec<Hold>,
}

impl Default for MainThread {
    fn default() -> Self {
        MainThread { epoch: Instant::now(), last_beat_ms: AtomicU64::new(0), stalled_ms: AtomicU64::new(0), figures: Mutex::default() }
    }
}

impl MainThread {
    fn now_ms(&self) -> u64 {
        self.epoch.elapsed().as_millis() as u64
    }

    /// A heartbeat fired `late` after it was due.
    pub fn beat(&self, late: Duration) {
        // 0 means "no beat yet".
        self.last_beat_ms.store(self.now_ms().max(1), Ordering::Relaxed);
        let late_ms = late.as_secs_f64() * 1000.0;
        self.stalled_ms.fetch_add(late.as_millis() as u64, Ordering::Relaxed);
        self.figures.lock().expect("figures poisoned").stalls.add(late_ms);
    }

    /// A command started after waiting `waited` in the queue.
    pub fn started(&self, waited: Duration) {
        self.figures.lock().expect("figures poisoned").queue_waits.add(waited.as_secs_f64() * 1000.0);
    }

    /// A command of `kind` ended; its longest step held the thread `longest`.
    pub fn ended(&self, kind: &'static str, longest: Duration) {
        let mut figures = self.figures.lock().expect("figures poisoned");
        let steps = figures.steps.entry(kind).or_default();
        steps.commands += 1;
        let longest_ms = longest.as_secs_f64() * 1000.0;
        steps.longest_ms = steps.longest_ms.max(longest_ms);
        if longest_ms > 50.0 {
            steps.over_50ms += 1;
        }
    }

    /// A mark to measure main-thread availability from.
    pub fn mark(&self) -> AvailabilityMark {
        AvailabilityMark { begun: Instant::now(), stalled_ms: self.stalled_ms.load(Ordering::Relaxed) }
    }

    /// Time since `mark` during which the main thread was available (wall time less the
    /// stalls the heartbeat saw, and less a stall going on now).
    pub fn available_since(&self, mark: &AvailabilityMark) -> Duration {
        let stalled = self.stalled_ms.load(Ordering::Relaxed).saturating_sub(mark.stalled_ms) + self.current_stall_ms();
        mark.begun.elapsed().saturating_sub(Duration::from_millis(stalled))
    }

    /// How long the main thread has gone without a heartbeat beyond the usual interval.
    fn current_stall_ms(&self) -> u64 {
        let last = self.last_beat_ms.load(Ordering::Relaxed);
        if last == 0 {
            return 0;
        }
        self.now_ms().saturating_sub(last).saturating_sub(HEARTBEAT.as_millis() as u64)
    }

    /// The figures so far.
    pub fn report(&self) -> MainThreadReport {
        let figures = self.figures.lock().expect("figures poisoned");
        let mut longest_holds: Vec<Hold> = figures
            .steps
            .iter()
            .map(|(command, steps)| Hold {
                command,
                commands: steps.commands,
                longest_ms: round(steps.longest_ms),
                over_50ms: steps.over_50ms,
            })
            .collect();
        longest_holds.sort_by(|a, b| b.longest_ms.total_cmp(&a.longest_ms));
        longest_holds.truncate(10);
        MainThreadReport {
            queue_wait: figures.queue_waits.summary(),
            stall: figures.stalls.summary(),
            stalled_total_ms: self.stalled_ms.load(Ordering::Relaxed) + self.current_stall_ms(),
            longest_holds,
        }
    }
}

/// Where main-thread availability is counted from.
#[derive(Debug, Clone, Copy)]
pub struct AvailabilityMark {
    begun: Instant,
    stalled_ms: u64,
}

/// A command on its way to the main thread: when it was sent, and whether it has started
/// (a command whose caller gave up before it started is dropped unstarted).
#[derive(Debug, Default)]
pub struct Ticket {
    started: AtomicBool,
    abandoned: AtomicBool,
}

impl Ticket {
    /// Marks the start; false if the caller has given up already (skip the command).
    pub fn start(&self) -> bool {
        self.started.store(true, Ordering::SeqCst);
        !self.abandoned.load(Ordering::SeqCst)
    }

    /// The caller gives up; true if the command had not started (and now never will).
    pub fn abandon(&self) -> bool {
        self.abandoned.store(true, Ordering::SeqCst);
        !self.started.load(Ordering::SeqCst)
    }
}

/// A future whose every step (poll) is timed; on completion it reports its longest.
pub struct Timed<F> {
    inner: Pin<Box<F>>,
    kind: &'static str,
    longest: Duration,
    thread: Arc<MainThread>,
}

impl<F: Future> Timed<F> {
    /// Wraps `inner`, a command of `kind`.
    pub fn new(inner: F, kind: &'static str, thread: Arc<MainThread>) -> Timed<F> {
        Timed { inner: Box::pin(inner), kind, longest: Duration::ZERO, thread }
    }
}

impl<F: Future> Future for Timed<F> {
    type Output = F::Output;

    fn poll(mut self: Pin<&mut Self>, context: &mut Context<'_>) -> Poll<F::Output> {
        let begun = Instant::now();
        let polled = self.inner.as_mut().poll(context);
        let step = begun.elapsed();
        if step > self.longest {
            self.longest = step;
        }
        if polled.is_ready() {
            self.thread.ended(self.kind, self.longest);
        }
        polled
    }
}

fn round(value: f64) -> f64 {
    (value * 10.0).round() / 10.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_and_holds_are_reported() {
        let thread = MainThread::default();
        for wait in 1..=100 {
            thread.started(Duration::from_millis(wait));
        }
        thread.ended("navigate", Duration::from_millis(80));
        thread.ended("navigate", Duration::from_millis(10));
        thread.ended("open", Duration::from_millis(120));
        let report = thread.report();
        assert_eq!(report.queue_wait.count, 100);
        assert_eq!(report.queue_wait.p50_ms, 51.0);
        assert_eq!(report.queue_wait.p99_ms, 99.0);
        assert_eq!(report.queue_wait.max_ms, 100.0);
        assert_eq!(report.longest_holds[0], Hold { command: "open", commands: 1, longest_ms: 120.0, over_50ms: 1 });
        assert_eq!(report.longest_holds[1], Hold { command: "navigate", commands: 2, longest_ms: 80.0, over_50ms: 1 });
    }

    #[test]
    fn a_stall_is_not_counted_as_available_time() {
        let thread = MainThread::default();
        thread.beat(Duration::ZERO);
        let mark = thread.mark();
        std::thread::sleep(Duration::from_millis(30));
        thread.beat(Duration::from_millis(400));
        let available = thread.available_since(&mark);
        assert_eq!(available, Duration::ZERO, "400 ms of stall outweigh 30 ms of wall time");
    }

    #[test]
    fn a_ticket_is_either_started_or_abandoned() {
        let ticket = Ticket::default();
        assert!(ticket.abandon(), "not started yet: abandoned for good");
        assert!(!ticket.start(), "a late start is skipped");
        let ticket = Ticket::default();
        assert!(ticket.start());
        assert!(!ticket.abandon(), "already running: the caller must wait or time out");
    }
}
