//! Race candidates (EventRacer §4.2): per location, consecutive writes, the last write before
//! each read and each read with the next write after it — at most `p − 1 + 2q` pairs for `p`
//! writes and `q` reads — kept when the two actions are unordered.

use crate::accesses::{AccessKind, Accesses};
use crate::clocks::Clocks;

/// A race between two kept accesses (indices into [`Accesses::all`]); `first` is earlier in
/// the trace.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Race {
    /// Location.
    pub loc: u32,
    /// Earlier access.
    pub first: u32,
    /// Later access.
    pub second: u32,
}

/// The race's kind, e.g. `WRITE-READ` or `READ-UPDATE`.
pub fn kind_name(acc: &Accesses, r: &Race) -> String {
    // Not format!: reports name the kind of every race shown (a tenth of the text report).
    [
        acc.get(r.first).kind.name(),
        "-",
        acc.get(r.second).kind.name(),
    ]
    .concat()
}

/// All candidate races, sorted by the trace position of the second access, then the first.
pub fn candidates(acc: &Accesses, clocks: &Clocks) -> Vec<Race> {
    let mut out = Vec::new();
    let all = acc.all();
    for l in 0..acc.locs.len() as u32 {
        let range = acc.range_of(l);
        let xs = &all[range.start as usize..range.end as usize];
        if xs.len() < 2 || !xs.iter().any(|x| x.kind.is_write()) {
            continue;
        }
        let mut last_write: Option<u32> = None;
        // Reads since the last write, waiting for the next write.
        let mut pending: Vec<u32> = Vec::new();
        for (k, x) in xs.iter().enumerate() {
            let i = range.start + k as u32;
            let check = |a: u32, out: &mut Vec<Race>| {
                let xa = &all[a as usize];
                if xa.action != x.action && !clocks.ordered(xa.action, x.action) {
                    out.push(Race {
                        loc: l,
                        first: a,
                        second: i,
                    });
                }
            };
            if let Some(w) = last_write {
                check(w, &mut out);
            }
            if x.kind == AccessKind::Read {
                pending.push(i);
            } else {
                for &r in &pending {
                    check(r, &mut out);
                }
                pending.clear();
                last_write = Some(i);
            }
        }
    }
    out.sort_unstable_by_key(|r| {
        let (b, a) = (
            all[r.second as usize].op as u64,
            all[r.first as usize].op as u64,
        );
        (b << 32) | a
    });
    out
}
