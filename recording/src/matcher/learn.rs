//! Learned request patterns: the request-clustering phase of server-interface learning (AIL),
//! used to recognise "the same" request when URLs carry timestamps, nonces or session ids.
//!
//! Features of a request are its path fragments by position (`#0`, `#1`, ...), its query
//! parameter names (`?name`) and its form / JSON body keys (`~name`). The *signature* is the
//! method, scheme, host and the set of feature names; requests with different signatures never
//! share a pattern. Per signature we pick which features are *keys* (constant in a pattern) and
//! which are *wildcards*: every key/wildcard partition is scored by the number of splits plus
//! merges needed to turn the clustering of the samples by response class into the clustering by
//! key values, the cheapest wins, ties go to fewer wildcards. A feature can only become a wildcard
//! once it has shown at least two distinct values (hence: record two sessions, so session ids
//! vary). Above [`EXHAUSTIVE_MAX`] candidate features a greedy search replaces enumeration.

use super::features::RequestFeatures;
use super::lookup::RecordedRequest;
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};

/// Largest number of wildcard candidates searched exhaustively (2^n partitions).
pub const EXHAUSTIVE_MAX: usize = 12;

/// One learned request pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    /// Method, scheme, host and feature names shared by its requests.
    pub signature: String,
    /// Key features and their constant values.
    pub keys: Vec<(String, String)>,
    /// Features that match any value.
    pub wildcards: Vec<String>,
    /// Recorded requests (indices into the matcher's list, recording order).
    pub samples: Vec<usize>,
}

impl std::fmt::Display for Pattern {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut parts: Vec<String> = self.keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
        parts.extend(self.wildcards.iter().map(|w| format!("{w}=*")));
        write!(f, "{} [{}]", self.signature, parts.join(" "))
    }
}

/// Feature name -> value of one request.
type FeatureMap = BTreeMap<String, String>;

/// Features of one request: signature plus named values.
pub(crate) fn signature_and_features(f: &RequestFeatures) -> (String, BTreeMap<String, String>) {
    let mut feats: BTreeMap<String, String> = BTreeMap::new();
    for (i, frag) in f.path.iter().enumerate() {
        feats.insert(format!("#{i}"), frag.clone());
    }
    let mut add = |prefix: char, pairs: &[(String, String)]| {
        for (k, v) in pairs {
            feats
                .entry(format!("{prefix}{k}"))
                .and_modify(|old| {
                    old.push('\u{0}');
                    old.push_str(v);
                })
                .or_insert_with(|| v.clone());
        }
    };
    add('?', &f.query);
    if let Some(b) = &f.body_params {
        add('~', b);
    }
    let names: Vec<&str> = feats.keys().map(String::as_str).collect();
    let sig = format!(
        "{} {}://{} {{{}}}",
        f.method,
        f.scheme,
        f.host,
        names.join(",")
    );
    (sig, feats)
}

/// All patterns, indexed by signature for lookup.
#[derive(Debug, Default)]
pub(crate) struct Learned {
    by_signature: HashMap<String, Vec<Pattern>>,
}

