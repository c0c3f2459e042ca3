//! Synthetic traces shaped like real pages, for benchmarks and scale tests.
//!
//! The shape follows what EventRacer's evaluation describes: many short actions; an HTML parse
//! chain that creates nodes and runs scripts early; user events ordered among themselves and
//! fired at nodes the parser created (`NodeTree:`); timers (setTimeout chains and intervals,
//! a few typical delays, so timer FIFO applies); network requests whose `readystatechange`
//! events form short chains and whose responses resolve promise continuations; a few thousand
//! locations with skewed popularity and a read-heavy mix (globals, object fields, handler
//! slots, arrays, DOM properties). Deterministic for a given seed.
//!
//! With [`SynthConfig::young`] set, scripts also touch the fields of objects the page makes as
//! it runs (parsed responses, closure activations, arrays, short-lived DOM nodes): each such
//! location is written once or twice, mostly by one action, sometimes read or updated by a
//! later callback. Real traces of long sessions are like that: a few hundred thousand
//! locations, nearly all of which cannot race ([`SynthConfig::many_locations`]).

use shepherd_trace::{ActionId, ActionType, Trace, TraceBuilder};
use std::collections::VecDeque;

/// Generator settings.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SynthConfig {
    /// Number of actions.
    pub actions: u32,
    /// Number of distinct shared locations (besides node existence and timers).
    pub locations: u32,
    /// Random seed.
    pub seed: u64,
    /// How many causal threads run side by side. 1 is the shape described above (≈ 450 chains
    /// on 115 000 actions); each step up allows more timer loops alive at once, starts more
    /// requests and adds independent callbacks (image loads, messages, observers) that hang
    /// off a parse chunk or a user event and are ordered with nothing else, so the chain
    /// decomposition widens (≈ 1 000 chains at 2).
    pub width: u32,
    /// Accesses per script body, in tenths on average, to fields of objects made as the page
    /// runs: each a new location (then mostly read back by the action that made it) or, one
    /// in sixteen, one made recently; 0 (the default) makes none, and the trace is the shape
    /// above, draw for draw.
    pub young: u32,
}

impl Default for SynthConfig {
    fn default() -> Self {
        SynthConfig {
            actions: 115_000,
            locations: 4_000,
            seed: 1,
            width: 1,
            young: 0,
        }
    }
}

impl SynthConfig {
    /// The wide page: as many actions, about 1 000 chains (many independent timers, network
    /// callbacks and user events, as long staging sessions and explorations produce).
    pub fn wide() -> SynthConfig {
        SynthConfig {
            width: 2,
            ..SynthConfig::default()
        }
    }

    /// The wide page with many locations: the shape of a long session's EventRacer log as
    /// issue 28 measured it (≈ 276 000 locations, 1.2 M operations and ≈ 1 050 chains over
    /// 115 000 actions): the wide page's actions and arcs, plus accesses to young objects.
    pub fn many_locations() -> SynthConfig {
        SynthConfig {
            young: 26,
            ..SynthConfig::wide()
        }
    }
}

/// A small deterministic PRNG (xorshift64*): enough for shaping. Kept by hand: a seed must keep
/// giving the same trace (benches and tests compare against figures drawn from them), and no
/// kept crate has this generator; the workspace's other seeded draws use `rand_xoshiro`.
#[derive(Clone, Debug)]
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 { 0 } else { self.next() % n }
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
    /// Skewed pick in `0..n`: small indices are much more popular.
    fn skewed(&mut self, n: u64) -> u64 {
        let a = self.below(n);
        let b = self.below(n);
        let c = self.below(n);
        a.min(b).min(c)
    }
}

const DELAYS: [u32; 6] = [0, 4, 16, 50, 100, 1000];

/// Share of actions (per mille per step of width above 1) that are independent callbacks.
const INDEPENDENT_PER_MILLE: u64 = 3;

/// Property names of young objects (what parsed responses and view models carry).
const FIELDS: [&str; 12] = [
    "id", "name", "value", "items", "status", "data", "next", "parent", "length", "title", "done",
    "url",
];

/// Young fields a later callback may come back to.
const RECENT: usize = 512;

