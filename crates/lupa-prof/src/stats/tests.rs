use super::*;

fn close(a: f64, b: f64, tol: f64) -> bool {
    (a - b).abs() <= tol
}

macro_rules! assert_close {
    ($a:expr, $b:expr, $tol:expr) => {{
        let (a, b) = ($a, $b);
        assert!(close(a, b, $tol), "{a} != {b} (tol {})", $tol);
    }};
}

#[test]
fn t_quantiles_match_tables() {
    // Two-sided 95% values from any t table (3 decimals), and more precise
    // reference values (R: qt(0.975, df)).
    let table = [
        (1.0, 12.706, 12.706_204_736),
        (2.0, 4.303, 4.302_652_730),
        (5.0, 2.571, 2.570_581_836),
        (10.0, 2.228, 2.228_138_852),
        (14.0, 2.145, 2.144_786_688),
        (30.0, 2.042, 2.042_272_456),
        (100.0, 1.984, 1.983_971_519),
    ];
    for (df, rounded, precise) in table {
        let t = student_t_quantile(0.975, df).expect("t");
        assert_close!(t, precise, 1e-6);
        assert_close!((t * 1000.0).round() / 1000.0, rounded, 1e-9);
        assert_close!(student_t_quantile(0.025, df).expect("t"), -precise, 1e-6);
    }
    // Other levels: qt(0.95, 1) = 6.313752, qt(0.995, 1) = 63.656741,
    // qt(0.99, 3) = 4.540703, qt(0.9, 20) = 1.325341, qt(0.995, 7) = 3.499483.
    assert_close!(student_t_quantile(0.95, 1.0).expect("t"), 6.313_752, 1e-5);
    assert_close!(student_t_quantile(0.995, 1.0).expect("t"), 63.656_741, 1e-4);
    assert_close!(student_t_quantile(0.99, 3.0).expect("t"), 4.540_703, 1e-5);
    assert_close!(student_t_quantile(0.9, 20.0).expect("t"), 1.325_341, 1e-5);
    assert_close!(student_t_quantile(0.995, 7.0).expect("t"), 3.499_483, 1e-5);
    // Non-integer degrees of freedom work too, and all df 1..=100 are
    // consistent with the CDF.
    for df in 1..=100 {
        let df = df as f64;
        let t = student_t_quantile(0.975, df).expect("t");
        assert_close!(student_t_cdf(t, df), 0.975, 1e-10);
    }
    assert!(student_t_quantile(1.0, 3.0).is_err());
    assert!(student_t_quantile(0.5, 0.0).is_err());
}

#[test]
fn t_cdf_values() {
    // df = 1 is Cauchy: P(T ≤ 1) = 3/4.
    assert_close!(student_t_cdf(1.0, 1.0), 0.75, 1e-12);
    assert_close!(student_t_cdf(0.0, 7.0), 0.5, 1e-15);
    // df = 2: F(t) = 1/2 + t / (2·sqrt(2 + t²)); F(1) = 0.5 + 1/(2√3) = 0.788675.
    assert_close!(student_t_cdf(1.0, 2.0), 0.788_675_134_6, 1e-9);
    assert_close!(ln_gamma(5.0), (24.0f64).ln(), 1e-12);
    assert_close!(ln_gamma(0.5), std::f64::consts::PI.sqrt().ln(), 1e-12);
}

#[test]
fn descriptive() {
    // 2 4 4 4 5 5 7 9: mean 5; squared deviations 9+1+1+1+0+0+4+16 = 32;
    // s² = 32/7 = 4.571429, s = 2.138090, CV = 2.138090/5 = 0.427618.
    let d = [2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0];
    let s = Summary::of(&d).expect("summary");
    assert_eq!(s.n, 8);
    assert_close!(s.mean, 5.0, 1e-12);
    assert_close!(s.sd, 2.138_089_935, 1e-9);
    assert_close!(s.cv, 0.427_617_987, 1e-9);
    assert_close!(coefficient_of_variation(&d).expect("cv"), s.cv, 1e-15);
    assert!(Summary::of(&[1.0]).is_err());
    assert!(coefficient_of_variation(&[-1.0, 1.0]).is_err());
}

