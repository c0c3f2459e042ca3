//! Replay matcher: tiers, queues, learned patterns, misses. Pure logic, no files.

use proptest::prelude::*;
use shepherd_recording::matcher::{choose_wildcards, partition_cost};
use shepherd_recording::*;

fn rec(
    id: i64,
    session: i64,
    method: &str,
    url: &str,
    body: &[u8],
    class: &str,
) -> RecordedRequest {
    use sha2::Digest;
    RecordedRequest {
        id: ExchangeId(id),
        session: SessionId(session),
        method: method.into(),
        url: url.into(),
        headers: vec![Header::new("Content-Type", "application/json")],
        body: body.to_vec(),
        body_sha256: sha2::Sha256::digest(body).into(),
        response_class: class.into(),
    }
}

fn get(id: i64, session: i64, url: &str) -> RecordedRequest {
    rec(id, session, "GET", url, b"", "200 text/html")
}

fn live<'a>(
    method: &'a str,
    url: &'a str,
    body: &'a [u8],
    headers: &'a [Header],
) -> LiveRequest<'a> {
    LiveRequest {
        method,
        url,
        headers,
        body,
    }
}

fn find(m: &mut Matcher, url: &str) -> Result<Match, Miss> {
    m.find(&live("GET", url, b"", &[]))
}

#[test]
fn exact_tier_queues_duplicates_then_repeats_last_and_resets() {
    let mut m = Matcher::new(
        vec![
            get(1, 1, "https://a.test/poll"),
            get(2, 1, "https://a.test/other"),
            get(3, 1, "https://a.test/poll"),
        ],
        MatchConfig::default(),
    );
    let served: Vec<(i64, Tier, usize)> = (0..4)
        .map(|_| {
            let r = find(&mut m, "https://a.test/poll").unwrap();
            (r.exchange.0, r.tier, r.occurrence)
        })
        .collect();
    assert_eq!(
        served,
        vec![
            (1, Tier::Exact, 0),
            (3, Tier::Exact, 1),
            (3, Tier::Exact, 2),
            (3, Tier::Exact, 3)
        ]
    );
    m.reset();
    assert_eq!(find(&mut m, "https://a.test/poll").unwrap().exchange.0, 1);
}

