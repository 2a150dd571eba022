//! malo-browser's GTK-free core: what every other part of the product speaks (the error
//! vocabulary, time, tokens, the event log and its kinds, the key grammar, the picture
//! pipeline of screenshots) with no engine, no HTTP and no GTK below it, so that its unit
//! tests build and run in about a second.
//! The app crate re-exports each module under its old path (`crate::error`, ...).

pub mod clock;
pub mod error;
pub mod events;
pub mod imaging;
pub mod keys;
pub mod secret;
