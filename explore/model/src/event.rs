//! Event identities. An event is named by a string that survives re-execution (a runtime
//! stable id, a proxy item, a user gesture); the explorer interns it once and works with small
//! numbers from then on.

use serde::{Deserialize, Serialize};
use std::collections::HashMap;

/// An interned event identity.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Ev(pub u32);

/// The event names seen so far, in first-seen order.
#[derive(Clone, Debug, Default, Serialize, Deserialize)]
pub struct EventTable {
    names: Vec<String>,
    #[serde(skip)]
    index: HashMap<String, Ev>,
}

impl EventTable {
    /// The id of `name`, allocated on first sight.
    pub fn intern(&mut self, name: &str) -> Ev {
        if self.index.len() != self.names.len() {
            self.rebuild();
        }
        if let Some(&e) = self.index.get(name) {
            return e;
        }
        let e = Ev(self.names.len() as u32);
        self.names.push(name.to_string());
        self.index.insert(name.to_string(), e);
        e
    }

    /// The id of `name` if it was interned.
    pub fn lookup(&self, name: &str) -> Option<Ev> {
        match self.index.get(name) {
            Some(&e) => Some(e),
            None if self.index.len() != self.names.len() => self
                .names
                .iter()
                .position(|n| n == name)
                .map(|i| Ev(i as u32)),
            None => None,
        }
    }

    /// The name of `e` (`""` for an id this table never gave out).
    pub fn name(&self, e: Ev) -> &str {
        self.names.get(e.0 as usize).map_or("", String::as_str)
    }

    /// Number of events interned.
    pub fn len(&self) -> usize {
        self.names.len()
    }

    /// True before the first event.
    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }

    /// The index is not serialised: rebuilt on first use after loading.
    fn rebuild(&mut self) {
        self.index = self
            .names
            .iter()
            .enumerate()
            .map(|(i, n)| (n.clone(), Ev(i as u32)))
            .collect();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_survives_serialisation() {
        let mut t = EventTable::default();
        let a = t.intern("a");
        let b = t.intern("b");
        assert_eq!(t.intern("a"), a);
        let json = serde_json::to_string(&t).unwrap();
        let mut back: EventTable = serde_json::from_str(&json).unwrap();
        assert_eq!(back.lookup("b"), Some(b));
        assert_eq!(back.intern("b"), b);
        assert_eq!(back.intern("c"), Ev(2));
        assert_eq!(back.name(a), "a");
        assert_eq!(back.name(Ev(9)), "");
    }
}
