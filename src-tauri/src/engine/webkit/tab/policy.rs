//! What a hidden page may not do on its own: start a native drag (it would grab the
//! person's pointer), show a file chooser (a GTK dialog on the person's screen) or a
//! select's option menu (a popup there), get a permission, or navigate a frame to a scheme pages may not open. Attachments and what a
//! browser cannot show become downloads, announced so the call that loaded them waits.

use gtk::prelude::*;
use webkit2gtk::{
    FileChooserRequestExt, NavigationPolicyDecision, NavigationPolicyDecisionExt, OptionMenuExt, PermissionRequestExt, PolicyDecisionExt,
    PolicyDecisionType, ResponsePolicyDecision, ResponsePolicyDecisionExt, URIRequestExt, URIResponseExt, WebViewExt,
};

use super::{FileInputClicked, Tab};
use crate::engine::identity::Permission;
use crate::events::{BlockReason, EventKind};

/// Connects the policy signals of `tab`'s view.
pub(super) fn connect(tab: &Tab) {
    let view = &tab.view;
    // A native drag (of a selection, say) works on the real screen's pointer and would
    // grab the person's mouse: never from a hidden page. (The drag tool plays HTML5
    // drags in the page instead.) A person in the takeover window drags as usual.
    let (takeover, events, tab_id) = (tab.takeover.clone(), tab.events.clone(), tab.id.clone());
    view.connect_drag_begin(move |_, context| {
        if takeover.window.borrow().is_none() {
            // Once WebKit has set the drag icon, so that cancelling also takes it down.
            let context = context.clone();
            glib::idle_add_local_once(move || context.drag_cancel());
            events.push(Some(&tab_id), EventKind::NativeDragCancelled {});
        }
    });

    // A file chooser would map a GTK dialog on the person's screen: never from a hidden
    // page. It is cancelled and recorded, so the agent can set the files itself.
    let (events, tab_id, chooser, changed) = (tab.events.clone(), tab.id.clone(), tab.chooser.clone(), tab.load_changed.clone());
    let clicked = tab.file_input_clicked.clone();
    view.connect_run_file_chooser(move |_view, request| {
        // WebKit hands over only the MIME types of the accept list (extensions such as
        // `.txt` are dropped): the page's own list comes from the input just clicked.
        let mime_types: Vec<String> = request.mime_types().iter().map(|mime| mime.to_string()).collect();
        let written = clicked.borrow_mut().take().filter(|input| input.when.elapsed() < FileInputClicked::FRESH);
        let accept = written.map(|input| input.accept).unwrap_or_else(|| mime_types.clone());
        let file_count = match chooser.borrow_mut().take() {
            Some(files) => {
                let paths: Vec<&str> = files.iter().map(String::as_str).collect();
                request.select_files(&paths);
                Some(files.len())
            }
            None => {
                request.cancel();
                None
            }
        };
        let event =
            EventKind::FileChooser { multiple: request.selects_multiple(), accept, mime_types, answered: file_count.is_some(), file_count };
        events.push(Some(&tab_id), event);
        changed.notify_waiters();
        true
    });

    // A <select>'s option list is a GTK popup menu on the person's screen: never from a
    // hidden page (the select tool chooses options without it). A person in the takeover
    // window gets the menu as usual.
    let takeover = tab.takeover.clone();
    view.connect_show_option_menu(move |_view, menu, _event, _rectangle| {
        if takeover.window.borrow().is_some() {
            return false;
        }
        menu.close();
        true
    });

    // Permission requests (geolocation, notifications, media, ...) are denied unless the
    // session grants them to the page's origin.
    let (events, tab_id, identity) = (tab.events.clone(), tab.id.clone(), tab.identity.clone());
    view.connect_permission_request(move |view, request| {
        let type_name = request.type_().name();
        let origin = view.uri().and_then(|uri| url::Url::parse(&uri).ok()).map(|url| url.origin().ascii_serialization());
        if let (Some(permission), Some(origin)) = (grantable(type_name), origin) {
            if identity.borrow().grants(permission, &origin) {
                request.allow();
                return true;
            }
        }
        request.deny();
        events.push(Some(&tab_id), EventKind::PermissionDenied { permission: permission_kind(type_name) });
        true
    });
    // A granted notification never reaches the desktop: WebKit would show it there.
    view.connect_show_notification(|_view, _notification| true);

    // Frames may only navigate to web and inert document schemes.
    let (events, tab_id, downloads) = (tab.events.clone(), tab.id.clone(), tab.downloads.clone());
    view.connect_decide_policy(move |_view, decision, decision_type| {
        if decision_type == PolicyDecisionType::Response {
            // An attachment, or what a browser cannot show (WebKit would ignore it), is
            // downloaded; the call that loaded it waits for that download to begin.
            let Some(response) = decision.downcast_ref::<ResponsePolicyDecision>() else { return false };
            if response.is_mime_type_supported() && !is_attachment(response) {
                return false;
            }
            downloads.announce(&tab_id, crate::state::downloads::DECIDED_DOWNLOAD);
            decision.download();
            return true;
        }
        if !matches!(decision_type, PolicyDecisionType::NavigationAction | PolicyDecisionType::NewWindowAction) {
            return false;
        }
        let Some(navigation) = decision.downcast_ref::<NavigationPolicyDecision>() else {
            return false;
        };
        let uri = navigation
            .navigation_action()
            .and_then(|action| action.request())
            .and_then(|request| request.uri())
            .map(|uri| uri.to_string())
            .unwrap_or_default();
        if crate::urls::allowed_in_page(&uri) {
            return false;
        }
        decision.ignore();
        let blocked = EventKind::NavigationBlocked {
            url: crate::urls::redact_credentials(&uri),
            reason: BlockReason::Scheme,
            from: None,
            rule: None,
        };
        events.push(Some(&tab_id), blocked);
        true
    });
}

/// Whether a response asks to be saved rather than shown (`Content-Disposition: attachment`).
fn is_attachment(decision: &ResponsePolicyDecision) -> bool {
    let disposition =
        decision.response().and_then(|response| response.http_headers()).and_then(|headers| headers.one("Content-Disposition"));
    disposition.is_some_and(|value| value.trim_start().get(..10).is_some_and(|word| word.eq_ignore_ascii_case("attachment")))
}

/// The permission a session may grant for a request of this type (WebKit's clipboard
/// request, 2.42, has no Rust type: it is known by its name).
fn grantable(type_name: &str) -> Option<Permission> {
    match type_name {
        "WebKitGeolocationPermissionRequest" => Some(Permission::Geolocation),
        "WebKitNotificationPermissionRequest" => Some(Permission::Notifications),
        "WebKitClipboardPermissionRequest" => Some(Permission::ClipboardRead),
        _ => None,
    }
}

/// `WebKitGeolocationPermissionRequest` -> `geolocation`.
fn permission_kind(type_name: &str) -> String {
    let trimmed = type_name.trim_start_matches("WebKit").trim_end_matches("PermissionRequest");
    super::load::snake_case(trimmed)
}
