//! `lupa blueprint` (time profiling blueprints, Spy's BlueprintProfiler) end
//! to end: the text report (golden, its times left out: they are sampled),
//! the JSON model's shape and exact counts, both SVG pictures read back with
//! quick-xml, and the HTML page and the SVG in headless Chromium.

use crate::common::lupa_in;
use quick_xml::events::Event;

const MAIN: &str = "Main = (
    run = ( | c |
        c := Cart new.
        1 to: 4 do: [ :i | c add: (Item price: i) ].
        c total println.
        c total println )
)
";
const ITEM: &str = "Item = (
    | price |
    price = ( ^price )
    price: n = ( price := n )
    currency = ( ^'EUR' )
    ----
    price: n = ( ^self new price: n; yourself )
)
";
const CART: &str = "Cart = (
    | items |
    add: anItem = ( self items append: anItem )
    items = ( ^items ifNil: [ items := Vector new ] )
    total = ( | t | t := 0. self items do: [ :i | t := t + i price. i currency ]. ^t )
    unused = ( ^nil )
)
";
const DISCOUNT: &str = "DiscountCart = Cart (
    total = ( ^super total - 1 )
)
";

/// A project: `Shop/` with the program and its classes.
fn project() -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let shop = dir.path().join("Shop");
    std::fs::create_dir(&shop).expect("mkdir");
    for (name, text) in [
        ("Main.som", MAIN),
        ("Item.som", ITEM),
        ("Cart.som", CART),
        ("DiscountCart.som", DISCOUNT),
    ] {
        std::fs::write(shop.join(name), text).expect("write");
    }
    dir
}

/// The text report without what sampling decides: the times (the first 30
/// columns of a method row, and the summary's milliseconds and samples), and
/// the rows in name order instead of time order.
fn deterministic(text: &str) -> String {
    let mut out = Vec::new();
    let mut rows = Vec::new();
    let mut in_rows = false;
    // The width of the sampled columns: time, self time and share in the
    // ranking, time in the caching candidates.
    let mut timing = 30;
    for (i, line) in text.lines().enumerate() {
        if i == 1 {
            let kept: Vec<&str> = line
                .split("; ")
                .filter(|part| !part.contains("ms sampled"))
                .collect();
            out.push(kept.join("; "));
        } else if line.trim_start().starts_with("time ms") {
            in_rows = true;
            timing = if line.contains("self %") { 30 } else { 11 };
            out.push(line.get(timing..).unwrap_or_default().to_string());
        } else if in_rows && !line.is_empty() {
            rows.push(line.get(timing..).unwrap_or_default().to_string());
        } else {
            if in_rows {
                rows.sort_by(|a, b| a.rsplit(' ').next().cmp(&b.rsplit(' ').next()));
                out.append(&mut rows);
                in_rows = false;
            }
            out.push(line.to_string());
        }
    }
    out.append(&mut rows);
    out.join("\n")
}

