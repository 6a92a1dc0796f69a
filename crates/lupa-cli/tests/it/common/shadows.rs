//! A program that brings its own collection classes, shadowing Lupa's with
//! small protocols as AWFY's `Core` does (`forEach:`, no `do:`; `at:`
//! answering nil, no `at:ifAbsent:`...), for the profilers' tests (`spy.rs`,
//! `proxies.rs`): the bundled profilers must run beside them (issue 27).
//!
//! `Own/` holds `Vector`, `Dictionary`, `IdentityDictionary`, `Set`,
//! `IdentitySet` and the program `Census`, which prints `3`, `4`, `4`, `2`.
//! Per run: `Census>>run` 1 call, `note:` 6, `countOf:` 7 (6 from `note:`,
//! 1 from `run`), `Set>>add:` 6, `Dictionary>>at:put:` 6 on a `Dictionary`
//! and 6 on an `IdentityDictionary`.

const VECTOR: &str = "Vector = (
    | storage last |
    init: n = ( storage := Array new: n. last := 0 )
    append: x = (
        | bigger |
        last = storage length ifTrue: [
            bigger := Array new: last * 2.
            1 to: last do: [ :i | bigger at: i put: (storage at: i) ].
            storage := bigger ].
        last := last + 1.
        storage at: last put: x
    )
    at: i = ( ^storage at: i )
    at: i put: x = ( ^storage at: i put: x )
    size = ( ^last )
    isEmpty = ( ^last = 0 )
    forEach: aBlock = ( 1 to: last do: [ :i | aBlock value: (storage at: i) ] )
    ----
    new = ( ^self new: 4 )
    new: n = ( ^super new init: n )
)
";

const DICTIONARY: &str = "Dictionary = (
    | keys values |
    init = ( keys := Vector new. values := Vector new )
    same: a as: b = ( ^a = b )
    indexOf: aKey = (
        1 to: keys size do: [ :i | (self same: (keys at: i) as: aKey) ifTrue: [ ^i ] ].
        ^0
    )
    at: aKey put: aValue = (
        | i |
        i := self indexOf: aKey.
        i = 0
            ifTrue: [ keys append: aKey. values append: aValue ]
            ifFalse: [ values at: i put: aValue ].
        ^aValue
    )
    at: aKey = (
        | i |
        i := self indexOf: aKey.
        i = 0 ifTrue: [ ^nil ].
        ^values at: i
    )
    containsKey: aKey = ( ^(self indexOf: aKey) > 0 )
    size = ( ^keys size )
    keys = ( ^keys )
    ----
    new = ( ^super new init )
)
";

const IDENTITY_DICTIONARY: &str = "IdentityDictionary = Dictionary (
    same: a as: b = ( ^a == b )
)
";

const SET: &str = "Set = (
    | items |
    init = ( items := Vector new )
    same: a as: b = ( ^a = b )
    add: x = ( (self contains: x) ifFalse: [ items append: x ]. ^x )
    contains: x = (
        items forEach: [ :e | (self same: e as: x) ifTrue: [ ^true ] ].
        ^false
    )
    size = ( ^items size )
    forEach: aBlock = ( items forEach: aBlock )
    ----
    new = ( ^super new init )
)
";

const IDENTITY_SET: &str = "IdentitySet = Set (
    same: a as: b = ( ^a == b )
)
";

const CENSUS: &str = "Census = (
    | tally seen byLength |
    run = (
        | words |
        words := Vector new.
        #('ant' 'bee' 'ant' 'cat' 'ant' 'wasp') do: [ :w | words append: w ].
        tally := Dictionary new.
        seen := Set new.
        byLength := IdentityDictionary new.
        words forEach: [ :w | self note: w ].
        (self countOf: 'ant') println.
        tally size println.
        seen size println.
        byLength size println
    )
    note: aWord = (
        tally at: aWord put: (self countOf: aWord) + 1.
        seen add: aWord.
        byLength at: aWord length put: aWord
    )
    countOf: aWord = ( ^(tally at: aWord) ifNil: [ 0 ] )
)
";

/// SUnit tests of `Census` (for `Driver/`): each runs it once (`testNote`
/// then notes one more word), so `countOf:` runs 7 + 1 and 7 + 2 times.
pub(crate) const CENSUS_TEST: &str = "CensusTest = TestCase (
    testCounts = (
        | c |
        c := Census new.
        c run.
        self assert: 3 equals: (c countOf: 'ant')
    )
    testNote = (
        | c |
        c := Census new.
        c run.
        c note: 'bee'.
        self assert: 2 equals: (c countOf: 'bee')
    )
)
";

/// What `Census` prints.
pub(crate) const CENSUS_OUTPUT: &str = "3\n4\n4\n2\n";

/// A project directory with `Own/` (the shadowing classes and `Census`)
/// and the given extra classes in `Driver/` (programs that drive the
/// profilers from Smalltalk; not part of the package `Own`).
pub(crate) fn own_collections(drivers: &[(&str, &str)]) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    let own = dir.path().join("Own");
    std::fs::create_dir(&own).expect("mkdir Own");
    for (name, text) in [
        ("Vector.som", VECTOR),
        ("Dictionary.som", DICTIONARY),
        ("IdentityDictionary.som", IDENTITY_DICTIONARY),
        ("Set.som", SET),
        ("IdentitySet.som", IDENTITY_SET),
        ("Census.som", CENSUS),
    ] {
        std::fs::write(own.join(name), text).expect("write Own");
    }
    let driver = dir.path().join("Driver");
    std::fs::create_dir(&driver).expect("mkdir Driver");
    for (name, text) in drivers {
        std::fs::write(driver.join(name), text).expect("write Driver");
    }
    dir
}
