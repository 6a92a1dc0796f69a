//! Variable placement: every variable of every code unit gets a stack slot or an
//! env slot (see the frame model in [`crate::bytecode`]).
//!
//! - Arguments always arrive on the stack (slot `i` for argument `i`); a captured
//!   argument also gets an env slot, filled by `CopyArgToEnv` in the prologue, and
//!   is accessed only there afterwards.
//! - Other variables get an env slot when captured, else the next stack slot,
//!   in declaration order (so a method's declared temporaries are its first
//!   stack temporaries, which `<unwindProtect>` relies on).
//! - An inlined `to:do:` parameter that is neither captured nor assigned
//!   shares its counter's slot.

use crate::ir::{Program, Storage};
use lupa_syntax::Diagnostic;

/// Place all variables and fill in `num_temps`, `env_size` and `arg_copies`.
pub(crate) fn allocate(prog: &mut Program) -> Result<(), Diagnostic> {
    for u in 0..prog.units.len() {
        let unit = &prog.units[u];
        let (args, temps, span) = (unit.args.clone(), unit.temps.clone(), unit.span);
        let too_many = || Diagnostic {
            message: "too many variables in one method or block (limit 65535)".into(),
            span,
        };
        let mut env: u32 = 0;
        let mut arg_copies = Vec::new();
        for (i, &v) in args.iter().enumerate() {
            let var = &mut prog.vars[v.0];
            var.storage = if var.captured {
                let index = u16::try_from(env).map_err(|_| too_many())?;
                let arg = u8::try_from(i).map_err(|_| too_many())?;
                arg_copies.push((arg, index));
                env += 1;
                Storage::Env(index)
            } else {
                Storage::Stack(u16::try_from(i).map_err(|_| too_many())?)
            };
        }
        let mut stack = args.len() as u32;
        for &v in &temps {
            let var = &prog.vars[v.0];
            let storage = match var.alias {
                Some(a) if !var.captured && !var.assigned => prog.vars[a.0].storage,
                _ if var.captured => {
                    env += 1;
                    Storage::Env(u16::try_from(env - 1).map_err(|_| too_many())?)
                }
                _ => {
                    stack += 1;
                    Storage::Stack(u16::try_from(stack - 1).map_err(|_| too_many())?)
                }
            };
            prog.vars[v.0].storage = storage;
        }
        let unit = &mut prog.units[u];
        unit.num_temps = u16::try_from(stack - args.len() as u32).map_err(|_| too_many())?;
        unit.env_size = u16::try_from(env).map_err(|_| too_many())?;
        unit.arg_copies = arg_copies;
    }
    Ok(())
}
