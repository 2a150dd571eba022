//! A fake engine for unit tests: it opens and closes sessions (each with one tab), so the
//! layers above the engine can be tested in milliseconds. [`fake_engine`] has no pages: a
//! page request is refused, so a test that reaches a page by mistake fails loudly.
//!
//! [`fake_engine_with`] serves every tab with one [`FakePage`] instead, which a test
//! scripts: what the page agent answers to each operation (in each frame), while trusted
//! input and editing commands are taken, the page is quiet after every action, and prints
//! write the PDF a test gives ([`FakePage::prints`]). The page
//! records every request it got, so a test can assert what a tool asked of the engine.
//! Anything else (navigation, evaluation, screenshots, ...) is refused, and recorded.
//!
//! Both keep cookies and localStorage per data directory (a profile's sessions share
//! theirs, as in WebKit), and answer a screen scale of 1.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::agent::AgentOp;
use super::print::PrintJob;
use super::storage::{Cookie, OriginStorage, StorageRequest};
use super::{ActionSettle, Answer, Command, EditingCommand, EngineHandle, InputEvent, SessionRequest, SettleReport, TabRequest};
use crate::error::{Error, Result};

/// A handle to a fake engine without pages, served by a task on the current tokio runtime.
pub(crate) fn fake_engine() -> EngineHandle {
    serve(None)
}

/// A handle to a fake engine whose every tab is `page`.
pub(crate) fn fake_engine_with(page: FakePage) -> EngineHandle {
    serve(Some(page))
}

fn serve(page: Option<FakePage>) -> EngineHandle {
    let (engine, mut queue) = EngineHandle::channel();
    tokio::spawn(async move {
        let mut data_dirs: HashMap<String, std::path::PathBuf> = HashMap::new();
        let mut jars: HashMap<std::path::PathBuf, FakeJar> = HashMap::new();
        while let Some(queued) = queue.receiver.recv().await {
            queued.ticket.start();
            match queued.command {
                Command::Open { spec, reply } => {
                    spec.tabs.open(None, true);
                    data_dirs.insert(spec.session_id.clone(), spec.web_data_dir.clone());
                    drop(reply.send(Ok(())))
                }
                Command::Session { session_id, request: SessionRequest::Storage(request), reply } => {
                    let jar = data_dirs.get(&session_id).map(|dir| jars.entry(dir.clone()).or_default());
                    drop(reply.send(match jar {
                        Some(jar) => Ok(jar.answer(request)),
                        None => Err(Error::internal("no such session in the fake engine")),
                    }))
                }
                Command::Session { request: SessionRequest::ScreenScale, reply, .. } => drop(reply.send(Ok(Answer::Value(1.0.into())))),
                Command::Close { reply, .. } => drop(reply.send(Ok(()))),
                Command::CloseAll { reply } => drop(reply.send(())),
                Command::Page { request, reply, .. } => drop(reply.send(match &page {
                    Some(page) => page.answer(request),
                    None => Err(Error::internal("the fake engine has no pages")),
                })),
                _ => {}
            }
        }
    });
    engine
}

/// The cookies and localStorage of one data directory.
#[derive(Default)]
struct FakeJar {
    cookies: Vec<Cookie>,
    local_storage: Vec<OriginStorage>,
}

impl FakeJar {
    fn answer(&mut self, request: StorageRequest) -> Answer {
        match request {
            StorageRequest::Cookies => return Answer::Value(serde_json::json!(self.cookies)),
            StorageRequest::AddCookies(cookies) => {
                for cookie in cookies {
                    self.cookies.retain(|kept| !kept.same_as(&cookie));
                    self.cookies.push(cookie);
                }
            }
            StorageRequest::DeleteCookies(cookies) => self.cookies.retain(|kept| !cookies.iter().any(|cookie| cookie.same_as(kept))),
            StorageRequest::ClearCookies => self.cookies.clear(),
            StorageRequest::ReadLocalStorage(origins) => {
                let read: Vec<&OriginStorage> =
                    self.local_storage.iter().filter(|kept| origins.contains(&kept.origin) && !kept.local_storage.is_empty()).collect();
                return Answer::Value(serde_json::json!(read));
            }
            StorageRequest::WriteLocalStorage(origins) => {
                for entry in origins {
                    let index = match self.local_storage.iter().position(|kept| kept.origin == entry.origin) {
                        Some(index) => index,
                        None => {
                            self.local_storage.push(OriginStorage { origin: entry.origin.clone(), local_storage: Vec::new() });
                            self.local_storage.len() - 1
                        }
                    };
                    let kept = &mut self.local_storage[index].local_storage;
                    for item in entry.local_storage {
                        kept.retain(|old| old.name != item.name);
                        kept.push(item);
                    }
                }
            }
        }
        Answer::Done
    }
}

/// What a scripted page agent operation answers, given the frame path (empty = main frame)
/// and the arguments the tool sent: the agent's result, or the error the engine would give.
pub(crate) type AgentScript = Box<dyn FnMut(&[u32], &Value) -> Result<Value> + Send>;