#[test]
fn cv_ratio_of_the_paper() {
    // Table 2 of the paper: c_time and c_messages (percent) of 16 applications.
    // Means: 223.24/16 = 13.9525 and 9.83/16 = 0.614375; ratio 22.7101. The
    // paper divides the rounded means, 13.95 / 0.61 = 22.86.
    let c_time = [
        16.67, 5.54, 7.24, 24.56, 23.93, 3.77, 2.08, 46.99, 18.30, 25.71, 0.77, 6.06, 1.26, 32.94,
        1.44, 5.98,
    ];
    let c_messages = [
        1.05, 1.44, 0.22, 2.47, 0.99, 0.14, 0.85, 0.52, 0.06, 0.17, 0.10, 0.44, 0.46, 0.46, 0.35,
        0.11,
    ];
    assert_close!(mean(&c_time).expect("m"), 13.9525, 1e-9);
    assert_close!(mean(&c_messages).expect("m"), 0.614_375, 1e-9);
    assert_close!(cv_ratio(&c_time, &c_messages).expect("r"), 22.710_071, 1e-5);
    assert_close!(cv_ratio(&[13.95], &[0.61]).expect("r"), 22.868_852, 1e-5);
}

#[test]
fn regression_through_origin_by_hand() {
    // x = 1 2 3, y = 2 4 7.
    // Σxy = 2 + 8 + 21 = 31, Σx² = 14, Σy² = 69  →  b = 31/14 = 2.2142857.
    // SSE = Σy² − b·Σxy = 69 − 961/14 = 5/14 = 0.3571429; df = n − 1 = 2;
    // s_e = sqrt(5/28) = 0.4225771; s_b = s_e / sqrt(14) = 0.1129385.
    // t(0.975; 2) = 4.3026527 → slope CI 2.2142857 ± 0.4859351
    //   = [1.7283506, 2.7002208].
    // Uncentred R² = 31² / (14·69) = 961/966 = 0.9948240.
    // Pearson r: Sxy = 31 − 3·2·13/3 = 5, Sxx = 2, Syy = 69 − 169/3 = 38/3,
    //   r = 5 / sqrt(2·38/3) = 0.9933993.
    // Prediction at x = 4: ŷ = 8.8571429, s_e·sqrt(1 + 16/14) = 0.6185896,
    //   interval ± 4.3026527·0.6185896 = [6.1955667, 11.5187190];
    //   mean response: ± t·s_e·4/sqrt(14) = [6.9134025, 10.8008832].
    // Inverse at y = 9: x̂ = 9/b = 4.0645161; q = t·s_e = 1.8182027,
    //   A = b² − q²/14 = 4.6666667, roots (b·9 ± q·sqrt(81/14 + A)) / A
    //   = [3.0105933, 5.5297442].
    let x = [1.0, 2.0, 3.0];
    let y = [2.0, 4.0, 7.0];
    let r = Regression::through_origin(&x, &y).expect("fit");
    assert_close!(r.slope, 2.214_285_714, 1e-9);
    assert_eq!(r.intercept, 0.0);
    assert_eq!(r.df, 2.0);
    assert_close!(r.residual_se, 0.422_577_127, 1e-9);
    assert_close!(r.slope_se, 0.112_938_488, 1e-9);
    assert_close!(r.r_squared, 0.994_824_017, 1e-9);
    assert_close!(r.r, 0.993_399_268, 1e-9);
    let ci = r.slope_interval(0.95).expect("ci");
    assert_close!(ci.lower, 1.728_350_621, 1e-7);
    assert_close!(ci.upper, 2.700_220_807, 1e-7);
    let p = r.prediction_interval(4.0, 0.95).expect("pi");
    assert_close!(p.estimate, 8.857_142_857, 1e-9);
    assert_close!(p.lower, 6.195_566_737, 1e-7);
    assert_close!(p.upper, 11.518_718_977, 1e-7);
    let m = r.mean_interval(4.0, 0.95).expect("mi");
    assert_close!(m.lower, 6.913_402_485, 1e-7);
    assert_close!(m.upper, 10.800_883_230, 1e-7);
    let inv = r.inverse_predict(9.0, 0.95).expect("inv");
    assert_close!(inv.estimate, 4.064_516_129, 1e-9);
    assert_close!(inv.lower.expect("lo"), 3.010_593_256, 1e-7);
    assert_close!(inv.upper.expect("hi"), 5.529_744_245, 1e-7);
    // The inverse interval's ends are exactly where the prediction band hits 9.
    let at_lo = r
        .prediction_interval(inv.lower.expect("lo"), 0.95)
        .expect("pi");
    assert_close!(at_lo.upper, 9.0, 1e-7);
}

