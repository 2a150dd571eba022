//! What the inputs of actions share, declared once: `ref` and `selector` (the element an
//! action is aimed at), `x` and `y` (the point a pointer action may aim at instead) and
//! `settle_ms` and `timeout_ms` (how long it waits). Each action's input is written with
//! [`action_input!`], which adds these fields to the action's own; its struct is made by
//! [`input_with_waits!`], which also makes navigate's and history's (with a navigation's
//! waits).
//!
//! A macro rather than `#[serde(flatten)]` of shared structs: with flatten, serde's
//! "unknown field" error no longer lists the fields an input accepts (the list tells an
//! agent what it may send), and serde documents flatten as unsupported together with
//! `deny_unknown_fields`, which every input uses.

use std::time::Duration;

use super::limits::{ACTIONABLE_TIMEOUT_MS, ACTION_SETTLE_MS};
use crate::error::Result;

/// How long an action waits: for its element to become actionable, then for what it caused.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ActionWaits {
    /// Upper bound for the wait for what the action caused (`settle_ms`).
    pub(crate) settle: Duration,
    /// Upper bound for the wait for the element to be actionable (`timeout_ms`).
    pub(crate) actionable: Duration,
}

impl ActionWaits {
    /// Reads `settle_ms` and `timeout_ms` (in this order: the first refused is the error).
    pub(crate) fn read(settle_ms: Option<u64>, timeout_ms: Option<u64>) -> Result<ActionWaits> {
        let settle = ACTION_SETTLE_MS.millis(settle_ms, "settle_ms")?;
        let actionable = ACTIONABLE_TIMEOUT_MS.millis(timeout_ms, "timeout_ms")?;
        Ok(ActionWaits { settle, actionable })
    }
}

/// Defines an action's input struct: its own fields, then `settle_ms` and `timeout_ms`
/// (and with `aimed_at_element`, `ref` and `selector` before them; with
/// `aimed_at_element_or_point`, also `x` and `y` before its own), strictly parsed. The
/// struct gets `waits()` and, when aimed at an element, `element()`; at a point, `point()`.
macro_rules! action_input {
    ($(#[$meta:meta])* $name:ident aimed_at_element_or_point { $($own:tt)* }) => {
        action_input! {
            $(#[$meta])*
            $name aimed_at_element {
                /// Or a point in the viewport (CSS px), with `y`.
                #[serde(default)]
                x: Option<f64>,
                /// Or a point in the viewport (CSS px), with `x`.
                #[serde(default)]
                y: Option<f64>,
                $($own)*
            }
        }

        impl $name {
            /// The point the input names (`x`, `y`), as far as it names one.
            fn point(&self) -> (Option<f64>, Option<f64>) {
                (self.x, self.y)
            }
        }
    };
    ($(#[$meta:meta])* $name:ident aimed_at_element { $($own:tt)* }) => {
        action_input! {
            $(#[$meta])*
            $name {
                $($own)*
                /// The element: a ref from snapshot (e.g. e12).
                #[serde(default, rename = "ref")]
                element_ref: Option<String>,
                /// The element: a CSS selector (` >>> ` pierces open shadow roots).
                #[serde(default)]
                selector: Option<String>,
                /// The element: a locator, as `find` takes it (`{"role": "button", "name": "Save"}`).
                #[serde(default)]
                locator: Option<$crate::tools::find::Locator>,
            }
        }

        impl $name {
            /// The element the input names (none of `ref`, `selector`, `locator` when none is given).
            fn element(&self) -> $crate::tools::targeting::ElementTarget {
                $crate::tools::targeting::ElementTarget {
                    element_ref: self.element_ref.clone(),
                    selector: self.selector.clone(),
                    locator: self.locator.clone().map(Box::new),
                }
            }
        }
    };
    ($(#[$meta:meta])* $name:ident { $($own:tt)* }) => {
        $crate::tools::action_input::input_with_waits! {
            $(#[$meta])*
            $name { $($own)* }
            /// Upper bound in ms for waiting for what the action caused (navigation, dialogs,
            /// popups, DOM quiet) (default 1500, max 30000).
            settle_ms: ACTION_SETTLE_MS,
            /// How long to wait for the element to be actionable (visible, stable, enabled, not
            /// covered) in ms (default 5000, max 120000).
            timeout_ms: ACTIONABLE_TIMEOUT_MS,
        }

        impl $name {
            /// How long the action waits, from `settle_ms` and `timeout_ms`.
            fn waits(&self) -> $crate::error::Result<$crate::tools::action_input::ActionWaits> {
                $crate::tools::action_input::ActionWaits::read(self.settle_ms, self.timeout_ms)
            }
        }
    };
}

pub(crate) use action_input;

/// Defines a strictly parsed input whose last fields are two waits, `settle_ms` and
/// `timeout_ms`, each with its description and the bound in `limits.rs` its schema names:
/// what [`action_input!`] makes with the actions' waits, and navigate's `load_input!` with
/// a navigation's.
macro_rules! input_with_waits {
    (
        $(#[$meta:meta])* $name:ident { $($own:tt)* }
        $(#[$settle_doc:meta])* settle_ms: $settle:ident,
        $(#[$timeout_doc:meta])* timeout_ms: $timeout:ident,
    ) => {
        $(#[$meta])*
        #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
        #[serde(deny_unknown_fields)]
        pub(crate) struct $name {
            $($own)*
            $(#[$settle_doc])*
            #[serde(default)]
            #[schemars(range(max = $crate::tools::limits::$settle.max))]
            settle_ms: Option<u64>,
            $(#[$timeout_doc])*
            #[serde(default)]
            #[schemars(range(max = $crate::tools::limits::$timeout.max))]
            timeout_ms: Option<u64>,
        }
    };
}

pub(crate) use input_with_waits;