#[test]
fn text_report_counts_exactly() {
    let dir = project();
    let r = lupa_in(dir.path(), &["blueprint", "-cp", "Shop", "Main"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    // The program's output once (the counted and sampled runs are silent),
    // then the report.
    assert!(
        r.stdout
            .starts_with("10\n10\nlupa blueprint --package Shop Main\n"),
        "{}",
        r.stdout
    );
    let report = r
        .stdout
        .split_once("10\n10\n")
        .map(|(_, s)| s)
        .unwrap_or_default();
    insta::assert_snapshot!("blueprint_text", deterministic(report));
}

#[test]
fn json_has_classes_methods_and_exact_calls() {
    let dir = project();
    let r = lupa_in(
        dir.path(),
        &[
            "blueprint",
            "-cp",
            "Shop",
            "--format",
            "json",
            "-o",
            "-",
            "Main",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stderr, "10\n10\n",
        "the program's output goes to stderr with -o -"
    );
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    assert_eq!(v["version"], 1);
    assert_eq!(v["packages"], serde_json::json!(["Shop"]));
    assert!(v["total_ms"].as_f64().expect("total_ms") >= 0.0);
    let classes = v["classes"].as_array().expect("classes");
    let names: Vec<&str> = classes.iter().filter_map(|c| c["name"].as_str()).collect();
    assert_eq!(names.len(), 4, "{names:?}");
    let method = |class: &str, selector: &str, class_side: bool| {
        classes
            .iter()
            .filter(|c| c["name"] == class)
            .flat_map(|c| c["methods"].as_array().cloned().unwrap_or_default())
            .find(|m| m["selector"] == selector && m["class_side"] == class_side)
            .unwrap_or_else(|| panic!("{class}>>{selector}"))
    };
    let currency = method("Item", "currency", false);
    assert_eq!(currency["executions"], 8);
    assert_eq!(currency["same_answer"], true);
    assert_eq!(currency["side_effect_free"], true);
    assert_eq!(method("Cart", "items", false)["executions"], 6);
    assert_eq!(method("Cart", "items", false)["side_effect_free"], false);
    assert_eq!(method("Item", "price", false)["same_answer"], false);
    assert_eq!(method("Item", "price:", true)["executions"], 4);
    assert_eq!(method("Cart", "unused", false)["executions"], 0);
    // Cart>>total sends items and do:; per item, do:'s block sends +, price,
    // currency: the block's sends are its own, listed inside total.
    let total = method("Cart", "total", false);
    assert_eq!(total["sends"], 2 * 2);
    assert_eq!(total["blocks"][0]["name"], "[] in Cart>>total");
    assert_eq!(total["blocks"][0]["executions"], 2 * 4);
    assert_eq!(total["blocks"][0]["sends"], 2 * 4 * 3);
    for m in classes
        .iter()
        .flat_map(|c| c["methods"].as_array().cloned().unwrap_or_default())
    {
        let (t, s) = (m["time_ms"].as_f64(), m["self_ms"].as_f64());
        assert!(
            t.is_some_and(|t| t >= 0.0) && s.is_some_and(|s| s >= 0.0),
            "{m}"
        );
    }
    let calls = v["calls"].as_array().expect("calls");
    let count = |caller: &str, callee: &str| {
        calls
            .iter()
            .find(|c| c["caller"] == caller && c["callee"] == callee)
            .map(|c| c["count"].as_u64().unwrap_or(0))
    };
    assert_eq!(calls.len(), 8, "{calls:?}");
    assert_eq!(count("Cart>>total", "Item>>price"), Some(8));
    assert_eq!(count("Main>>run", "Item class>>price:"), Some(4));
    assert_eq!(count("Item class>>price:", "Item>>price:"), Some(4));
    assert_eq!(count("Cart>>add:", "Cart>>items"), Some(4));
    assert_eq!(count("Cart>>total", "Cart>>items"), Some(2));
    assert_eq!(calls[0]["count"], 8, "the most frequent first");
}

/// (rect.method, rect.class, path.call, line.inherits, gray methods) of an
/// SVG document, checking that every rect is inside the picture.
fn census(svg: &str) -> (usize, usize, usize, usize, usize) {
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut methods, mut classes, mut calls, mut inherits, mut gray) = (0, 0, 0, 0, 0);
    let (mut w, mut h) = (0.0, 0.0);
    loop {
        match reader.read_event().expect("well-formed SVG") {
            Event::Start(e) | Event::Empty(e) => {
                let get = |k: &str| {
                    e.try_get_attribute(k).ok().flatten().map(|a| {
                        a.unescape_value()
                            .map(|v| v.into_owned())
                            .unwrap_or_default()
                    })
                };
                let num = |k: &str| get(k).and_then(|v| v.parse::<f64>().ok()).unwrap_or(-1.0);
                let class = get("class");
                match (e.name().as_ref(), class.as_deref()) {
                    (b"svg", _) => (w, h) = (num("width"), num("height")),
                    (b"rect", Some(kind)) => {
                        let (x, y) = (num("x"), num("y"));
                        assert!(x >= 0.0 && y >= 0.0, "{svg}");
                        assert!(x + num("width") <= w + 0.5 && y + num("height") <= h + 0.5);
                        if kind == "method" {
                            methods += 1;
                            gray += usize::from(get("fill").as_deref() == Some("#9a9a9a"));
                        } else if kind == "class" {
                            classes += 1;
                        }
                    }
                    (b"path", Some("call")) => calls += 1,
                    (b"line", Some("inherits")) => inherits += 1,
                    _ => {}
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    (methods, classes, calls, inherits, gray)
}

#[test]
fn pictures_read_back_and_open_in_chromium() {
    let dir = project();
    for (kind, format, file) in [
        ("structural", "svg", "structural.svg"),
        ("behavioral", "svg", "behavioral.svg"),
        ("structural", "html", "structural.html"),
        ("behavioral", "html", "behavioral.html"),
    ] {
        let r = lupa_in(
            dir.path(),
            &[
                "blueprint",
                "-cp",
                "Shop",
                "--kind",
                kind,
                "--format",
                format,
                "-o",
                file,
                "Main",
            ],
        );
        assert_eq!(r.code, 0, "{kind} {format}: {}", r.stderr);
    }
    let read = |f: &str| std::fs::read_to_string(dir.path().join(f)).expect("written");
    // Every method of the package (10) in its class (4); DiscountCart under Cart;
    // gray: items (one cart: the same Vector) and total (10 both times), which
    // send messages; not currency (`^'EUR'`, a constant getter: nothing to cache).
    assert_eq!(census(&read("structural.svg")), (10, 4, 0, 1, 2));
    // The 8 methods that ran and the 8 calls between them.
    assert_eq!(census(&read("behavioral.svg")), (8, 0, 8, 0, 2));
    let Some(chromium) = crate::common::chromium() else {
        return;
    };
    for (page, methods) in [("structural.html", 10), ("behavioral.html", 8)] {
        let dom = crate::common::assert_page_ready(
            chromium,
            dir.path(),
            page,
            "data-page-ready=\"true\"",
        );
        assert!(
            dom.contains(&format!("data-methods=\"{methods}\"")),
            "{dom}"
        );
        crate::common::assert_screenshot_not_blank(chromium, dir.path(), page);
    }
    crate::common::assert_screenshot_not_blank(chromium, dir.path(), "structural.svg");
    crate::common::assert_screenshot_not_blank(chromium, dir.path(), "behavioral.svg");
}

#[test]
fn usage_errors() {
    let dir = project();
    let r = lupa_in(
        dir.path(),
        &["blueprint", "-cp", "Shop", "--kind", "round", "Main"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = lupa_in(dir.path(), &["blueprint", "-cp", "Shop"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = lupa_in(
        dir.path(),
        &["blueprint", "-cp", "Shop", "--rate", "0", "Main"],
    );
    assert_eq!(r.code, 2, "{}", r.stderr);
    let r = lupa_in(
        dir.path(),
        &[
            "blueprint",
            "-cp",
            "Shop",
            "--format",
            "svg",
            "-o",
            "no/such/dir/x.svg",
            "Main",
        ],
    );
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("no/such/dir/x.svg"), "{}", r.stderr);
    assert!(!r.stdout.contains("10"), "nothing ran: {}", r.stdout);
}

#[test]
fn a_program_that_exits_gets_its_blueprint_and_its_status() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("Quit")).expect("mkdir");
    std::fs::write(
        dir.path().join("Quit/Quits.som"),
        "Quits = (
            run = ( self work. 'done' println. system exit: 3 )
            work = ( ^(1 to: 100) inject: 0 into: [ :a :b | a + (self id: b) ] )
            id: x = ( ^x )
        )",
    )
    .expect("write");
    let r = lupa_in(
        dir.path(),
        &["blueprint", "-cp", "Quit", "--package", "", "Quits"],
    );
    assert_eq!(r.code, 2, "an empty package name is refused: {}", r.stderr);
    let r = lupa_in(dir.path(), &["blueprint", "-cp", "Quit", "Quits"]);
    assert_eq!(r.code, 3, "{}", r.stderr);
    // Shown once (the counted and sampled runs are silent), then the report,
    // the block of work's inject:into: calling id: for work.
    assert_eq!(r.stdout.matches("done").count(), 1, "{}", r.stdout);
    assert!(
        r.stdout.contains("lupa blueprint --package Quit Quits"),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout.contains("        100  Quits>>work -> Quits>>id:"),
        "{}",
        r.stdout
    );
}

/// A method that only creates a block (`createHandler`, as in Richards) whose
/// runs come much later, in a hot loop of another method: the block's time
/// and executions are its own, listed inside its home method, and the method
/// that created it is not hot. Deterministic: the timed run samples every 7
/// sends (`--every`), so shares are sample counts.
#[test]
fn a_block_s_time_is_its_own_not_the_method_s_that_created_it() {
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::create_dir(dir.path().join("Later")).expect("mkdir");
    std::fs::write(
        dir.path().join("Later/Later.som"),
        "Later = (
            | handler |
            run = ( self createHandler. self spin: 200. (self loop: 3000) println )
            createHandler = ( handler := [ :i | self work: i ] )
            spin: n = ( | s | s := 0. 1 to: n do: [ :i | s := s + (self id: i) ]. ^s )
            loop: n = ( | s | s := 0. 1 to: n do: [ :i | s := s + (handler value: i) ]. ^s )
            work: i = ( | t | t := 0. 1 to: 5 do: [ :k | t := t + (self id: k) ]. ^t + i )
            id: x = ( ^x )
        )",
    )
    .expect("write");
    let r = lupa_in(
        dir.path(),
        &[
            "blueprint",
            "-cp",
            "Later",
            "--every",
            "7",
            "--format",
            "json",
            "-o",
            "-",
            "Later",
        ],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).expect("JSON");
    let methods: Vec<serde_json::Value> = v["classes"][0]["methods"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let method = |selector: &str| {
        methods
            .iter()
            .find(|m| m["selector"] == selector)
            .cloned()
            .unwrap_or_else(|| panic!("Later>>{selector}"))
    };
    let share = |m: &serde_json::Value, key: &str| m[key].as_f64().unwrap_or(-1.0);
    let total_ms = v["total_ms"].as_f64().unwrap_or(0.0);
    let create = method("createHandler");
    assert_eq!(create["executions"], 1);
    // The block, inside its home method, with its own executions and sends.
    let blocks = create["blocks"].as_array().cloned().unwrap_or_default();
    assert_eq!(blocks.len(), 1, "{create}");
    let block = &blocks[0];
    assert_eq!(block["name"], "[] in Later>>createHandler", "{block}");
    assert_eq!(block["executions"], 3000);
    assert_eq!(block["sends"], 3000, "one work: per run");
    // Its time (while it ran: work: and id: included) is most of the run;
    // the method that created it ran once, briefly, before the loop.
    let block_share = share(block, "time_ms") / total_ms;
    assert!(block_share > 0.8, "{block}, of {total_ms} ms");
    assert!(share(&create, "self_ms") < 0.01 * total_ms, "{create}");
    assert!(share(&create, "time_ms") < 0.01 * total_ms, "{create}");
    assert!(share(&create, "percentage") < 1.0, "{create}");
    // Nothing else has blocks that are not inlined.
    for m in &methods {
        if m["selector"] != "createHandler" {
            assert_eq!(m["blocks"], serde_json::json!([]), "{m}");
        }
    }
    // The loop that ran it holds its time (it ran inside loop:), as does
    // work:, which it called; its calls are its home method's.
    assert!(share(&method("loop:"), "time_ms") / total_ms > 0.8);
    let calls = v["calls"].as_array().cloned().unwrap_or_default();
    assert!(
        calls.iter().any(|c| c["caller"] == "Later>>createHandler"
            && c["callee"] == "Later>>work:"
            && c["count"] == 3000),
        "{calls:?}"
    );
    // The text report lists it, indented, right under its home method.
    let r = lupa_in(
        dir.path(),
        &["blueprint", "-cp", "Later", "--every", "7", "Later"],
    );
    assert_eq!(r.code, 0, "{}", r.stderr);
    let lines: Vec<&str> = r.stdout.lines().collect();
    let home = lines
        .iter()
        .position(|l| l.ends_with(" Later>>createHandler"))
        .unwrap_or_else(|| panic!("{}", r.stdout));
    assert!(
        lines[home + 1].ends_with("   [] in Later>>createHandler")
            && lines[home + 1].contains("        3000        3000"),
        "{}",
        r.stdout
    );
}