#[test]
fn regression_with_intercept_by_hand() {
    // Same data, Appendix A formulas: SSxy = 5, SSxx = 2, SSyy = 38/3.
    // b = 5/2 = 2.5, a = 13/3 − 2.5·2 = −0.6666667.
    // s_e = sqrt((SSyy − b·SSxy)/(n − 2)) = sqrt(38/3 − 12.5) = sqrt(1/6) = 0.4082483
    // s_b = s_e / sqrt(2) = 0.2886751; t(0.975; 1) = 12.7062047
    // CI = 2.5 ± 3.6679654 = [−1.1679654, 6.1679654]; R² = r² = 0.9868421.
    // Prediction at 4: ŷ = 9.3333333, s_e·sqrt(1 + 1/3 + 4/2) = 0.7453560,
    //   interval ± 9.4706666 = [−0.1373125, 18.8039792].
    let x = [1.0, 2.0, 3.0];
    let y = [2.0, 4.0, 7.0];
    let r = Regression::with_intercept(&x, &y).expect("fit");
    assert_close!(r.slope, 2.5, 1e-12);
    assert_close!(r.intercept, -0.666_666_667, 1e-9);
    assert_close!(r.residual_se, 0.408_248_290, 1e-9);
    assert_close!(r.slope_se, 0.288_675_135, 1e-9);
    assert_close!(r.r_squared, 0.986_842_105, 1e-9);
    let ci = r.slope_interval(0.95).expect("ci");
    assert_close!(ci.lower, -1.167_965_364, 1e-6);
    assert_close!(ci.upper, 6.167_965_364, 1e-6);
    let p = r.prediction_interval(4.0, 0.95).expect("pi");
    assert_close!(p.lower, -0.137_312_512, 1e-6);
    assert_close!(p.upper, 18.803_979_178, 1e-6);
    // Slope not significant at 95% with 1 df: the inverse interval is unbounded.
    let inv = r.inverse_predict(9.0, 0.95).expect("inv");
    assert_close!(inv.estimate, 3.866_666_667, 1e-9);
    assert_eq!((inv.lower, inv.upper), (None, None));
    // At 50% it is bounded and contains the estimate.
    let inv = r.inverse_predict(9.0, 0.5).expect("inv");
    assert!(inv.lower.expect("lo") < inv.estimate && inv.estimate < inv.upper.expect("hi"));
    assert!(Regression::with_intercept(&[1.0, 1.0, 1.0], &y).is_err());
    assert!(Regression::through_origin(&x, &y[..2]).is_err());
}