/// A request the fake page got.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Asked {
    /// A page agent operation in a frame.
    Agent { frame: Vec<u32>, op: AgentOp, args: Value },
    /// Trusted input events (an empty list: the "let focus settle" call before a locate).
    Input(Vec<InputEvent>),
    /// An editing command.
    Editing(EditingCommand),
    /// A print to PDF.
    Print(PrintJob),
    /// Anything else, by the request's name (`after_action`, `screenshot`, ...).
    Other(&'static str),
}

/// The page of [`fake_engine_with`]: a script of page agent answers and the record of what
/// was asked. Clones share both. A script runs with the page locked: it must not call the
/// page itself.
#[derive(Clone, Default)]
pub(crate) struct FakePage(Arc<Mutex<PageState>>);

#[derive(Default)]
struct PageState {
    scripts: HashMap<&'static str, AgentScript>,
    asked: Vec<Asked>,
    /// What a print writes to its output file; `None`: prints are refused.
    printed: Option<Vec<u8>>,
}

impl FakePage {
    /// A page whose agent answers nothing yet.
    pub(crate) fn new() -> FakePage {
        FakePage::default()
    }

    /// Scripts what the agent answers to `op` (replacing an earlier script of it); an
    /// operation without a script is refused.
    pub(crate) fn on(&self, op: AgentOp, script: impl FnMut(&[u32], &Value) -> Result<Value> + Send + 'static) -> &FakePage {
        self.state().scripts.insert(op.name(), Box::new(script));
        self
    }

    /// Prints answer by writing `pdf` to the job's output file.
    pub(crate) fn prints(&self, pdf: Vec<u8>) -> &FakePage {
        self.state().printed = Some(pdf);
        self
    }

    /// Everything asked so far, in order.
    pub(crate) fn asked(&self) -> Vec<Asked> {
        self.state().asked.clone()
    }

    /// The calls of one agent operation so far: (frame path, arguments).
    pub(crate) fn calls_of(&self, op: AgentOp) -> Vec<(Vec<u32>, Value)> {
        let state = self.state();
        let calls = state.asked.iter().filter_map(|asked| match asked {
            Asked::Agent { frame, op: asked_op, args } if *asked_op == op => Some((frame.clone(), args.clone())),
            _ => None,
        });
        calls.collect()
    }

    /// Every trusted input event delivered so far, in order.
    pub(crate) fn input_events(&self) -> Vec<InputEvent> {
        let state = self.state();
        let events = state.asked.iter().filter_map(|asked| match asked {
            Asked::Input(events) => Some(events.clone()),
            _ => None,
        });
        events.flatten().collect()
    }

    fn state(&self) -> std::sync::MutexGuard<'_, PageState> {
        self.0.lock().expect("fake page poisoned")
    }

    fn answer(&self, request: TabRequest) -> Result<Answer> {
        let mut state = self.state();
        match request {
            TabRequest::Agent { frame, op, args } => {
                state.asked.push(Asked::Agent { frame: frame.clone(), op, args: args.clone() });
                let script = state
                    .scripts
                    .get_mut(op.name())
                    .ok_or_else(|| Error::internal(format!("the fake page has no script for {}", op.name())))?;
                script(&frame, &args).map(Answer::Value)
            }
            TabRequest::Input { events } => {
                state.asked.push(Asked::Input(events));
                Ok(Answer::Mark(0))
            }
            TabRequest::Editing { command } => {
                state.asked.push(Asked::Editing(command));
                Ok(Answer::Mark(0))
            }
            TabRequest::Print(job) => {
                let printed = state.printed.clone();
                state.asked.push(Asked::Print(job.clone()));
                let pdf = printed.ok_or_else(|| Error::internal("the fake page does not answer print"))?;
                std::fs::write(&job.output, pdf).map_err(|error| Error::internal(error.to_string()))?;
                Ok(Answer::Done)
            }
            TabRequest::AfterAction { .. } => {
                state.asked.push(Asked::Other("after_action"));
                Ok(Answer::Settle(ActionSettle { navigated: false, navigation: None, settle: SettleReport::default() }))
            }
            other => {
                let kind = other.kind();
                state.asked.push(Asked::Other(kind));
                Err(Error::internal(format!("the fake page does not answer {kind}")))
            }
        }
    }
}

/// A script that answers `answers` in turn, then the last one to every later call.
pub(crate) fn in_turn(answers: impl IntoIterator<Item = Value>) -> impl FnMut(&[u32], &Value) -> Result<Value> + Send + 'static {
    let answers: Vec<Value> = answers.into_iter().collect();
    assert!(!answers.is_empty(), "in_turn needs at least one answer");
    let mut next = 0;
    move |_, _| {
        let answer = answers[next.min(answers.len() - 1)].clone();
        next += 1;
        Ok(answer)
    }
}
