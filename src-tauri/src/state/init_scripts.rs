//! A session's init scripts (`init_script`): scripts every new document of its tabs runs
//! in the page's own world before the page's scripts, in every frame. The tool keeps the
//! list here; the engine gives each tab the scripts listed when it opens the tab (popups
//! too) and makes an open tab's scripts match the list when the tool asks.

use std::sync::Mutex;

/// The largest script taken (bytes).
pub const INIT_SCRIPT_MAX_BYTES: usize = 256 * 1024;
/// At most this many scripts per session.
pub const INIT_SCRIPTS_MAX: usize = 32;

/// One init script.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InitScript {
    /// Its id in the session (from 1, never reused).
    pub id: u64,
    /// Its source.
    pub source: String,
}

/// The session's init scripts, in the order they were added (and run).
#[derive(Debug, Default)]
pub struct InitScripts {
    // A std mutex: a short list, copied out, never held across an await.
    state: Mutex<(u64, Vec<InitScript>)>,
}

impl InitScripts {
    /// Adds a script; answers its id, or `None` when the session holds the most it may.
    pub fn add(&self, source: String) -> Option<u64> {
        let mut state = self.state.lock().expect("init scripts poisoned");
        if state.1.len() >= INIT_SCRIPTS_MAX {
            return None;
        }
        state.0 += 1;
        let id = state.0;
        state.1.push(InitScript { id, source });
        Some(id)
    }

    /// Removes a script; answers whether it was there.
    pub fn remove(&self, id: u64) -> bool {
        let mut state = self.state.lock().expect("init scripts poisoned");
        let before = state.1.len();
        state.1.retain(|script| script.id != id);
        state.1.len() != before
    }

    /// The scripts now, in order.
    pub fn list(&self) -> Vec<InitScript> {
        self.state.lock().expect("init scripts poisoned").1.clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_never_reused_and_the_list_keeps_its_order() {
        let scripts = InitScripts::default();
        assert_eq!(scripts.add("a".into()), Some(1));
        assert_eq!(scripts.add("b".into()), Some(2));
        assert!(scripts.remove(1));
        assert!(!scripts.remove(1));
        assert_eq!(scripts.add("c".into()), Some(3));
        let ids: Vec<u64> = scripts.list().iter().map(|script| script.id).collect();
        assert_eq!(ids, vec![2, 3]);
        for _ in 2..INIT_SCRIPTS_MAX {
            scripts.add("x".into()).unwrap();
        }
        assert_eq!(scripts.add("full".into()), None);
    }
}