#[test]
fn message_rate_on_the_papers_table_2() {
    // Table 2: mean test time (ms) and mean sends of 16 applications.
    // Through the origin this gives MR = Σxy/Σx² = 9 048.31 sends/ms (the paper
    // prints 9 335.55, s_e = 16 448 897, s_b = 350.84, which these rounded
    // table values do not reproduce; its interval uses t = 2.145, i.e. 14 df).
    let time = [
        32317.0, 33719.0, 29264.0, 25021.0, 13942.0, 10216.0, 2485.0, 1642.0, 1014.0, 4012.0,
        247.0, 128.0, 37.0, 36.0, 30.0, 19.0,
    ];
    let sends = [
        334_359_691.0,
        292_140_717.0,
        236_817_521.0,
        210_384_157.0,
        150_301_007.0,
        94_604_363.0,
        37_979_149.0,
        31_574_383.0,
        6_385_091.0,
        5_954_759.0,
        3_381_429.0,
        2_340_805.0,
        677_439.0,
        675_205.0,
        609_633.0,
        282_313.0,
    ];
    let mr = MessageRate::fit(&time, &sends).expect("fit");
    assert_close!(mr.sends_per_time_unit(), 9_048.308_496, 1e-3);
    assert_close!(mr.time_units_per_send(), 1.0 / 9_048.308_496, 1e-12);
    assert_close!(mr.regression.residual_se, 18_267_403.0, 1.0);
    assert_close!(mr.regression.slope_se, 289.244_940, 1e-3);
    assert_close!(mr.regression.r, 0.987_916, 1e-6);
    let ci = mr.rate_interval(0.95).expect("ci");
    assert!(ci.contains(9_048.0) && ci.lower > 8_400.0 && ci.upper < 9_700.0);
    // GitFS (§3.1): 28 096 569 sends, actually 2 928 ms.
    let t = mr.predict_time(28_096_569.0, 0.95).expect("time");
    assert_close!(t.estimate, 28_096_569.0 / 9_048.308_496, 1e-3);
    let (lo, hi) = (t.lower.expect("lo"), t.upper.expect("hi"));
    assert!(lo < t.estimate && t.estimate < hi);
    let s = mr.predict_sends(2_928.0, 0.95).expect("sends");
    assert!(s.contains(28_096_569.0));
    // With an intercept (Appendix A formulas): b = 8 994.98, a = 1 380 005.
    let ols = Regression::with_intercept(&time, &sends).expect("ols");
    assert_close!(ols.slope, 8_994.982_015, 1e-3);
    assert_close!(ols.intercept, 1_380_004.935, 1e-2);
    assert_close!(ols.residual_se, 18_872_394.9, 1.0);
    assert_close!(ols.slope_se, 377.155_311, 1e-3);
}

#[test]
fn instability_of_the_papers_table_1() {
    // §4.4, Table 1: ses = 0 0 0 0.316 0.516 0.707 1.197 1.955 1.989;
    // ψ9 = 0.316/ln 5 + 0.516/ln 6 + 0.707/ln 7 + 1.197/ln 8 + 1.955/ln 9
    //      + 1.989/ln 10
    //    = 0.19634 + 0.28798 + 0.36333 + 0.57564 + 0.88976 + 0.86381 = 3.17686.
    let ses = [0.0, 0.0, 0.0, 0.316, 0.516, 0.707, 1.197, 1.955, 1.989];
    assert_close!(weighted_instability(&ses), 3.177, 5e-4);
    // w(1) = 1/ln 2 = log2(e) = 1.442695
    assert_close!(dcg_weight(1), std::f64::consts::LOG2_E, 1e-15);
}