impl Learned {
    /// Learns patterns from recorded requests (`features[i]` belongs to `recorded[i]`).
    pub(crate) fn learn(recorded: &[RecordedRequest], features: &[RequestFeatures]) -> Learned {
        let mut groups: BTreeMap<String, Vec<(usize, FeatureMap)>> = BTreeMap::new();
        for (i, f) in features.iter().enumerate() {
            let (sig, feats) = signature_and_features(f);
            groups.entry(sig).or_default().push((i, feats));
        }
        let mut by_signature = HashMap::new();
        for (sig, samples) in groups {
            let classes: Vec<&str> = samples
                .iter()
                .map(|(i, _)| recorded[*i].response_class.as_str())
                .collect();
            let names: Vec<String> = samples
                .first()
                .map(|(_, f)| f.keys().cloned().collect())
                .unwrap_or_default();
            let values: Vec<Vec<&str>> = samples
                .iter()
                .map(|(_, f)| names.iter().map(|n| f[n].as_str()).collect())
                .collect();
            let wild = choose_wildcards(&values, &classes, names.len());
            let mut patterns: BTreeMap<Vec<&str>, Vec<usize>> = BTreeMap::new();
            for (s, vals) in values.iter().enumerate() {
                let key: Vec<&str> = (0..names.len())
                    .filter(|j| !wild[*j])
                    .map(|j| vals[j])
                    .collect();
                patterns.entry(key).or_default().push(samples[s].0);
            }
            let key_names: Vec<&String> = (0..names.len())
                .filter(|j| !wild[*j])
                .map(|j| &names[j])
                .collect();
            let wildcards: Vec<String> = (0..names.len())
                .filter(|j| wild[*j])
                .map(|j| names[j].clone())
                .collect();
            let list: Vec<Pattern> = patterns
                .into_iter()
                .map(|(key, samples)| Pattern {
                    signature: sig.clone(),
                    keys: key_names
                        .iter()
                        .zip(key)
                        .map(|(n, v)| ((*n).clone(), v.to_owned()))
                        .collect(),
                    wildcards: wildcards.clone(),
                    samples,
                })
                .collect();
            by_signature.insert(sig, list);
        }
        Learned { by_signature }
    }

    /// The pattern `f` falls into, as (printable key, samples).
    pub(crate) fn lookup(&self, f: &RequestFeatures) -> Option<&Pattern> {
        let (sig, feats) = signature_and_features(f);
        let patterns = self.by_signature.get(&sig)?;
        patterns
            .iter()
            .find(|p| p.keys.iter().all(|(k, v)| feats.get(k) == Some(v)))
    }

    /// Every pattern, sorted by signature then keys.
    pub(crate) fn patterns(&self) -> Vec<Pattern> {
        let mut all: Vec<Pattern> = self.by_signature.values().flatten().cloned().collect();
        all.sort_by(|a, b| (&a.signature, &a.keys).cmp(&(&b.signature, &b.keys)));
        all
    }
}

/// Splits plus merges needed to go from the clustering `old` (labels per sample) to the
/// clustering by `new` labels.
pub fn partition_cost<A: Ord, B: Ord>(old: &[A], new: &[B]) -> usize {
    let mut old_to_new: BTreeMap<&A, BTreeSet<&B>> = BTreeMap::new();
    let mut new_to_old: BTreeMap<&B, BTreeSet<&A>> = BTreeMap::new();
    for (a, b) in old.iter().zip(new) {
        old_to_new.entry(a).or_default().insert(b);
        new_to_old.entry(b).or_default().insert(a);
    }
    let splits: usize = old_to_new.values().map(|s| s.len() - 1).sum();
    let merges: usize = new_to_old.values().map(|s| s.len() - 1).sum();
    splits + merges
}

/// Samples with values and classes interned as small integers, so the partition search
/// compares integers instead of strings.
struct Interned {
    /// `values[s][j]`: id of feature `j`'s value in sample `s`.
    values: Vec<Vec<u32>>,
    /// Class id per sample.
    classes: Vec<u32>,
    /// Number of distinct classes.
    n_classes: usize,
}

impl Interned {
    fn new(values: &[Vec<&str>], classes: &[&str], n_features: usize) -> Interned {
        let mut columns: Vec<HashMap<&str, u32>> = vec![HashMap::new(); n_features];
        let values = values
            .iter()
            .map(|v| {
                v.iter()
                    .zip(columns.iter_mut())
                    .map(|(x, col)| {
                        let next = col.len() as u32;
                        *col.entry(x).or_insert(next)
                    })
                    .collect()
            })
            .collect();
        let mut class_ids: HashMap<&str, u32> = HashMap::new();
        let classes = classes
            .iter()
            .map(|c| {
                let next = class_ids.len() as u32;
                *class_ids.entry(c).or_insert(next)
            })
            .collect();
        Interned {
            values,
            classes,
            n_classes: class_ids.len(),
        }
    }

