//! Mouse and keyboard input reach the page as trusted events.

mod common;

use common::*;
use serde_json::json;
use shepherd_browser::{Element, Error};

const PAGE: &str = r#"<!doctype html>
<style>body { margin: 0 } #far { margin-top: 3000px }</style>
<button id="b" onmousedown="log.push('down')" onmouseup="log.push('up')">press</button>
<div id="over" style="width:100px;height:50px">hover me</div>
<input id="t" type="text">
<button id="far">far away</button>
<div id="hidden" style="display:none">x</div>
<script>
  window.log = [];
  const b = document.getElementById('b');
  b.addEventListener('click', e => {
    log.push('click:' + e.isTrusted);
    const p = document.createElement('p'); p.id = 'added'; document.body.append(p);
  });
  document.getElementById('over').addEventListener('mouseover', () => log.push('over'));
  document.getElementById('far').addEventListener('click', () => log.push('far'));
  const t = document.getElementById('t');
  t.addEventListener('keydown', e => log.push('kd:' + e.key));
  t.addEventListener('input', e => log.push('in'));
  t.form;
  document.addEventListener('keyup', e => { if (e.key === 'Enter') log.push('enter'); });
</script>"#;

#[test]
fn clicks_hover_and_typing() {
    with_browser(|browser| async move {
        let server = serve(vec![("/", html(PAGE))]).await;
        let page = browser.new_page().await.unwrap();
        page.navigate(&server.url("/")).await.unwrap();

        assert_eq!(
            page.evaluate("!!document.getElementById('added')")
                .await
                .unwrap(),
            json!(false)
        );
        page.click("#b").await.unwrap();
        assert_eq!(
            page.evaluate("!!document.getElementById('added')")
                .await
                .unwrap(),
            json!(true)
        );
        assert_eq!(
            page.evaluate("log").await.unwrap(),
            json!(["down", "up", "click:true"])
        );

        page.evaluate("log.length = 0").await.unwrap();
        page.hover("#over").await.unwrap();
        assert_eq!(page.evaluate("log").await.unwrap(), json!(["over"]));

        // Off-screen elements are scrolled into view first.
        page.evaluate("log.length = 0").await.unwrap();
        page.click("#far").await.unwrap();
        assert_eq!(page.evaluate("log").await.unwrap(), json!(["far"]));
        assert!(page.evaluate("scrollY").await.unwrap().as_f64().unwrap() > 1000.0);

        page.evaluate("log.length = 0").await.unwrap();
        page.click("#t").await.unwrap();
        page.type_text("Hi 5").await.unwrap();
        page.press_key("Backspace").await.unwrap();
        page.insert_text("é").await.unwrap();
        page.press_key("Enter").await.unwrap();
        assert_eq!(
            page.evaluate("document.getElementById('t').value")
                .await
                .unwrap(),
            json!("Hi é")
        );
        let log = page.evaluate("log").await.unwrap();
        let log: Vec<&str> = log
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap())
            .collect();
        assert_eq!(&log[..3], &["kd:H", "in", "kd:i"], "{log:?}");
        assert!(log.contains(&"kd:Backspace"), "{log:?}");
        assert_eq!(log.last(), Some(&"enter"), "{log:?}");

        // Focus by backend node id.
        let doc = page
            .call("DOM.getDocument", json!({"depth": -1}))
            .await
            .unwrap();
        let body = &doc["root"]["children"][1]["children"][1];
        assert_eq!(body["nodeName"], "BODY", "{doc}");
        let input = body["children"]
            .as_array()
            .unwrap()
            .iter()
            .find(|n| {
                n["attributes"]
                    .as_array()
                    .is_some_and(|a| a.contains(&json!("t")))
            })
            .unwrap();
        page.evaluate("document.activeElement.blur()")
            .await
            .unwrap();
        page.focus(Element::BackendNode(
            input["backendNodeId"].as_i64().unwrap(),
        ))
        .await
        .unwrap();
        assert_eq!(
            page.evaluate("document.activeElement.id").await.unwrap(),
            json!("t")
        );

        match page.click("#nothing").await {
            Err(Error::Element(m)) => assert!(m.contains("matches nothing"), "{m}"),
            other => panic!("expected element error, got {other:?}"),
        }
        match page.click("#hidden").await {
            Err(Error::Element(m)) => assert!(m.contains("box"), "{m}"),
            other => panic!("expected element error, got {other:?}"),
        }
    });
}