#[test]
fn exact_tier_distinguishes_bodies_and_methods() {
    let mut m = Matcher::new(
        vec![
            rec(
                1,
                1,
                "POST",
                "https://a.test/api",
                br#"{"op":"a"}"#,
                "200 application/json",
            ),
            rec(
                2,
                1,
                "POST",
                "https://a.test/api",
                br#"{"op":"b"}"#,
                "200 application/json",
            ),
            get(3, 1, "https://a.test/api"),
        ],
        MatchConfig::default(),
    );
    let h = [Header::new("content-type", "application/json")];
    let b = m
        .find(&live("POST", "https://a.test/api", br#"{"op":"b"}"#, &h))
        .unwrap();
    assert_eq!((b.exchange.0, b.tier), (2, Tier::Exact));
    let g = m.find(&live("GET", "https://a.test/api", b"", &h)).unwrap();
    assert_eq!((g.exchange.0, g.tier), (3, Tier::Exact));
    // Same JSON, different key order and spacing: equal after canonicalisation.
    let a = m
        .find(&live(
            "POST",
            "https://a.test/api",
            br#"{ "op" : "a" }"#,
            &h,
        ))
        .unwrap();
    assert_eq!((a.exchange.0, a.tier), (1, Tier::Ignore));
}

#[test]
fn ignore_lists_drop_params_and_body_keys() {
    let config = MatchConfig {
        ignore_query_params: vec!["_".into(), "cb".into()],
        ignore_body_params: vec!["nonce".into()],
        learned: false,
        fuzzy: false,
        ..MatchConfig::default()
    };
    let mut m = Matcher::new(
        vec![
            get(1, 1, "https://a.test/list?page=2&_=111&sort=asc"),
            rec(
                2,
                1,
                "POST",
                "https://a.test/save",
                br#"{"v":1,"nonce":"x1"}"#,
                "200 application/json",
            ),
        ],
        config,
    );
    let r = find(&mut m, "https://a.test/list?sort=asc&_=999&page=2").unwrap();
    assert_eq!((r.exchange.0, r.tier), (1, Tier::Ignore));
    let h = [Header::new("content-type", "application/json")];
    let r = m
        .find(&live(
            "POST",
            "https://a.test/save",
            br#"{"nonce":"y2","v":1}"#,
            &h,
        ))
        .unwrap();
    assert_eq!((r.exchange.0, r.tier), (2, Tier::Ignore));
    // A kept parameter still matters, and with fuzzy off that is a miss with a reason.
    let miss = find(&mut m, "https://a.test/list?sort=desc&_=1&page=2").unwrap_err();
    assert!(
        miss.reason.contains("https://a.test/list"),
        "{}",
        miss.reason
    );
}

#[test]
fn use_headers_become_part_of_the_key() {
    let with_lang = |lang: &str, id: i64| {
        let mut r = get(id, 1, "https://a.test/");
        r.headers = vec![Header::new("Accept-Language", lang)];
        r
    };
    let recorded = vec![with_lang("en", 1), with_lang("fr", 2)];
    let config = MatchConfig {
        use_headers: vec!["accept-language".into()],
        ..MatchConfig::default()
    };
    let mut m = Matcher::new(recorded, config);
    let fr = [Header::new("accept-language", "fr")];
    let r = m.find(&live("GET", "https://a.test/", b"", &fr)).unwrap();
    assert_eq!((r.exchange.0, r.tier), (2, Tier::Exact));
}

/// The motivating case: a URL with a timestamp and a session id, recorded in two sessions,
/// matches on replay with values never seen before.
#[test]
fn learned_pattern_matches_new_timestamp_and_session_id() {
    let mut recorded = Vec::new();
    let mut id = 0;
    for (session, sid) in [(1, "a81f3c"), (2, "77be02")] {
        for ts in 0..3 {
            id += 1;
            recorded.push(rec(
                id,
                session,
                "GET",
                &format!("https://app.test/api/feed?sid={sid}&ts=17000000{session}{ts}&v=2"),
                b"",
                "200 application/json {items:[str]}",
            ));
            id += 1;
            recorded.push(get(
                id,
                session,
                &format!("https://app.test/static/app.js?v={session}"),
            ));
        }
    }
    let mut m = Matcher::new(recorded, MatchConfig::default());
    let patterns: Vec<String> = m.patterns().iter().map(|p| p.to_string()).collect();
    let feed = patterns
        .iter()
        .find(|p| p.contains("?sid"))
        .expect("a feed pattern");
    assert!(feed.contains("?sid=*") && feed.contains("?ts=*"), "{feed}");
    assert!(feed.contains("?v=2") && feed.contains("#1=feed"), "{feed}");
    let urls = [
        "https://app.test/api/feed?sid=ffffff&ts=1800000000&v=2",
        "https://app.test/api/feed?sid=ffffff&ts=1800000001&v=2",
    ];
    let first = m.find(&live("GET", urls[0], b"", &[])).unwrap();
    assert_eq!(first.tier, Tier::Learned);
    assert_eq!(first.exchange.0, 1, "first recording of the pattern");
    let second = m.find(&live("GET", urls[1], b"", &[])).unwrap();
    assert_eq!((second.tier, second.exchange.0), (Tier::Learned, 3));
    // The constant `v` stays a key: another version is not the same operation.
    let other = m
        .find(&live(
            "GET",
            "https://app.test/api/feed?sid=f&ts=1&v=3",
            b"",
            &[],
        ))
        .unwrap();
    assert_eq!(other.tier, Tier::Fuzzy);
}

#[test]
fn one_session_is_not_enough_to_wildcard_a_session_id() {
    // sid never varied, so it must stay a key (AIL needs two distinct values).
    let recorded: Vec<RecordedRequest> = (0..3)
        .map(|ts| get(ts + 1, 1, &format!("https://app.test/feed?sid=abc&ts={ts}")))
        .collect();
    let config = MatchConfig {
        fuzzy: false,
        ..MatchConfig::default()
    };
    let mut m = Matcher::new(recorded, config);
    let same_sid = find(&mut m, "https://app.test/feed?sid=abc&ts=99").unwrap();
    assert_eq!(same_sid.tier, Tier::Learned);
    assert!(find(&mut m, "https://app.test/feed?sid=new&ts=99").is_err());
}

#[test]
fn ail_worked_example_keeps_the_path_and_wildcards_the_name() {
    // {alice, bob} return one shape, {charlie, eve} another; signature {#0, ?name}.
    let values = [
        vec!["author", "alice"],
        vec!["author", "bob"],
        vec!["author", "charlie"],
        vec!["author", "eve"],
    ];
    let values: Vec<Vec<&str>> = values.iter().map(|v| v.to_vec()).collect();
    let classes = ["A", "A", "B", "B"];
    // #0 has one value so it cannot be a wildcard; name=* merges (cost 1) vs four singletons
    // (cost 2): the merge wins.
    assert_eq!(choose_wildcards(&values, &classes, 2), vec![false, true]);
    assert_eq!(partition_cost(&classes, &["x", "x", "x", "x"]), 1);
    assert_eq!(partition_cost(&classes, &["a", "b", "c", "d"]), 2);
}

#[test]
fn key_feature_separating_response_shapes_stays_a_key() {
    // `action` decides the response shape, `id` does not: action key, id wildcard.
    let values: Vec<Vec<&str>> = vec![
        vec!["list", "1"],
        vec!["list", "2"],
        vec!["delete", "3"],
        vec!["delete", "4"],
    ];
    let classes = ["L", "L", "D", "D"];
    assert_eq!(choose_wildcards(&values, &classes, 2), vec![false, true]);
}

#[test]
fn fuzzy_prefers_the_closest_query_and_explains_misses() {
    let mut m = Matcher::new(
        vec![
            get(1, 1, "https://a.test/search?q=cats&page=1"),
            get(2, 1, "https://a.test/search?q=dogs&page=1"),
            get(3, 1, "https://a.test/img/logo.png"),
        ],
        MatchConfig {
            learned: false,
            ..MatchConfig::default()
        },
    );
    let r = find(&mut m, "https://a.test/search?q=dogs&page=7").unwrap();
    assert_eq!((r.exchange.0, r.tier), (2, Tier::Fuzzy));
    let miss = find(&mut m, "https://a.test/totally/else.js").unwrap_err();
    assert!(
        miss.reason.contains("no recorded request close to"),
        "{}",
        miss.reason
    );
    let miss = find(&mut m, "https://b.test/search?q=dogs").unwrap_err();
    assert!(miss.reason.contains("https://b.test"), "{}", miss.reason);
    let miss = m
        .find(&live("DELETE", "https://a.test/search", b"", &[]))
        .unwrap_err();
    assert!(miss.reason.contains("DELETE"), "{}", miss.reason);
}

#[test]
fn primary_session_restricts_queues_when_it_has_recordings() {
    let recorded = vec![
        get(1, 1, "https://a.test/x"),
        get(2, 2, "https://a.test/x"),
        get(3, 1, "https://a.test/only-in-1"),
    ];
    let mut m = Matcher::new(
        recorded,
        MatchConfig {
            primary_session: Some(SessionId(2)),
            ..MatchConfig::default()
        },
    );
    assert_eq!(find(&mut m, "https://a.test/x").unwrap().exchange.0, 2);
    assert_eq!(find(&mut m, "https://a.test/x").unwrap().exchange.0, 2);
    assert_eq!(
        find(&mut m, "https://a.test/only-in-1").unwrap().exchange.0,
        3
    );
}

fn arb_url() -> impl Strategy<Value = String> {
    (
        prop::sample::select(vec!["a.test", "b.test"]),
        prop::collection::vec(
            prop::sample::select(vec!["api", "v1", "x", "feed", "1", "2"]),
            0..4,
        ),
        prop::collection::vec(
            (prop::sample::select(vec!["q", "t", "sid", "_"]), 0u32..4),
            0..4,
        ),
    )
        .prop_map(|(host, path, query)| {
            let mut u = format!("https://{host}/{}", path.join("/"));
            if !query.is_empty() {
                let q: Vec<String> = query.iter().map(|(k, v)| format!("{k}={v}")).collect();
                u.push('?');
                u.push_str(&q.join("&"));
            }
            u
        })
}

fn arb_recorded() -> impl Strategy<Value = Vec<RecordedRequest>> {
    prop::collection::vec(
        (
            arb_url(),
            1i64..3,
            prop::sample::select(vec!["GET", "POST"]),
            0u8..3,
        ),
        1..25,
    )
    .prop_map(|items| {
        items
            .into_iter()
            .enumerate()
            .map(|(i, (url, session, method, class))| {
                rec(
                    i as i64 + 1,
                    session,
                    method,
                    &url,
                    b"",
                    &format!("c{class}"),
                )
            })
            .collect()
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Completeness: every recorded request matches at the exact tier, and the queue serves that
    /// key's recordings in order, then repeats the last one.
    #[test]
    fn recorded_requests_replay_exactly_in_order(recorded in arb_recorded()) {
        let mut m = Matcher::new(recorded.clone(), MatchConfig::default());
        let mut seen: std::collections::HashMap<(String, String), Vec<i64>> = Default::default();
        for r in &recorded {
            seen.entry((r.method.clone(), r.url.clone())).or_default().push(r.id.0);
        }
        for ((method, url), ids) in &seen {
            for n in 0..ids.len() + 2 {
                let got = m.find(&live(method, url, b"", &[])).unwrap();
                prop_assert_eq!(got.tier, Tier::Exact);
                prop_assert_eq!(got.exchange.0, ids[n.min(ids.len() - 1)]);
            }
        }
    }

    /// Disjointness and completeness of learned patterns: each recorded request belongs to
    /// exactly one pattern, and that pattern lists it.
    #[test]
    fn learned_patterns_partition_the_recording(recorded in arb_recorded()) {
        let m = Matcher::new(recorded.clone(), MatchConfig::default());
        let patterns = m.patterns();
        let mut count = vec![0usize; recorded.len()];
        for p in &patterns {
            for &s in &p.samples {
                count[s] += 1;
            }
        }
        prop_assert!(count.iter().all(|&c| c == 1), "{:?}", count);
        for (i, a) in patterns.iter().enumerate() {
            for b in &patterns[i + 1..] {
                if a.signature == b.signature {
                    prop_assert_eq!(&a.wildcards, &b.wildcards);
                    prop_assert_ne!(&a.keys, &b.keys);
                }
            }
        }
    }

    /// Lookups never panic, whatever the request, and misses always explain themselves.
    #[test]
    fn arbitrary_requests_never_panic(recorded in arb_recorded(), url in ".{0,60}", method in "[A-Z]{0,7}", body in prop::collection::vec(any::<u8>(), 0..40)) {
        let mut m = Matcher::new(recorded, MatchConfig::default());
        if let Err(miss) = m.find(&live(&method, &url, &body, &[])) {
            prop_assert!(!miss.reason.is_empty());
        }
    }

    /// Reordering query parameters never changes which recording answers (ignore tier), and
    /// no tier ever answers with a recording from another host or with another method.
    #[test]
    fn query_order_is_irrelevant_and_hosts_never_cross(
        recorded in arb_recorded(),
        pick in any::<prop::sample::Index>(),
        live_url in arb_url(),
    ) {
        let target = pick.get(&recorded).clone();
        let mut m = Matcher::new(recorded.clone(), MatchConfig::default());
        if let Some((base, query)) = target.url.split_once('?') {
            let mut parts: Vec<&str> = query.split('&').collect();
            parts.reverse();
            let url = format!("{base}?{}", parts.join("&"));
            let got = m.find(&live(&target.method, &url, b"", &[])).unwrap();
            let expect = m.find(&live(&target.method, &target.url, b"", &[])).unwrap();
            prop_assert!(got.tier <= Tier::Ignore);
            let got_url = &recorded.iter().find(|r| r.id == got.exchange).unwrap().url;
            let expect_url = &recorded.iter().find(|r| r.id == expect.exchange).unwrap().url;
            let canon = |u: &str| {
                let u = url::Url::parse(u).unwrap();
                let mut q: Vec<(String, String)> = u.query_pairs().map(|(a, b)| (a.into(), b.into())).collect();
                q.sort();
                (u.host_str().map(str::to_owned), u.path().to_owned(), q)
            };
            prop_assert_eq!(canon(got_url), canon(expect_url));
        }
        m.reset();
        if let Ok(hit) = m.find(&live("GET", &live_url, b"", &[])) {
            let r = recorded.iter().find(|r| r.id == hit.exchange).unwrap();
            let host = |u: &str| url::Url::parse(u).unwrap().host_str().map(str::to_owned);
            prop_assert_eq!(host(&r.url), host(&live_url));
            prop_assert_eq!(r.method.as_str(), "GET");
        }
    }

    /// The split+merge distance is symmetric and zero exactly on identical clusterings.
    #[test]
    fn partition_cost_is_a_symmetric_distance(a in prop::collection::vec(0u8..4, 0..20), b in prop::collection::vec(0u8..4, 0..20)) {
        let n = a.len().min(b.len());
        let (a, b) = (&a[..n], &b[..n]);
        prop_assert_eq!(partition_cost(a, b), partition_cost(b, a));
        prop_assert_eq!(partition_cost(a, a), 0);
        // Zero exactly when both group the same indices together (labels do not matter).
        let same_partition = (0..n).all(|i| (0..n).all(|j| (a[i] == a[j]) == (b[i] == b[j])));
        prop_assert_eq!(partition_cost(a, b) == 0, same_partition);
    }
}
