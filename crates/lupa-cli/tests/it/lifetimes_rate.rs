//! Illimani's sampling rate means one thing through both doors (issue 28,
//! point 7): `lupa lifetimes --rate R` and `IllLifetimeProfiler new
//! samplingRate: R`, in VM and faithful mode, keep each allocation with
//! probability R, whatever its size and whatever ran before the start.
//!
//! The program allocates large objects first (they used to change the share
//! kept, through the mean object size the rate was scaled by), then `N`
//! 32-byte `Duo`s that die at once. The number of `Duo`s kept is binomial
//! (`N`, R): it must be within 5 standard errors of `N R`. The seed is fixed
//! (42, the default), so each run gives the same counts; the bound is the
//! rate's, so it holds for any seed (a 5-standard-error miss has probability
//! below 1e-6).

use crate::common::{classes, lupa_in};

/// How many `Duo`s each run allocates.
const N: u64 = 40_000;

/// A class of 32-byte objects (a header and two slots); not named `Pair`,
/// which the core-lib has.
const DUO: &str = "Duo = ( | a b | )
";

/// History first (large arrays and strings), then `N` Duos.
const ALLOC: &str = "Alloc = (
    run = (
        | keep |
        keep := Array new: 100.
        1 to: 100 do: [ :i | keep at: i put: (Array new: 1000) ].
        1 to: 100 do: [ :i | 'abc' + i printString ].
        1 to: 40000 do: [ :i | Duo new ].
        keep size println
    )
)
";

/// The Smalltalk door: each rate and mode in one program, after the same
/// history, one line `mode rate kept sizes` per profile (`sizes`: the
/// distinct sizes in bytes of the records, which should be 32 only).
const API: &str = "ApiRate = (
    run = (
        | keep |
        keep := Array new: 100.
        1 to: 100 do: [ :i | keep at: i put: (Array new: 1000) ].
        #(0.01 0.25) do: [ :rate |
            #(#vm #faithful) do: [ :mode |
                | p sizes |
                p := IllLifetimeProfiler new samplingRate: rate; captureOnly: (Array with: Duo); yourself.
                mode = #faithful ifTrue: [ p beFaithful ].
                p profileOn: [ 1 to: 40000 do: [ :i | Duo new ] ].
                sizes := 0.
                p objectAllocations do: [ :r | r sizeInBytes = 32 ifFalse: [ sizes := sizes + 1 ] ].
                (mode + ' ' + rate printString + ' ' + p objectAllocations size printString
                    + ' ' + sizes printString) println ] ]
    )
)
";

fn project() -> tempfile::TempDir {
    classes(&[("Duo.som", DUO), ("Alloc.som", ALLOC), ("ApiRate.som", API)])
}

/// Is `kept` of `N` within 5 standard errors of the rate?
fn within_bounds(kept: u64, rate: f64) -> bool {
    let n = N as f64;
    let mean = n * rate;
    let se = (n * rate * (1.0 - rate)).sqrt();
    (kept as f64 - mean).abs() <= 5.0 * se
}

#[test]
fn cli_rate_is_the_share_of_objects_kept_in_both_modes() {
    let dir = project();
    for rate in ["0.01", "0.25"] {
        for mode in ["vm", "faithful"] {
            let r = lupa_in(
                dir.path(),
                &[
                    "lifetimes",
                    "-cp",
                    ".",
                    "--mode",
                    mode,
                    "--rate",
                    rate,
                    "--only",
                    "Duo",
                    "--format",
                    "json",
                    "-o",
                    "-",
                    "Alloc",
                ],
            );
            assert_eq!(r.code, 0, "{mode} {rate}: {}", r.stderr);
            let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
            let kept = v["records"].as_u64().expect("records");
            let p: f64 = rate.parse().expect("rate");
            assert!(
                within_bounds(kept, p),
                "{mode} mode at --rate {rate}: {kept} of {N} kept ({:.3}%)",
                kept as f64 * 100.0 / N as f64
            );
            let duo = &v["classes"][0];
            assert_eq!(duo["name"], "Duo");
            let bytes = duo["bytes"].as_f64().expect("bytes");
            let objects = duo["objects"].as_f64().expect("objects");
            assert!((bytes / objects - 32.0).abs() < 1e-9, "{bytes} / {objects}");
            assert_eq!(v["sampling"]["seed"], 42);
        }
    }
}

#[test]
fn smalltalk_sampling_rate_is_the_share_of_objects_kept_in_both_modes() {
    let dir = project();
    let r = lupa_in(dir.path(), &["run", "-cp", ".", "ApiRate"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    assert_eq!(lines.len(), 4, "{}", r.stdout);
    for line in lines {
        let f: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(f.len(), 4, "{line}");
        let rate: f64 = f[1].parse().expect("rate");
        let kept: u64 = f[2].parse().expect("kept");
        assert!(
            within_bounds(kept, rate),
            "samplingRate: {rate} ({}): {kept} of {N} kept ({:.3}%)",
            f[0],
            kept as f64 * 100.0 / N as f64
        );
        assert_eq!(f[3], "0", "records not of 32 bytes: {line}");
    }
}
