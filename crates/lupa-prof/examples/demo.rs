//! Builds a synthetic profile (a recursive fib and a few collection methods)
//! and writes every report into the directory given as argument (default
//! `target/lupa-prof-demo`), then times a million enters/exits of the builder.
//!
//! `cargo run -p lupa-prof --example demo -- /tmp/out`

use std::time::Instant;

use lupa_prof::report::{callgrind, flamegraph, folded, speedscope, tree};
use lupa_prof::{MethodId, MethodInfo, Metric, Profile, ProfileBuilder, report::Ranking};

fn fib(b: &mut ProfileBuilder, m: &[MethodId; 4], n: u32) {
    b.enter(m[0]);
    b.add_self(1);
    if n >= 2 {
        b.add_self(3);
        fib(b, m, n - 1);
        fib(b, m, n - 2);
        b.enter(m[1]); // Integer>>+
        b.add_self(1);
        b.exit();
    }
    b.exit();
}

fn build() -> Profile {
    let mut b = ProfileBuilder::new(Metric::Sends);
    let main = b.add_method(
        MethodInfo::new("Bench", "run")
            .with_category("Bench")
            .with_location("Bench.som", Some(4)),
    );
    let ms = [
        b.add_method(
            MethodInfo::new("Integer", "fib")
                .with_category("Kernel")
                .with_location("Integer.som", Some(120)),
        ),
        b.add_method(MethodInfo::new("Integer", "+").with_category("Kernel")),
        b.add_method(MethodInfo::new("Vector", "append:").with_category("Collections")),
        b.add_method(MethodInfo::new("Vector", "do:").with_category("Collections")),
    ];
    let sort = b.add_method(MethodInfo::new("Bench", "sort:").with_category("Bench"));
    b.enter(main);
    b.add_self(5);
    fib(&mut b, &ms, 12);
    b.enter(sort);
    for i in 0..200 {
        b.enter(ms[3]);
        b.add_self(2 + i % 3);
        b.enter(ms[2]);
        b.add_self(4);
        b.exit();
        b.exit();
    }
    b.exit();
    b.exit();
    b.finish()
}

fn main() -> std::io::Result<()> {
    let dir = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "target/lupa-prof-demo".to_string());
    std::fs::create_dir_all(&dir)?;
    let p = build();
    let path = |f: &str| format!("{dir}/{f}");
    std::fs::write(path("ranking.txt"), Ranking::of(&p).to_table(Some(20)))?;
    std::fs::write(
        path("tree.txt"),
        tree::to_string(&p, &tree::TreeOptions::default()),
    )?;
    std::fs::write(path("profile.folded"), folded::to_string(&p))?;
    std::fs::write(
        path("callgrind.out.demo"),
        callgrind::to_string(&p, &callgrind::CallgrindOptions::default()),
    )?;
    std::fs::write(
        path("flame.svg"),
        flamegraph::to_string(
            &p,
            &flamegraph::FlameGraphOptions {
                title: "Demo: fib and a sort".to_string(),
                ..Default::default()
            },
        ),
    )?;
    std::fs::write(
        path("profile.speedscope.json"),
        speedscope::to_string(&p, "demo", false),
    )?;

    // Builder speed: a loop calling a few methods, a million enters.
    let mut b = ProfileBuilder::new(Metric::Sends);
    let ms: Vec<MethodId> = (0..6)
        .map(|i| b.add_method(MethodInfo::new("C", format!("m{i}"))))
        .collect();
    let start = Instant::now();
    for i in 0..1_000_000usize {
        b.enter(ms[i % 3]);
        b.add_self(1);
        b.enter(ms[3 + i % 3]);
        b.add_self(1);
        b.exit();
        b.exit();
    }
    let el = start.elapsed();
    let p = b.finish();
    println!(
        "2,000,000 enters in {:?} ({:.1} ns per enter+exit), {} nodes, total {}",
        el,
        el.as_nanos() as f64 / 2e6,
        p.nodes.len(),
        p.grand_total()
    );
    Ok(())
}
