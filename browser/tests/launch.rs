//! Launching, connecting and killing Chromium.

mod common;

use std::path::PathBuf;
use std::time::Duration;

use common::*;
use shepherd_browser::{Browser, Error, LaunchOptions};

#[tokio::test]
async fn launch_then_close_leaves_no_process_and_no_profile() {
    let browser = launch().await;
    let pid = browser.pid().unwrap();
    let profile = browser.profile_dir().to_path_buf();
    assert!(profile.is_dir());
    assert!(browser.ws_url().starts_with("ws://127.0.0.1:"));
    let version = browser.version().await.unwrap();
    assert!(version.contains("Chrome/"), "{version}");
    // A page forces renderer processes into existence, so the kill must cover them too.
    let page = browser.new_page().await.unwrap();
    page.evaluate("1 + 1").await.unwrap();
    assert!(group_members(pid).len() > 1, "expected helper processes");
    browser.close().await.unwrap();
    let left = group_members_within(pid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "leftover processes {left:?}");
    assert!(!profile.exists(), "profile dir left behind");
    drop(page);
}

#[tokio::test]
async fn drop_kills_the_process_group() {
    let browser = launch().await;
    let pid = browser.pid().unwrap();
    let _page = browser.new_page().await.unwrap();
    drop(browser);
    let left = group_members_within(pid, Duration::from_secs(2)).await;
    assert!(left.is_empty(), "leftover processes {left:?}");
}

#[tokio::test]
async fn missing_executable_is_a_clear_error() {
    let err = Browser::launch(LaunchOptions {
        executable: Some(PathBuf::from("/nonexistent/chromium")),
        ..LaunchOptions::default()
    })
    .await
    .err()
    .expect("must fail");
    assert!(matches!(err, Error::ChromiumMissing { .. }), "{err}");
    assert!(err.to_string().contains("install-deps"), "{err}");
}

#[tokio::test]
async fn executable_that_never_prints_a_url_times_out_with_an_error() {
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("fake-chromium");
    let pid_file = dir.path().join("fake.pid");
    // `exec` keeps the pid, so the file names the process that must be gone afterwards.
    std::fs::write(
        &fake,
        format!(
            "#!/bin/sh\necho $$ > '{}'\necho 'fake starting' >&2\nexec sleep 120\n",
            pid_file.display()
        ),
    )
    .unwrap();
    let mut perms = std::fs::metadata(&fake).unwrap().permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&fake, perms).unwrap();
    let start = std::time::Instant::now();
    let err = Browser::launch(LaunchOptions {
        executable: Some(fake.clone()),
        startup_timeout: Duration::from_millis(700),
        ..LaunchOptions::default()
    })
    .await
    .err()
    .expect("must fail");
    // The product's own startup limit (700 ms) ended the wait: without it, launch would have
    // waited for the fake to exit (120 s). Half of that leaves a loaded machine ample room.
    assert!(
        start.elapsed() < Duration::from_secs(60),
        "{:?}",
        start.elapsed()
    );
    match err {
        Error::Launch { stderr, .. } => assert!(stderr.contains("fake starting"), "{stderr}"),
        other => panic!("unexpected {other}"),
    }
    // The fake process was killed with its group when launch gave up.
    let pid: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = std::time::Instant::now() + patience(Duration::from_secs(1));
    while is_alive(pid) && std::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!is_alive(pid), "fake chromium (pid {pid}) still running");
}

/// Whether `pid` exists and is not a zombie.
fn is_alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| {
            s.rsplit_once(')')
                .map(|(_, rest)| rest.trim_start().starts_with('Z'))
        })
        .is_some_and(|zombie| !zombie)
}

#[tokio::test]
async fn killed_browser_fails_calls_instead_of_hanging() {
    let browser = launch().await;
    let page = browser.new_page().await.unwrap();
    let pid = browser.pid().unwrap() as i32;
    std::process::Command::new("kill")
        .args(["-KILL", &pid.to_string()])
        .status()
        .unwrap();
    let err = loop {
        match page.evaluate("1").await {
            Err(e) => break e,
            Ok(_) => tokio::time::sleep(Duration::from_millis(20)).await,
        }
    };
    // A call that hung until its command limit would end in `Error::Timeout`: the kind of
    // error says the lost connection failed it, with no clock to race.
    assert!(matches!(err, Error::Disconnected(_)), "{err}");
    // Subscriptions end too.
    let mut events = page.events(&[]);
    assert!(events.next().await.is_none());
}

#[tokio::test]
async fn renderer_crash_fails_the_page_but_not_the_browser() {
    let browser = launch().await;
    let page = browser.new_page().await.unwrap();
    page.evaluate("1").await.unwrap();
    // Page.crash never answers: the crash notice must fail it (and later calls). Without the
    // notice the call would end in `Error::Timeout` at the command limit, so the kind of error
    // is the check.
    let err = page
        .call("Page.crash", serde_json::json!({}))
        .await
        .expect_err("crash must not succeed");
    assert!(matches!(err, Error::TargetGone(_)), "{err}");
    let err = page.evaluate("1").await.expect_err("dead page");
    assert!(matches!(err, Error::TargetGone(_)), "{err}");
    // The browser and new pages still work.
    let fresh = browser.new_page().await.unwrap();
    assert_eq!(
        fresh.evaluate("2 * 21").await.unwrap(),
        serde_json::json!(42)
    );
    browser.close().await.unwrap();
}