    /// Splits + merges of keying on the features not flagged in `wild`. With P the distinct
    /// (old cluster, new cluster) pairs, splits = P - #old and merges = P - #new.
    fn cost(&self, wild: &[bool]) -> usize {
        let mut groups: HashMap<Vec<u32>, u32> = HashMap::new();
        let mut pairs: HashSet<(u32, u32)> = HashSet::new();
        for (v, class) in self.values.iter().zip(&self.classes) {
            let key: Vec<u32> = v
                .iter()
                .zip(wild)
                .filter(|(_, w)| !**w)
                .map(|(x, _)| *x)
                .collect();
            let next = groups.len() as u32;
            let g = *groups.entry(key).or_insert(next);
            pairs.insert((*class, g));
        }
        2 * pairs.len() - self.n_classes - groups.len()
    }
}

/// Chooses the wildcard set for one signature: `values[s][j]` is feature `j` of sample `s`,
/// `classes[s]` the sample's response class. Returns `wild[j]`.
pub fn choose_wildcards(values: &[Vec<&str>], classes: &[&str], n_features: usize) -> Vec<bool> {
    // Only features seen with two or more distinct values may become wildcards.
    let candidates: Vec<usize> = (0..n_features)
        .filter(|&j| {
            let mut seen = BTreeSet::new();
            values.iter().any(|v| {
                seen.insert(v[j]);
                seen.len() >= 2
            })
        })
        .collect();
    let mut wild = vec![false; n_features];
    if candidates.is_empty() {
        return wild;
    }
    let interned = Interned::new(values, classes, n_features);
    if candidates.len() <= EXHAUSTIVE_MAX {
        let mut best: Option<(usize, u32, u32)> = None; // (cost, wildcards, mask)
        for mask in 0u32..(1u32 << candidates.len()) {
            let mut w = vec![false; n_features];
            for (bit, &j) in candidates.iter().enumerate() {
                w[j] = mask & (1 << bit) != 0;
            }
            let c = interned.cost(&w);
            let cand = (c, mask.count_ones(), mask);
            if best.is_none_or(|b| (cand.0, cand.1) < (b.0, b.1)) {
                best = Some(cand);
            }
        }
        if let Some((_, _, mask)) = best {
            for (bit, &j) in candidates.iter().enumerate() {
                wild[j] = mask & (1 << bit) != 0;
            }
        }
        return wild;
    }
    // Greedy: start all-key, flip the single candidate that lowers the cost most, repeat.
    let mut cost = interned.cost(&wild);
    loop {
        let mut best: Option<(usize, usize)> = None;
        for &j in &candidates {
            if wild[j] {
                continue;
            }
            wild[j] = true;
            let c = interned.cost(&wild);
            wild[j] = false;
            if c < cost && best.is_none_or(|(bc, _)| c < bc) {
                best = Some((c, j));
            }
        }
        match best {
            Some((c, j)) => {
                wild[j] = true;
                cost = c;
            }
            None => return wild,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    proptest! {
        /// The interned cost used by the search equals the reference split+merge count.
        #[test]
        fn interned_cost_matches_reference(
            rows in prop::collection::vec((0u8..3, 0u8..3, 0u8..4), 1..30),
            wild in prop::collection::vec(any::<bool>(), 2),
        ) {
            let names = ["a", "b", "c", "d"];
            let values: Vec<Vec<&str>> = rows.iter().map(|(x, y, _)| vec![names[*x as usize], names[*y as usize]]).collect();
            let classes: Vec<&str> = rows.iter().map(|(_, _, c)| names[*c as usize]).collect();
            let interned = Interned::new(&values, &classes, 2);
            let keys: Vec<Vec<&str>> = values
                .iter()
                .map(|v| v.iter().zip(&wild).filter(|(_, w)| !**w).map(|(x, _)| *x).collect())
                .collect();
            prop_assert_eq!(interned.cost(&wild), partition_cost(&classes, &keys));
        }
    }
}
