//! The last tier: the closest recorded request of the same method and host, by path and query
//! overlap (after WPR's `2M/T` key-overlap score, extended to whole paths).

use super::features::RequestFeatures;

/// How similar two requests of the same method and host are; `None` when their paths are too
/// different to serve one for the other (a script must not be answered with the home page).
pub(crate) fn score(live: &RequestFeatures, rec: &RequestFeatures) -> Option<f64> {
    let path_score = if live.path == rec.path {
        1.0
    } else {
        if live.path.len() != rec.path.len() || live.path.first() != rec.path.first() {
            return None;
        }
        let equal = live
            .path
            .iter()
            .zip(&rec.path)
            .filter(|(a, b)| a == b)
            .count();
        if equal * 2 < live.path.len() {
            return None;
        }
        equal as f64 / live.path.len() as f64
    };
    let params = |f: &RequestFeatures| -> Vec<(String, String)> {
        let mut v = f.query.clone();
        if let Some(b) = &f.body_params {
            v.extend(b.iter().cloned());
        }
        v
    };
    let (a, b) = (params(live), params(rec));
    let total = a.len() + b.len();
    let param_score = if total == 0 {
        1.0
    } else {
        let equal_pairs = a.iter().filter(|p| b.contains(p)).count();
        let equal_names = a
            .iter()
            .filter(|(k, _)| b.iter().any(|(k2, _)| k2 == k))
            .count();
        // A shared name counts half as much as a shared name=value pair.
        (2.0 * equal_pairs as f64 + equal_names as f64) / (1.5 * total as f64)
    };
    Some(2.0 * path_score + param_score)
}

/// Index of the best recorded request for `live` (earliest on ties), or the reason for a miss.
pub(crate) fn closest(
    live: &RequestFeatures,
    recorded: &[RequestFeatures],
) -> Result<usize, String> {
    let same_host: Vec<usize> = (0..recorded.len())
        .filter(|&i| recorded[i].host == live.host && recorded[i].scheme == live.scheme)
        .collect();
    if same_host.is_empty() {
        return Err(format!(
            "no recorded request for {}://{}",
            live.scheme, live.host
        ));
    }
    let same_method: Vec<usize> = same_host
        .iter()
        .copied()
        .filter(|&i| recorded[i].method == live.method)
        .collect();
    if same_method.is_empty() {
        return Err(format!(
            "no recorded {} request for {}://{}",
            live.method, live.scheme, live.host
        ));
    }
    let mut best: Option<(usize, f64)> = None;
    for &i in &same_method {
        if let Some(s) = score(live, &recorded[i])
            && best.is_none_or(|(_, b)| s > b)
        {
            best = Some((i, s));
        }
    }
    match best {
        Some((i, _)) => Ok(i),
        None => {
            // Point at the nearest path to make the miss easy to debug.
            let nearest = same_method
                .iter()
                .max_by_key(|&&i| {
                    let common = recorded[i]
                        .path
                        .iter()
                        .zip(&live.path)
                        .take_while(|(a, b)| a == b)
                        .count();
                    (common, std::cmp::Reverse(i))
                })
                .map(|&i| recorded[i].describe())
                .unwrap_or_default();
            Err(format!(
                "no recorded request close to {} (nearest recorded: {nearest})",
                live.describe()
            ))
        }
    }
}