/// The objects a page makes as it runs, and the fields it touched most recently.
struct Young {
    /// Draws of its own, so the rest of the trace is the one without young objects.
    r: Rng,
    /// Tenths of an access per script body, on average (0: none).
    tenths: u64,
    /// The object being filled (its number) and how many fields it got.
    obj: u64,
    fields: u32,
    /// The last [`RECENT`] young fields made, as a ring.
    recent: Vec<String>,
    at: usize,
}

impl Young {
    fn new(seed: u64, tenths: u32) -> Young {
        Young {
            r: Rng(seed.wrapping_mul(0xd1b5_4a32_d192_ed03) | 1),
            tenths: u64::from(tenths),
            // Above every number the rest of the generator uses.
            obj: 1 << 20,
            fields: 0,
            recent: Vec::new(),
            at: 0,
        }
    }

    /// A new field of the object being filled (or of a fresh one).
    fn make(&mut self) -> String {
        let r = &mut self.r;
        if self.fields >= 4 || r.chance(30) {
            self.obj += 1;
            self.fields = 0;
        }
        self.fields += 1;
        let o = self.obj;
        let name = match r.below(10) {
            0..=4 => format!(
                "Object[{o}].{}",
                FIELDS[r.below(FIELDS.len() as u64) as usize]
            ),
            5 | 6 => format!(
                "Scope[{o}].{}",
                FIELDS[r.below(FIELDS.len() as u64) as usize]
            ),
            7 => format!("Array[{o}]$[{}]", r.below(8)),
            8 => format!("Array[{o}]$LEN"),
            _ => format!("DOMNode[{o}].textContent"),
        };
        if self.recent.len() < RECENT {
            self.recent.push(name.clone());
        } else {
            self.recent[self.at] = name.clone();
            self.at = (self.at + 1) % RECENT;
        }
        name
    }

    /// The young accesses of one script body.
    fn touch(&mut self, b: &mut TraceBuilder, values: &[&str]) {
        if self.tenths == 0 {
            return;
        }
        for _ in 0..self.r.below(2 * self.tenths + 10) / 10 {
            let v = values[self.r.below(values.len() as u64) as usize];
            if !self.recent.is_empty() && self.r.chance(4) {
                // A later callback reads (or updates) what an earlier one built.
                let name = &self.recent[self.r.below(self.recent.len() as u64) as usize];
                if self.r.chance(75) {
                    b.read(name, Some(v));
                } else {
                    b.write(name, Some(v));
                }
            } else {
                let name = self.make();
                b.write(&name, Some(v));
                if self.r.chance(90) {
                    b.read(&name, Some(v));
                }
            }
        }
    }
}

/// A causal thread of the page: a timer loop or an open request.
struct Thread {
    last: ActionId,
    delay: u32,
    left: u32,
    oid: u64,
}