#[test]
fn instability_by_hand() {
    // R1 = b a c, R2 = a b c, R3 = a c b.
    // b: ranks 1 2 3, mean 2,   s = 1
    // a: ranks 2 1 1, mean 4/3, s = sqrt((1/9+1/9+4/9)/2) = sqrt(1/3) = 0.5773503
    // c: ranks 3 3 2, mean 8/3, s = 0.5773503
    // FirstRanking (b, a, c): 1/ln 2 + 0.57735/ln 3 + 0.57735/ln 4
    //   = 1.4426950 + 0.5255266 + 0.4164705 = 2.3846921
    // MeanRank (a, b, c):     0.57735/ln 2 + 1/ln 3 + 0.57735/ln 4
    //   = 0.8329398 + 0.9102392 + 0.4164705 = 2.1596498
    let rankings = vec![
        vec!["b", "a", "c"],
        vec!["a", "b", "c"],
        vec!["a", "c", "b"],
    ];
    let f = ranking_instability(&rankings, 3, ReferenceOrder::FirstRanking).expect("psi");
    assert_close!(f.psi, 2.384_692_089, 1e-9);
    let names: Vec<&str> = f.methods.iter().map(|m| m.name.as_str()).collect();
    assert_eq!(names, ["b", "a", "c"]);
    assert_eq!(f.methods[0].ranks, vec![1, 2, 3]);
    let m = ranking_instability(&rankings, 3, ReferenceOrder::MeanRank).expect("psi");
    assert_close!(m.psi, 2.159_649_782, 1e-9);
    assert_close!(m.methods[0].mean, 4.0 / 3.0, 1e-12);
    // Only the first two positions: 0.8329398 + 0.9102392 = 1.7431790.
    let m2 = ranking_instability(&rankings, 2, ReferenceOrder::MeanRank).expect("psi");
    assert_close!(m2.psi, 1.743_179_1, 1e-6);
    // Identical rankings are perfectly stable.
    let same = vec![vec!["x", "y", "z"]; 10];
    let s = ranking_instability(&same, 10, ReferenceOrder::MeanRank).expect("psi");
    assert_eq!(s.psi, 0.0);
    assert_eq!(s.methods.len(), 3);
    // A method missing from a ranking of length 2 gets rank 3:
    // b: 2, 3 → s = 0.7071068; c: 3, 2 → s = 0.7071068; a: 1, 1 → 0.
    // MeanRank order a, b, c (b before c by name): 0.7071/ln 3 + 0.7071/ln 4.
    let partial = vec![vec!["a", "b"], vec!["a", "c"]];
    let p = ranking_instability(&partial, 3, ReferenceOrder::MeanRank).expect("psi");
    let expected = 0.5f64.sqrt() * (dcg_weight(2) + dcg_weight(3));
    assert_close!(p.psi, expected, 1e-12);
    assert_eq!(p.methods[2].ranks, vec![3, 2]);
    assert!(ranking_instability(&partial[..1], 3, ReferenceOrder::MeanRank).is_err());
}

#[test]
fn random_rankings_reference() {
    // Bound for N = 91 methods, n = 10: sqrt((91² − 1)/12) · Σ_{i≤10} 1/ln(i+1)
    //   = 26.2679 · 6.5549705 = 172.185 (the paper's ψ10(R) = 173).
    assert_close!(random_instability_bound(10, 91), 172.184_990, 1e-4);
    let a =
        random_ranking_instability(10, 10, 91, 200, 42, ReferenceOrder::FirstRanking).expect("mc");
    let b =
        random_ranking_instability(10, 10, 91, 200, 42, ReferenceOrder::FirstRanking).expect("mc");
    assert_eq!(a, b, "deterministic for a fixed seed");
    // The first ranking puts the chosen methods at ranks 1..10 while the others
    // scatter them uniformly, which adds spread: a little above the bound.
    let bound = random_instability_bound(10, 91);
    assert!(a > bound && a < 1.2 * bound, "{a}");
    // Choosing the methods with the best mean ranks favours the less
    // scattered ones: below the bound.
    let m = random_ranking_instability(10, 10, 91, 200, 42, ReferenceOrder::MeanRank).expect("mc");
    assert!(m > 0.5 * bound && m < bound, "{m} vs {bound}");
    // Many rankings of 2 methods: ranks are 1 or 2 with probability 1/2, σ = 1/2;
    // the bound is 0.5·(1/ln 2 + 1/ln 3) = 1.1764671.
    assert_close!(random_instability_bound(2, 2), 1.176_467_1, 1e-6);
}