/// Run by `a_sigkilled_owner_takes_chromium_along` in a child process.
#[test]
#[ignore = "helper: run by a_sigkilled_owner_takes_chromium_along"]
fn helper_launch_and_hang() {
    assert!(
        std::env::var_os("SHEPHERD_BROWSER_HELPER").is_some(),
        "helper: run by a_sigkilled_owner_takes_chromium_along"
    );
    let rt = tokio::runtime::Runtime::new().unwrap();
    let browser = rt.block_on(launch());
    println!("PROFILE {}", browser.profile_dir().display());
    println!("PID {}", browser.pid().unwrap());
    std::thread::sleep(Duration::from_secs(30));
}

#[test]
fn a_sigkilled_owner_takes_chromium_along() {
    use std::io::BufRead;
    let mut owner = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--ignored",
            "--exact",
            "helper_launch_and_hang",
            "--nocapture",
        ])
        .env("SHEPHERD_BROWSER_HELPER", "1")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let out = std::io::BufReader::new(owner.stdout.take().unwrap());
    let mut profile = None;
    let mut pid = None;
    for line in out.lines().map_while(Result::ok) {
        if let Some(p) = line.strip_prefix("PROFILE ") {
            profile = Some(std::path::PathBuf::from(p.trim()));
        }
        if let Some(p) = line.strip_prefix("PID ") {
            pid = Some(p.trim().parse::<u32>().unwrap());
            break;
        }
    }
    let (pid, profile) = (pid.expect("no pid"), profile.expect("no profile"));
    assert!(!group_members(pid).is_empty());
    owner.kill().unwrap(); // SIGKILL: no destructor runs in the owner
    owner.wait().unwrap();
    let deadline = std::time::Instant::now() + patience(Duration::from_secs(5));
    let mut left = group_members(pid);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
        left = group_members(pid);
    }
    assert!(left.is_empty(), "orphaned Chromium processes {left:?}");
    // The killed owner could not remove its profile; the next launch sweeps it away.
    assert!(profile.exists());
    let rt = tokio::runtime::Runtime::new().unwrap();
    let browser = rt.block_on(launch());
    assert!(
        !profile.exists(),
        "stale profile {} kept",
        profile.display()
    );
    drop(browser);
}

#[tokio::test]
async fn a_crash_during_navigation_is_reported_as_the_page_going_away() {
    let server = serve(vec![
        ("/", html("<img src='/slow.png'>")),
        // Never in time: the page is still loading when it crashes, however slow the machine.
        ("/slow.png", delayed("image/png", "", 600_000)),
    ])
    .await;
    let browser = launch().await;
    let page = browser.new_page().await.unwrap();
    let url = server.url("/");
    let wait = patience(Duration::from_secs(8));
    let start = std::time::Instant::now();
    let (nav, _) = tokio::join!(page.navigate_with(&url, wait), async {
        tokio::time::sleep(Duration::from_millis(500)).await;
        let _ = page.call("Page.crash", serde_json::json!({})).await;
    });
    match nav {
        Err(Error::TargetGone(_)) => {}
        other => panic!("expected TargetGone, got {other:?}"),
    }
    // The crash ended the wait, not the navigation limit: the crash comes after half a second,
    // so half the (patience-scaled) limit leaves a loaded machine room.
    assert!(start.elapsed() < wait / 2, "{:?}", start.elapsed());
    browser.close().await.unwrap();
}

#[tokio::test]
async fn headful_without_a_display_says_so() {
    if std::env::var_os("DISPLAY").is_some() || std::env::var_os("WAYLAND_DISPLAY").is_some() {
        return; // a display exists: a headful launch would simply work
    }
    let err = Browser::launch(LaunchOptions {
        headless: false,
        ..LaunchOptions::default()
    })
    .await
    .err()
    .expect("headful launch without a display must fail");
    match &err {
        Error::Launch { reason, .. } => assert!(reason.contains("display"), "{err}"),
        other => panic!("unexpected {other}"),
    }
}

/// Chromium 156's headless windows load WebUI pages of their own (the omnibox popups,
/// `chrome://omnibox-popup.top-chrome/`), one renderer per browser context, which spent about
/// as much CPU as the page under test in each of the explorer's executions. None may exist.
#[tokio::test]
async fn a_browser_runs_no_pages_of_its_own_ui() {
    let browser = launch().await;
    let page = browser.new_isolated_page(None, None).await.unwrap();
    page.evaluate("1").await.unwrap();
    // Without the features disabled, they appear within a second of the window: watch for
    // longer than that (a loaded machine may show them later, never sooner).
    let until = std::time::Instant::now() + Duration::from_secs(3);
    while std::time::Instant::now() < until {
        let targets = browser
            .call("Target.getTargets", serde_json::json!({}))
            .await
            .unwrap();
        let ui: Vec<&serde_json::Value> = targets["targetInfos"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| {
                t["type"] == "browser_ui"
                    || t["url"]
                        .as_str()
                        .is_some_and(|u| u.starts_with("chrome://"))
            })
            .collect();
        assert!(ui.is_empty(), "the browser's own pages: {ui:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    browser.close().await.unwrap();
}