/// Generates a trace.
///
/// Width (and so the number of chains) comes from what real pages have: a handful of timer
/// loops alive at a time, a few hundred requests over the page's life, promise continuations
/// and one-shot timers. User events are ordered among themselves, and one-shot timers
/// registered along that order collapse into FIFO chains.
pub fn generate(cfg: &SynthConfig) -> Trace {
    let mut r = Rng(cfg.seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let mut b = TraceBuilder::new();
    b.page("https://synthetic.test/");
    let n = cfg.actions.max(1);
    let nloc = cfg.locations.max(1) as u64;
    let w = cfg.width.max(1) as u64;
    // Actions independent callbacks can hang off (parse chunks, user events).
    let mut anchors: Vec<ActionId> = Vec::new();
    let loc_names: Vec<String> = (0..nloc)
        .map(|i| match i % 10 {
            0..=4 => format!("Global.g{i}"),
            5 | 6 => format!("Object[{}].f{}", i / 7, i % 7),
            7 => format!("DOMNode[{}].className", i),
            8 => format!("Array[{}]$LEN", i),
            _ => format!("Scope[{}].v", i),
        })
        .collect();
    let values = ["undefined", "null", "0", "1", "true", "\"on\"", "Object[3]"];

    let parse_chunks = (n / 40).max(1);
    let mut last_parse: Option<ActionId> = None;
    let mut last_ui: Option<ActionId> = None;
    let mut nodes: Vec<u64> = Vec::new();
    let mut loops: Vec<Thread> = Vec::new();
    let mut reqs: Vec<Thread> = Vec::new();
    let mut oneshots: VecDeque<(ActionId, u32)> = VecDeque::new();
    let mut recent_net: Vec<ActionId> = Vec::new();
    let mut next_oid = 100u64;
    let mut young = Young::new(cfg.seed, cfg.young);

    for id in 0..n {
        let ctx = id;
        if id < parse_chunks && (id % 3 != 2 || last_ui.is_none()) {
            // Parse chunk: creates nodes, often runs a script.
            b.begin(ActionType::Unknown, "parse", &format!("doc/parse:{id}"));
            if let Some(p) = last_parse {
                b.fork(p, id);
            }
            last_parse = Some(id);
            anchors.push(id);
            for _ in 0..1 + r.below(2) {
                let oid = next_oid;
                next_oid += 1;
                b.write(&format!("NodeTree:{oid}"), None);
                nodes.push(oid);
            }
            if r.chance(40) {
                b.enter(
                    "script:inline #0",
                    Some(&format!("https://synthetic.test/:{id}:1")),
                );
                script_body(&mut b, &mut r, &loc_names, &values, 6, &mut young);
                if let Some(&oid) = nodes.last() {
                    b.write(&format!("BUTTON[{oid}].click"), Some("Function[9]"));
                }
                spawn(&mut r, ctx, &mut loops, &mut reqs, &mut next_oid, 3, w);
                b.exit();
            }
            b.end();
            continue;
        }
        if w > 1 && !anchors.is_empty() && r.below(1000) < INDEPENDENT_PER_MILLE * (w - 1) {
            // An independent callback (image load, message, observer): caused by a parse
            // chunk or a user event, ordered with nothing after it.
            let from = anchors[anchors.len() - 1 - r.skewed(anchors.len() as u64) as usize];
            let (ty, what) = if r.chance(50) {
                (ActionType::Network, "load")
            } else {
                (ActionType::Unknown, "message")
            };
            b.begin(ty, what, &format!("doc/{what}:{id}"));
            b.enter(&format!("fire:{what}"), None);
            script_body(&mut b, &mut r, &loc_names, &values, 3, &mut young);
            b.exit();
            b.end();
            b.fork(from, id);
            continue;
        }
        let roll = r.below(100);
        if roll < 30 && !loops.is_empty() {
            // A timer loop ticks (setInterval, setTimeout recursion, animation frames).
            let k = r.below(loops.len() as u64) as usize;
            let (prev, delay) = (loops[k].last, loops[k].delay);
            b.begin(ActionType::Timer, "timer", &format!("doc/timer:{id}"));
            b.enter("DOM Timer", None);
            script_body(&mut b, &mut r, &loc_names, &values, 4, &mut young);
            b.exit();
            b.end();
            b.fork_delay(prev, id, delay);
            loops[k].last = id;
            if r.below(1000) < 2 {
                loops.swap_remove(k);
            }
            spawn(&mut r, ctx, &mut loops, &mut reqs, &mut next_oid, 0, w);
        } else if roll < 38 && !oneshots.is_empty() {
            // One-shot timers fire about in registration order.
            let k = r.below(oneshots.len().min(3) as u64) as usize;
            let (reg, delay) = oneshots.remove(k).unwrap_or((0, 0));
            b.begin(ActionType::Timer, "timer", &format!("doc/timeout:{id}"));
            b.enter("DOM Timer", None);
            script_body(&mut b, &mut r, &loc_names, &values, 3, &mut young);
            b.exit();
            b.end();
            b.fork_delay(reg, id, delay);
        } else if roll < 46 && !reqs.is_empty() {
            // Next readystatechange of an open request.
            let k = r.below(reqs.len() as u64) as usize;
            let (prev, oid) = (reqs[k].last, reqs[k].oid);
            b.begin(ActionType::Network, "xhr", &format!("doc/xhr:{oid}:{id}"));
            b.enter(
                &format!("fire:readystatechange @ XMLHttpRequest[{oid}]"),
                None,
            );
            b.read(&format!("XMLHttpRequest[{oid}].readystatechange"), None);
            script_body(&mut b, &mut r, &loc_names, &values, 3, &mut young);
            b.exit();
            b.end();
            b.fork(prev, id);
            reqs[k].last = id;
            reqs[k].left -= 1;
            if reqs[k].left == 0 {
                reqs.swap_remove(k);
                // fetch(…).then(…): the response resolves a continuation.
                if r.chance(50) {
                    recent_net.push(id);
                }
            }
        } else if roll < 47 && !recent_net.is_empty() {
            // A promise continuation resolved by a finished response.
            let from = recent_net.remove(0);
            b.begin(
                ActionType::Continuation,
                "promise",
                &format!("doc/then:{id}"),
            );
            script_body(&mut b, &mut r, &loc_names, &values, 3, &mut young);
            b.end();
            b.fork(from, id);
        } else if !nodes.is_empty() {
            // A user event at a parsed node, ordered after the previous user event.
            let oid = nodes[r.skewed(nodes.len().min(200) as u64) as usize];
            let ty = ["mousemove", "click", "scroll", "keydown"][r.below(4) as usize];
            // Kind `event:<type>`, as the runtime writes it: what repair policies' user-event
            // predicates match.
            b.begin(
                ActionType::UserInterface,
                &format!("event:{ty}"),
                &format!("doc/ui:{id}"),
            );
            b.read(&format!("NodeTree:{oid}"), None);
            b.enter(&format!("fire:{ty} @ BUTTON[{oid}]"), None);
            b.read(&format!("BUTTON[{oid}].{ty}"), None);
            script_body(&mut b, &mut r, &loc_names, &values, 4, &mut young);
            b.exit();
            b.end();
            if let Some(p) = last_ui {
                b.join(p, id);
            } else if let Some(p) = last_parse {
                b.join(p, id);
            }
            last_ui = Some(id);
            anchors.push(id);
            if r.chance(15) {
                oneshots.push_back((id, DELAYS[r.below(6) as usize]));
            }
            spawn(&mut r, ctx, &mut loops, &mut reqs, &mut next_oid, 0, w);
        } else {
            b.begin(ActionType::Unknown, "idle", &format!("doc/idle:{id}"));
            b.end();
        }
    }
    b.finish()
}

/// Sometimes starts a timer loop or a request from action `ctx` (`boost` during the parse,
/// `w` times as likely afterwards, with room for `w` times as many loops).
fn spawn(
    r: &mut Rng,
    ctx: ActionId,
    loops: &mut Vec<Thread>,
    reqs: &mut Vec<Thread>,
    next_oid: &mut u64,
    boost: u64,
    w: u64,
) {
    let (pl, pr) = if boost > 0 { (30, 30) } else { (w, w) };
    if r.below(400) < pl * 4 && loops.len() < 24 * w as usize {
        loops.push(Thread {
            last: ctx,
            delay: DELAYS[r.below(6) as usize],
            left: 0,
            oid: 0,
        });
    }
    if r.below(400) < pr {
        reqs.push(Thread {
            last: ctx,
            delay: 0,
            left: 2 + r.below(3) as u32,
            oid: *next_oid,
        });
        *next_oid += 1;
    }
}

/// A few reads and writes with the usual mix (about three reads per write).
fn script_body(
    b: &mut TraceBuilder,
    r: &mut Rng,
    locs: &[String],
    values: &[&str],
    max: u64,
    young: &mut Young,
) {
    for _ in 0..1 + r.below(max) {
        let l = &locs[r.skewed(locs.len() as u64) as usize];
        let v = values[r.below(values.len() as u64) as usize];
        if r.chance(75) {
            b.read(l, Some(v));
        } else {
            b.write(l, Some(v));
        }
    }
    young.touch(b, values);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generates_the_requested_size_deterministically() {
        let cfg = SynthConfig {
            actions: 2_000,
            locations: 200,
            seed: 7,
            width: 1,
            young: 0,
        };
        let a = generate(&cfg);
        let b = generate(&cfg);
        assert_eq!(a.actions.len(), 2_000);
        assert_eq!(a, b);
        assert!(a.arcs.iter().all(|x| x.tail < x.head));
        let an = crate::analyze(&a, &crate::Options::default()).unwrap();
        assert!(!an.races.is_empty());
        assert!(an.chains.chains() < 2_000);
    }
}
