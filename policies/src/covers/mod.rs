//! The augmented happens-before ≤_P (EventRaceCommander §V-C): a policy P orders `u` before
//! `v` when P would postpone or discard `v` until `u` has run. This module runs P over a
//! recorded trace (the trace's actions are the events; fork arcs are the fork operations) and
//! collects those orderings as extra edges, so a caller can ask, for each race of the trace,
//! whether P orders its two actions.
//!
//! An edge `u → v` is added when a postpone or discard rule matches `begin(v)` and expires
//! exactly when `u` has run (`arrived(u)`; `parsed`: the DOMContentLoaded action; `loaded`:
//! the window load action; `arrived(pattern)` when one action of the trace matches it), and
//! the rule is present in every schedule: it is an initial rule, or the action that added it
//! is ordered before `v` (by happens-before and the edges found so far). Whether the rule had
//! already expired when `v` ran in this trace does not matter: in another order it would not
//! have. Time limits and `js` expirations order nothing. Two approximations: the order of
//! fork operations in unordered actions is taken from the trace (it decides which fork a
//! `once` rule sees first), and CSS selectors are judged from the trace's target labels
//! (`tag`, `#id`, `tag#id`; others never match, so no ordering is claimed from them).
//!
//! One job per file, each using only those listed before it:
//! - `csr.rs`: adjacency lists in one array;
//! - `facts.rs`: what the simulation reads from the trace ([`TraceFacts`], [`Base`]);
//! - `matching.rs`: whether an action matches a rule's predicate;
//! - `instances.rs`: rule instances, the initial ones and their extensions;
//! - `index.rs`: where each live instance is looked for, per operation;
//! - `augmented.rs`: ≤_P of one simulation ([`Augmented`]) and the questions asked of it;
//! - `back.rs`: the backward search the simulation asks as it goes;
//! - `simulate.rs`: the simulation itself, and whether a policy can order anything at all;
//! - `answers.rs`: which pairs a simulated shipped policy orders, within a budget;
//! - `shipped.rs`: the shipped policies over one trace, on one or two threads.
//!
//! `oracle.rs` (tests only) is the first, plain implementation the indexed one is checked
//! against.

mod answers;
mod augmented;
mod back;
mod csr;
mod facts;
mod index;
mod instances;
mod matching;
#[cfg(test)]
mod oracle;
mod shipped;
mod simulate;
#[cfg(test)]
mod tests;

pub use augmented::{Augmented, PolicyEdge};
pub use facts::{Base, TraceFacts};
pub use shipped::{
    SHIPPED_BUDGET, ShippedOrderings, shipped_orderings, shipped_orderings_deferred,
    shipped_orderings_within,
};
