//! How the interpreter reports trouble: a stack overflow or a full heap becomes
//! an `error:` sent to the program (catchable), anything else a fatal
//! [`VmError`] with a Smalltalk backtrace.

use crate::vm::{Vm, VmError};
use lupa_compiler::CodeKind;

impl Vm {
    /// The running process is at its stack-depth limit: replace the pending
    /// activation (receiver and `argc` arguments on the stack) by `error:`, or stop
    /// if this happens while handling a stack overflow (see `runtime_limits`).
    #[cold]
    #[inline(never)]
    pub(super) fn stack_overflow(&mut self, argc: usize) -> Result<(), VmError> {
        if !self.limits.enter_overflow() {
            return Err(self.fatal("stack overflow while handling a stack overflow"));
        }
        let msg = if self.limits.limited_by_budget() {
            format!(
                "stack overflow: more than {} nested activations (the stacks of all processes may use 1/{} of --max-heap, {} MB)",
                self.limits.effective_max_frames(),
                crate::interp::runtime_limits::STACK_SHARE,
                self.limits.budget_bytes() >> 20
            )
        } else {
            format!(
                "stack overflow: more than {} nested activations (--max-stack-depth)",
                self.limits.max_frames()
            )
        };
        self.send_error(argc, &msg)
    }

    /// The heap went past `--max-heap`: send `error:` to the running frame's receiver.
    #[cold]
    #[inline(never)]
    pub(super) fn signal_out_of_memory(&mut self) -> Result<(), VmError> {
        let Some(f) = self.sched.running.frames.last() else {
            return Ok(());
        };
        let recv = self.sched.running.stack[f.bp];
        let max = self.heap.config().max_heap;
        self.sched.running.stack.push(recv);
        self.send_error(
            0,
            &format!(
                "out of memory: the heap is full (--max-heap {} MB)",
                max >> 20
            ),
        )
    }

    /// A primitive error under a foreign kernel (SOM's core-lib, whose
    /// `Object>>error:` prints on standard output and exits): reported as SOM
    /// VMs report it, a traceback (outermost frame first) and the message on
    /// standard error, and the program stops with status 1.
    #[cold]
    pub(crate) fn som_error(&mut self, msg: &str) -> VmError {
        let n = self.sched.running.frames.len();
        let mut text = String::from("Traceback (most recent call last):\n");
        for i in n.saturating_sub(30)..n {
            text.push_str("  ");
            text.push_str(&self.describe_frame(i));
            text.push('\n');
        }
        text.push_str(msg);
        text.push('\n');
        self.io.print_err(&text);
        VmError::Exit(1)
    }

    /// The error that ends a run stopped from outside
    /// ([`crate::interrupt::request`]), with the status asked for.
    #[cold]
    pub(crate) fn interrupted(&self) -> VmError {
        VmError::Interrupted(crate::sched::interrupt::requested().unwrap_or(130))
    }

    /// Build a fatal error with a Smalltalk backtrace.
    pub fn fatal(&mut self, msg: &str) -> VmError {
        let _ = self.io.flush(); // the fatal error is what gets reported
        VmError::Fatal(format!("{msg}\n{}", self.backtrace(30)))
    }

    /// The current process's backtrace, innermost first, at most `limit` frames
    /// (the outermost frames are elided in the middle).
    pub fn backtrace(&self, limit: usize) -> String {
        let mut out = String::new();
        let n = self.sched.running.frames.len();
        for (k, i) in (0..n).rev().enumerate() {
            if n > limit && k == limit / 2 {
                out.push_str(&format!("  ... {} more frames ...\n", n - limit));
            }
            if n > limit && k >= limit / 2 && k < n - limit / 2 {
                continue;
            }
            out.push_str("  ");
            out.push_str(&self.describe_frame(i));
            out.push('\n');
        }
        out
    }

    /// `Class>>selector (file:line)`, or `[] in Class>>selector (file:line)`.
    pub fn describe_frame(&self, i: usize) -> String {
        let f = &self.sched.running.frames[i];
        let code = self.image.code(f.method);
        let pc = f.pc.saturating_sub(1);
        let holder = self.image.class_name(code.holder.get());
        let prefix = if code.kind == CodeKind::Block {
            "[] in "
        } else {
            ""
        };
        format!(
            "{prefix}{holder}>>{} ({}:{})",
            code.selector_name,
            code.file,
            code.line_of(pc)
        )
    }
}
