//! A fake engine for unit tests: it opens and closes sessions (each with one tab) and has
//! no pages, so the layers above the engine can be tested in milliseconds. A page request
//! is refused, so a test that reaches a page by mistake fails loudly.

use super::{Command, EngineHandle};
use crate::error::Error;

/// A handle to a fake engine served by a task on the current tokio runtime.
pub(crate) fn fake_engine() -> EngineHandle {
    let (engine, mut queue) = EngineHandle::channel();
    tokio::spawn(async move {
        while let Some(queued) = queue.receiver.recv().await {
            queued.ticket.start();
            match queued.command {
                Command::Open { spec, reply } => {
                    spec.tabs.open(None, true);
                    drop(reply.send(Ok(())))
                }
                Command::Close { reply, .. } => drop(reply.send(Ok(()))),
                Command::CloseAll { reply } => drop(reply.send(())),
                Command::Page { reply, .. } => drop(reply.send(Err(Error::internal("the fake engine has no pages")))),
                _ => {}
            }
        }
    });
    engine
}
