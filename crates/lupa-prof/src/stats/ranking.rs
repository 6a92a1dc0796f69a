//! Ranking instability (§4.4): per-method rank variability over runs, weighted by
//! discounted cumulated gain, and the value for random rankings.

use super::*;
/// The discounted-cumulated-gain weight of rank `i` (1-based), `w(i) = 1/ln(i + 1)`
/// (Järvelin & Kekäläinen, used by the paper §4.4). `w(1) = 1.4427`, `w(9) = 0.4551`.
pub fn dcg_weight(i: usize) -> f64 {
    1.0 / ((i as f64) + 1.0).ln()
}

/// `Σ_{i=1..n} s(i)·w(i)` for rank standard deviations given in reference order
/// (`sds[0]` is the method ranked first). This is ψ once the `s(i)` are known.
pub fn weighted_instability(sds: &[f64]) -> f64 {
    sds.iter()
        .enumerate()
        .map(|(i, s)| s * dcg_weight(i + 1))
        .sum()
}

/// Which method is "the method ranked i" in ψ's sum (see [`ranking_instability`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ReferenceOrder {
    /// Methods ordered by their mean rank over all rankings (ties: the better
    /// best rank, then the name). Symmetric in the rankings.
    MeanRank,
    /// Methods in the order of the first ranking (the reference profile).
    FirstRanking,
}

/// How one method's rank varies across rankings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankVariability {
    /// The method.
    pub name: String,
    /// Its rank (1-based) in each ranking; a method missing from a ranking of
    /// length L gets rank L + 1.
    pub ranks: Vec<usize>,
    /// Mean rank.
    pub mean: f64,
    /// Sample standard deviation of the rank (the paper's `s_es`).
    pub sd: f64,
    /// Weight `w(i)` of its position `i` in the reference order.
    pub weight: f64,
}

/// The result of [`ranking_instability`].
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RankingInstability {
    /// ψ_n.
    pub psi: f64,
    /// The first n methods in reference order, with their rank statistics.
    pub methods: Vec<RankVariability>,
}

/// ψ_n, the instability of the first `n` positions of `k ≥ 2` rankings (Bergel
/// 2011, §4.4).
///
/// Each ranking lists method names, the most costly first. For each method its
/// rank varies across the rankings; let `s(m)` be the sample standard deviation
/// (`n − 1` denominator) of its ranks. The paper defines
///
/// ```text
///     ψ_n(P) = Σ_{i=1..n} s(m_i) · w(i),    w(i) = 1 / ln(i + 1)
/// ```
///
/// where `m_i` is "the method ranked i" — so the variability of methods near the
/// top, which users look at, weighs more. ψ = 0 iff the first n methods always
/// get the same rank. (The printed formula reads `w(n)`, but its worked example
/// uses `w(i)`: `0/ln 2 + … + 0.316/ln 5 + 0.516/ln 6 + … + 1.989/ln 10 = 3.177`.)
///
/// The paper does not say which ranking defines "the method ranked i" (its Table 1
/// example matches both the first profile's order and a sort by `s`); `order`
/// makes the choice explicit. Details fixed here:
///
/// * the universe is the union of the names in all rankings;
/// * a method missing from a ranking of length L has rank L + 1 there (rankings
///   truncated to a top-L list are thus treated conservatively);
/// * a name repeated in one ranking counts at its first position;
/// * if fewer than `n` methods exist, the sum stops at the last one.
pub fn ranking_instability<S: AsRef<str>>(
    rankings: &[Vec<S>],
    n: usize,
    order: ReferenceOrder,
) -> Result<RankingInstability, StatsError> {
    if rankings.len() < 2 {
        return Err(StatsError::TooFewPoints {
            needed: 2,
            got: rankings.len(),
        });
    }
    // Universe: first appearance order across rankings.
    let mut names: Vec<&str> = Vec::new();
    let mut index: rustc_hash::FxHashMap<&str, usize> = rustc_hash::FxHashMap::default();
    for r in rankings {
        for s in r {
            let s = s.as_ref();
            if !index.contains_key(s) {
                index.insert(s, names.len());
                names.push(s);
            }
        }
    }
    let ranks: Vec<Vec<usize>> = rankings
        .iter()
        .map(|r| {
            let mut rk = vec![r.len() + 1; names.len()];
            let mut set = vec![false; names.len()];
            for (pos, s) in r.iter().enumerate() {
                if let Some(&m) = index.get(s.as_ref())
                    && !std::mem::replace(&mut set[m], true)
                {
                    rk[m] = pos + 1;
                }
            }
            rk
        })
        .collect();
    let first: Vec<usize> = {
        let mut seen = vec![false; names.len()];
        let mut v = Vec::new();
        for s in &rankings[0] {
            if let Some(&m) = index.get(s.as_ref())
                && !std::mem::replace(&mut seen[m], true)
            {
                v.push(m);
            }
        }
        // Methods absent from the first ranking follow, in universe order.
        v.extend((0..names.len()).filter(|&m| !seen[m]));
        v
    };
    let (psi, picked) =
        instability_of_ranks(&ranks, n, order, &first, &|a, b| names[a].cmp(names[b]));
    let methods = picked
        .into_iter()
        .enumerate()
        .map(|(i, (m, mean, sd))| RankVariability {
            name: names[m].to_string(),
            ranks: ranks.iter().map(|r| r[m]).collect(),
            mean,
            sd,
            weight: dcg_weight(i + 1),
        })
        .collect();
    Ok(RankingInstability { psi, methods })
}

