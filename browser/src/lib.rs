//! Headless Chromium driven over the DevTools protocol (CDP): launching `/usr/bin/chromium`
//! with the flags a recording proxy needs, navigation, evaluation, input events, screenshots
//! and quiet detection. (Exercising a page with random user events is `shepherd-exerciser`,
//! built on this client.)
//!
//! A deliberately small client: one websocket, JSON-RPC with ids, flattened sessions, typed
//! helpers only for what Shepherd uses; anything else goes through [`Page::call`] /
//! [`Browser::call`] with raw `serde_json` parameters. Every wait has a time limit, and a
//! browser that crashes or disconnects fails pending calls with [`Error::Disconnected`]
//! instead of hanging.
//!
//! ```no_run
//! # async fn demo() -> shepherd_browser::Result<()> {
//! use shepherd_browser::{Browser, LaunchOptions};
//! let browser = Browser::launch(LaunchOptions {
//!     proxy: Some("127.0.0.1:8080".into()),
//!     bypass_loopback_proxy: true,
//!     ..LaunchOptions::default()
//! })
//! .await?;
//! let page = browser.new_page().await?;
//! page.navigate("http://127.0.0.1:9000/").await?;
//! let title = page.evaluate("document.title").await?;
//! # let _ = title;
//! browser.close().await?;
//! # Ok(()) }
//! ```
//!
//! - [`Browser::launch`] starts Chromium in its own process group with a fresh profile
//!   directory (`--remote-debugging-port=0`, URL read from stderr); `SHEPHERD_CHROMIUM`
//!   overrides the executable. Drop (or [`Browser::close`]) kills the group and removes the
//!   profile.
//! - [`Browser::new_page`] / [`Browser::new_isolated_page`] open tabs; a [`Page`] collects
//!   console messages, uncaught exceptions and dialogs (accepted automatically) in the
//!   background.
//! - [`Page::navigate`], [`Page::reload`], [`Page::evaluate`], [`Page::add_script_on_new_document`],
//!   [`Page::screenshot`].
//! - Input: [`Page::click`], [`Page::mouse_move`], [`Page::press_key`], [`Page::type_text`],
//!   [`Page::insert_text`], elements named by [`Element`].
//! - Stable element paths ([`Element::Path`], [`visit_elements`]): addresses that survive a
//!   fresh load of the same page, unlike backend node ids.
//! - [`Page::wait_quiet`]: no request in flight (Network domain) and no DOM mutation
//!   (a `MutationObserver` in a private isolated world) for a given time.
//! - [`NavigationGuard`]: keep a page in place while a tool drives it (main-frame navigations
//!   failed, popups closed, file choosers intercepted).
//! - [`Browser::connect`]: drive a browser that is already running (a remote endpoint);
//!   [`Page::evaluate_isolated`]: read the DOM from a private world the page cannot see;
//!   [`Page::authenticate_proxy`]: answer an authenticating proxy's challenges.
//!
//! Known limits:
//! - Out-of-process frames (cross-site iframes under site isolation) are separate targets that
//!   this client does not attach to: their console output, exceptions and elements are not
//!   seen by [`Page`] helpers. Same-site frames and shadow roots are covered.
//! - Chromium 156 still sends requests of its own through a configured proxy
//!   (`CONNECT accounts.google.com:443`, `update.googleapis.com/service/update2/json` for the
//!   optimization-guide model manifest) despite `--disable-background-networking` and
//!   `--disable-component-update`. With a proxy, those hosts ([`BROWSER_SERVICE_HOSTS`]) are
//!   put on the bypass list ([`LaunchOptions::browser_services_direct`]); the network-time
//!   query is disabled (`NetworkTimeServiceQuerying`). Its headless windows also load pages
//!   of their own UI (the omnibox popups, a WebUI renderer per browser context): those
//!   features are disabled too.
//! - Chromium is spawned from one process-long thread with `PR_SET_PDEATHSIG`, so it dies with
//!   this process even on `SIGKILL`; normal paths kill its whole process group on drop, and
//!   each launch removes profile directories whose owning process is gone.

mod connection;
mod error;
mod guard;
mod input;
mod launch;
mod monitor;
mod page;
mod paths;
mod quiet;
mod tools;

pub use connection::{Connection, Event, EventStream};
pub use error::{Error, Result};
pub use guard::NavigationGuard;
pub use input::{Element, MouseButton};
pub use launch::{BROWSER_SERVICE_HOSTS, Browser, DEFAULT_CHROMIUM, LaunchOptions};
pub use monitor::{ConsoleMessage, Dialog, PageException, origin_of};
pub use page::{Navigation, Page};
pub use paths::visit_elements;
pub use quiet::Quiet;

#[cfg(test)]
mod tests {
    /// The handles are used from spawned tasks (recorder, exerciser): they must stay `Send +
    /// Sync`.
    #[test]
    fn handles_are_send_and_sync() {
        fn check<T: Send + Sync>() {}
        check::<crate::Browser>();
        check::<crate::Page>();
        check::<crate::Connection>();
        check::<crate::Error>();
    }

    #[test]
    fn disable_features_lists_are_merged() {
        let opts = crate::LaunchOptions {
            extra_args: vec![
                "--disable-features=Foo,Bar".into(),
                "--mute-audio".into(),
                "--proxy-bypass-list=*.example".into(),
            ],
            proxy: Some("127.0.0.1:1".into()),
            bypass_loopback_proxy: true,
            spki_allow: vec!["a=".into(), "b=".into()],
            ..crate::LaunchOptions::default()
        };
        let args = opts.args(std::path::Path::new("/tmp/p"));
        let features: Vec<&String> = args
            .iter()
            .filter(|a| a.starts_with("--disable-features="))
            .collect();
        assert_eq!(features.len(), 1, "{args:?}");
        assert!(features[0].ends_with(",Foo,Bar"), "{args:?}");
        assert!(features[0].contains("NetworkTimeServiceQuerying"));
        for want in [
            "--headless",
            "--no-sandbox",
            "--disable-quic",
            "--remote-debugging-port=0",
            "--user-data-dir=/tmp/p",
            "--proxy-server=127.0.0.1:1",
            "--ignore-certificate-errors-spki-list=a=,b=",
            "--mute-audio",
        ] {
            assert!(args.iter().any(|a| a == want), "{want} missing: {args:?}");
        }
        assert_eq!(args.last().map(String::as_str), Some("about:blank"));
        // A browser started elsewhere gets the same flags, less the launch's own.
        let flags = opts.browser_flags();
        for launch_only in [
            "--remote-debugging-port=0",
            "--user-data-dir=/tmp/p",
            "about:blank",
        ] {
            assert!(!flags.iter().any(|a| a == launch_only), "{flags:?}");
        }
        assert!(flags.iter().all(|f| args.contains(f)), "{flags:?}");
        let bypass: Vec<&String> = args
            .iter()
            .filter(|a| a.starts_with("--proxy-bypass-list="))
            .collect();
        assert_eq!(bypass.len(), 1, "{args:?}");
        assert!(
            bypass[0].starts_with("--proxy-bypass-list=<-loopback>;accounts.google.com;"),
            "{bypass:?}"
        );
        assert!(bypass[0].ends_with(";*.example"), "{bypass:?}");
    }
}
