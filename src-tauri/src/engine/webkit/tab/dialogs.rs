//! JavaScript dialogs (alert, confirm, prompt, beforeunload) never block a hidden page:
//! each is answered at once by the tab's dialog policy (or the default for its kind) and
//! recorded as a `dialog` event.

use webkit2gtk::{ScriptDialogType, WebViewExt};

use super::Tab;
use crate::events::EventKind;
use crate::state::{DialogPolicy, TabSignal};

/// Connects the dialog signal of `tab`'s view.
pub(super) fn connect(tab: &Tab) {
    let view = &tab.view;
    // JavaScript dialogs never block: answered at once by the policy, and recorded.
    let (events, tab_id, state) = (tab.events.clone(), tab.id.clone(), tab.state.clone());
    view.connect_script_dialog(move |_view, dialog| {
        let current = {
            let mut policy = state.dialog_policy.lock().expect("dialog policy poisoned");
            let current = policy.clone();
            if !current.persist {
                *policy = DialogPolicy::default();
            }
            current
        };
        let kind = dialog.dialog_type();
        let accept = current.accept.unwrap_or(matches!(kind, ScriptDialogType::Alert | ScriptDialogType::BeforeUnloadConfirm));
        let prompt_text = match kind {
            ScriptDialogType::Confirm | ScriptDialogType::BeforeUnloadConfirm => {
                dialog.confirm_set_confirmed(accept);
                None
            }
            ScriptDialogType::Prompt if accept => {
                let text =
                    current.prompt_text.or_else(|| dialog.prompt_get_default_text().map(|text| text.to_string())).unwrap_or_default();
                dialog.prompt_set_text(&text);
                Some(text)
            }
            _ => None,
        };
        let dialog_type = match kind {
            ScriptDialogType::Alert => "alert",
            ScriptDialogType::Confirm => "confirm",
            ScriptDialogType::Prompt => "prompt",
            ScriptDialogType::BeforeUnloadConfirm => "beforeunload",
            _ => "unknown",
        };
        let message = dialog.message().map(|message| message.to_string()).unwrap_or_default();
        let default_prompt =
            (kind == ScriptDialogType::Prompt).then(|| dialog.prompt_get_default_text().map(|text| text.to_string())).flatten();
        state.signal(TabSignal::Dialog {
            dialog_type,
            message: message.clone(),
            accepted: accept,
            prompt_text: prompt_text.clone(),
            default_prompt,
        });
        let answered = EventKind::Dialog {
            dialog_type,
            message,
            action: if accept { "accept" } else { "dismiss" },
            policy: if current.accept.is_some() { "set" } else { "default" },
            prompt_text,
        };
        events.push(Some(&tab_id), answered);
        true
    });
}