/// The core of ψ on rank tables: `ranks[j][m]` is method m's rank in ranking j.
/// `first` is the first ranking's order of methods (all methods), `tie` breaks ties
/// in [`ReferenceOrder::MeanRank`]. Answers ψ and the picked (method, mean, sd).
fn instability_of_ranks(
    ranks: &[Vec<usize>],
    n: usize,
    order: ReferenceOrder,
    first: &[usize],
    tie: &dyn Fn(usize, usize) -> std::cmp::Ordering,
) -> (f64, Vec<(usize, f64, f64)>) {
    let methods = first.len();
    let stat = |m: usize| {
        let v: Vec<f64> = ranks.iter().map(|r| r[m] as f64).collect();
        (
            mean(&v).unwrap_or(f64::NAN),
            sample_sd(&v).unwrap_or(f64::NAN),
        )
    };
    let chosen: Vec<usize> = match order {
        ReferenceOrder::FirstRanking => first.iter().copied().take(n).collect(),
        ReferenceOrder::MeanRank => {
            let means: Vec<f64> = (0..methods).map(|m| stat(m).0).collect();
            let best: Vec<usize> = (0..methods)
                .map(|m| ranks.iter().map(|r| r[m]).min().unwrap_or(usize::MAX))
                .collect();
            let mut all: Vec<usize> = (0..methods).collect();
            all.sort_by(|&a, &b| {
                means[a]
                    .total_cmp(&means[b])
                    .then(best[a].cmp(&best[b]))
                    .then_with(|| tie(a, b))
            });
            all.truncate(n);
            all
        }
    };
    let mut psi = 0.0;
    let mut picked = Vec::with_capacity(chosen.len());
    for (i, &m) in chosen.iter().enumerate() {
        let (mu, sd) = stat(m);
        psi += sd * dcg_weight(i + 1);
        picked.push((m, mu, sd));
    }
    (psi, picked)
}

/// A small deterministic PRNG (SplitMix64) for the Monte Carlo estimate.
#[derive(Debug, Clone)]
struct SplitMix64(u64);

impl SplitMix64 {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..bound` (`bound > 0`), without modulo bias.
    fn below(&mut self, bound: u64) -> u64 {
        let zone = u64::MAX - (u64::MAX % bound);
        loop {
            let v = self.next();
            if v < zone {
                return v % bound;
            }
        }
    }
}

/// The expected ψ_n of `k` independent uniformly random rankings of `methods`
/// methods, estimated by Monte Carlo over `trials` draws with a fixed `seed`
/// (deterministic), using the same definition and `order` as
/// [`ranking_instability`]. The paper's reference point "ψ10(R) = 173" for 10
/// random rankings corresponds to about 90 methods (see
/// [`random_instability_bound`]).
pub fn random_ranking_instability(
    n: usize,
    k: usize,
    methods: usize,
    trials: usize,
    seed: u64,
    order: ReferenceOrder,
) -> Result<f64, StatsError> {
    if k < 2 {
        return Err(StatsError::TooFewPoints { needed: 2, got: k });
    }
    if trials == 0 || methods == 0 {
        return Err(StatsError::TooFewPoints {
            needed: 1,
            got: trials.min(methods),
        });
    }
    let mut rng = SplitMix64(seed);
    let mut total = 0.0;
    let mut perm: Vec<usize> = (0..methods).collect();
    let mut ranks = vec![vec![0usize; methods]; k];
    let mut first = vec![0usize; methods];
    for _ in 0..trials {
        for (j, rk) in ranks.iter_mut().enumerate() {
            // Fisher–Yates shuffle: perm[pos] is the method at rank pos + 1.
            for i in (1..methods).rev() {
                let r = rng.below(i as u64 + 1) as usize;
                perm.swap(i, r);
            }
            for (pos, &m) in perm.iter().enumerate() {
                rk[m] = pos + 1;
            }
            if j == 0 {
                first.copy_from_slice(&perm);
            }
        }
        let (psi, _) = instability_of_ranks(&ranks, n, order, &first, &|a, b| a.cmp(&b));
        total += psi;
    }
    Ok(total / trials as f64)
}

/// A closed-form reference for random rankings: `σ·Σ_{i=1..n} w(i)` with
/// `σ = sqrt((N² − 1)/12)`, the standard deviation of a rank drawn uniformly from
/// 1..N (N = `methods`). It is the limit of ψ_n for a *fixed* set of n methods as
/// the number of rankings grows, and an upper bound of its expectation for any
/// number of rankings (E(s) ≤ σ). With N = 91, n = 10: 26.27 × 6.555 = 172.2,
/// the paper's "ψ10(R) = 173". Choosing the methods from the rankings themselves
/// shifts it: [`ReferenceOrder::MeanRank`] picks the least scattered ones (lower
/// ψ), [`ReferenceOrder::FirstRanking`] pins them to ranks 1..n in one ranking
/// (higher ψ); use [`random_ranking_instability`] for a like-for-like reference.
pub fn random_instability_bound(n: usize, methods: usize) -> f64 {
    let big_n = methods as f64;
    let sigma = ((big_n * big_n - 1.0) / 12.0).max(0.0).sqrt();
    sigma * (1..=n.min(methods)).map(dcg_weight).sum::<f64>()
}
