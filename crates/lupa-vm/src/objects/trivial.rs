//! Trivial methods: [`Trivial`] recognises, from its bytecode, a method simple
//! enough to run without a frame (a getter, a setter, `^self`, `^literal`,
//! `^constant`).
//!
//! Contract: `Trivial::of` answers `Some` only for methods without temporaries
//! or env whose whole effect is the recognised one, so running the shortcut
//! instead of activating the method is unobservable except through activation
//! hooks (the send path takes the shortcut only when none are on).

use lupa_compiler::Op;

/// Methods simple enough to run without a frame (when no activation hooks are on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Trivial {
    /// `^field`
    Getter(u16),
    /// `field := arg` (answers self)
    Setter(u16),
    /// `^self` or an empty method
    ReturnSelf,
    /// `^literal` (index into the literal frame)
    Literal(u16),
    /// `^smallInteger`
    Int(i32),
    /// `^nil`, `^true`, `^false`
    Nil,
    /// `^true`
    True,
    /// `^false`
    False,
}

impl Trivial {
    /// Recognise a trivial method from its code.
    pub fn of(ops: &[Op], num_args: usize, num_temps: usize, has_env: bool) -> Option<Trivial> {
        if num_temps != 0 || has_env {
            return None;
        }
        Some(match ops {
            [Op::PushField(i), Op::ReturnTop, ..] if num_args == 0 => Trivial::Getter(*i),
            [Op::PushLocal(0), Op::PopField(i), Op::ReturnSelf, ..] if num_args == 1 => {
                Trivial::Setter(*i)
            }
            [Op::ReturnSelf, ..] => Trivial::ReturnSelf,
            [Op::PushSelf, Op::ReturnTop, ..] => Trivial::ReturnSelf,
            [Op::PushLiteral(k), Op::ReturnTop, ..] => Trivial::Literal(*k),
            [Op::PushInt(n), Op::ReturnTop, ..] => Trivial::Int(*n),
            [Op::PushNil, Op::ReturnTop, ..] => Trivial::Nil,
            [Op::PushTrue, Op::ReturnTop, ..] => Trivial::True,
            [Op::PushFalse, Op::ReturnTop, ..] => Trivial::False,
            _ => return None,
        })
    }
}
