//! Interactive calls first: while an agent waits on an interactive call (a click, a
//! snapshot: any page tool but those that load pages or wait for a person), every other
//! tab's web process keeps off one CPU, which is left to the daemon's threads and to the
//! pages that call is about.
//!
//! All sessions share the machine's cores and the daemon's one main thread. A page's work
//! already runs 10 nice steps behind the daemon (the web-process extension), but among
//! pages every one is equal, so on 2 cores a click waits behind 16 pages reloading a large
//! document. A nice value can only be lowered for good; affinity can be given back, so a
//! page that yields now is served at full speed when its own agent asks (`bench busy`
//! measures it). The pages learn their part through the extension (`malo:cpu`), which
//! applies it to its process's threads; one CPU of many is all they give up, and only
//! while some other call is waiting.
//!
//! [`CpuShare::serve`] marks a call's tab for as long as the call runs; the engine is told
//! the served set whenever it changes, and the pages get their CPUs back [`GRACE`] after the
//! last call ends (an agent's next call in a script or `run_steps` follows within that, and
//! the pages are not told again).

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::TabAddress;

/// How long after the last interactive call ends the other pages get all CPUs back.
pub const GRACE: Duration = Duration::from_millis(50);

/// Sends the engine the tabs being served now (empty: every page shares all CPUs again).
pub type Announce = Box<dyn Fn(Vec<TabAddress>) + Send + Sync>;

/// The tabs whose interactive calls are running, daemon-wide.
pub struct CpuShare {
    state: Mutex<State>,
    announce: Announce,
}

impl std::fmt::Debug for CpuShare {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.debug_struct("CpuShare").finish_non_exhaustive()
    }
}

#[derive(Default)]
struct State {
    /// Each served tab and how many of its calls run.
    served: HashMap<TabAddress, usize>,
    /// The served tabs the pages were last told of (empty: all share).
    told: HashSet<TabAddress>,
    /// Counts changes, so that a release scheduled before a newer call starts does nothing.
    generation: u64,
}

impl CpuShare {
    pub fn new(announce: Announce) -> Arc<CpuShare> {
        Arc::new(CpuShare { state: Mutex::default(), announce })
    }

    /// Marks `tab` served until the guard drops.
    pub fn serve(self: &Arc<Self>, tab: TabAddress) -> Served {
        let mut state = self.lock();
        state.generation += 1;
        *state.served.entry(tab.clone()).or_default() += 1;
        self.tell(&mut state);
        Served { share: self.clone(), tab: Some(tab) }
    }

    /// Tells the engine the served tabs, unless it knows them already (the same tab's
    /// next call within the grace changes nothing).
    fn tell(&self, state: &mut State) {
        if state.served.len() != state.told.len() || state.served.keys().any(|tab| !state.told.contains(tab)) {
            state.told = state.served.keys().cloned().collect();
            (self.announce)(state.told.iter().cloned().collect());
        }
    }

    fn end(self: &Arc<Self>, tab: TabAddress) {
        let mut state = self.lock();
        state.generation += 1;
        let Some(count) = state.served.get_mut(&tab) else { return };
        *count -= 1;
        if *count > 0 {
            return;
        }
        state.served.remove(&tab);
        if !state.served.is_empty() {
            self.tell(&mut state);
            return;
        }
        // The last one: the others get their CPUs back unless a call follows soon.
        let generation = state.generation;
        let share = self.clone();
        let release = move || {
            let mut state = share.lock();
            if state.generation == generation && !state.told.is_empty() {
                state.told.clear();
                (share.announce)(Vec::new());
            }
        };
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(async move {
                    tokio::time::sleep(GRACE).await;
                    release();
                });
            }
            Err(_) => release(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// An interactive call's mark on its tab.
#[derive(Debug)]
pub struct Served {
    share: Arc<CpuShare>,
    tab: Option<TabAddress>,
}

impl Drop for Served {
    fn drop(&mut self) {
        if let Some(tab) = self.tab.take() {
            self.share.end(tab);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What the engine was told, each time: the served tabs as `session/tab`.
    type Told = Arc<Mutex<Vec<Vec<String>>>>;

    fn recorder() -> (Arc<CpuShare>, Told) {
        let told = Arc::new(Mutex::new(Vec::new()));
        let record = told.clone();
        let share = CpuShare::new(Box::new(move |served: Vec<TabAddress>| {
            let mut tabs: Vec<String> = served.into_iter().map(|address| format!("{}/{}", address.session_id, address.tab)).collect();
            tabs.sort();
            record.lock().unwrap().push(tabs);
        }));
        (share, told)
    }

    fn tab(session: &str, tab: &str) -> TabAddress {
        TabAddress { session_id: session.into(), tab: tab.into() }
    }

    #[tokio::test(start_paused = true)]
    async fn pages_yield_while_a_call_runs_and_get_their_cpus_back_after_the_grace() {
        let (share, told) = recorder();
        let first = share.serve(tab("a", "t1"));
        let second = share.serve(tab("b", "t1"));
        // A second call on a served tab changes nothing.
        let again = share.serve(tab("a", "t1"));
        drop(again);
        drop(first);
        assert_eq!(*told.lock().unwrap(), vec![vec!["a/t1"], vec!["a/t1", "b/t1"], vec!["b/t1"]]);
        drop(second);
        tokio::time::sleep(GRACE / 2).await;
        assert_eq!(told.lock().unwrap().len(), 3, "nothing is given back within the grace");
        tokio::time::sleep(GRACE).await;
        assert_eq!(told.lock().unwrap().last().unwrap(), &Vec::<String>::new());
    }

    #[tokio::test(start_paused = true)]
    async fn a_call_within_the_grace_keeps_the_pages_yielding() {
        let (share, told) = recorder();
        drop(share.serve(tab("a", "t1")));
        tokio::time::sleep(GRACE / 2).await;
        let next = share.serve(tab("a", "t1"));
        tokio::time::sleep(GRACE * 2).await;
        assert_eq!(*told.lock().unwrap(), vec![vec!["a/t1"]], "the first release was called off, and nothing new told");
        drop(next);
        tokio::time::sleep(GRACE * 2).await;
        assert_eq!(*told.lock().unwrap(), vec![vec!["a/t1"], vec![]]);
    }
}
