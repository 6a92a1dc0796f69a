//! The two versions of a small program that the Hip tests record (SQLite in
//! `history.rs`, PostgreSQL in `history_pg.rs`): from the first to the second
//! `slow` grows, `fast` shrinks, `same` stays, `old` goes and `fresh` comes.

/// The program of the first commit: `Work>>slow` and `Work>>fast` loop 5 and
/// 20 times, `same` and `old` send one message each.
pub(crate) const MAIN: &str = "Main = (
    run = ( | w | w := Work new. w slow. w fast. w same. w old. ^ 0 )
)
";
pub(crate) const WORK_1: &str = "Work = (
    slow = ( ^ self loop: 5 )
    fast = ( ^ self loop: 20 )
    same = ( ^ 1 + 2 )
    old = ( ^ 3 + 4 )
    loop: n = ( | t | t := 0. 1 to: n do: [ :i | t := t + i ]. ^ t )
)
";
/// The second commit: `slow` loops 50 times, `fast` 5, `old` is gone and
/// `fresh` is new.
pub(crate) const MAIN_2: &str = "Main = (
    run = ( | w | w := Work new. w slow. w fast. w same. w fresh. ^ 0 )
)
";
pub(crate) const WORK_2: &str = "Work = (
    slow = ( ^ self loop: 50 )
    fast = ( ^ self loop: 5 )
    same = ( ^ 1 + 2 )
    fresh = ( ^ 5 + 6 )
    loop: n = ( | t | t := 0. 1 to: n do: [ :i | t := t + i ]. ^ t )
)
";
