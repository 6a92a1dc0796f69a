//! The VM's query API for observers: what a profiler may ask about the code it
//! observed, by method id, without reaching into the class or method tables.
//!
//! Activation and sample events carry method ids (indices in the append-only
//! method table, stable for the VM's life); a profiler keeps the ids while it
//! runs and names them once, at the end, through [`Image::describe_method`].

use super::Image;
use lupa_compiler::CodeKind;

/// What a profiler needs to name and locate one method or block.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MethodDescription {
    /// Name of the class holding the (home) method: `Foo` or `Foo class`.
    pub class: String,
    /// Selector of the (home) method.
    pub selector: String,
    /// The class's package: the directory of its source file (`Benchmarks/Richards`).
    pub category: String,
    /// Where the class's package is: the directory of its source file as
    /// reports name it (`<lupa>/Benchmarks/Richards`, or the class-path
    /// directory `./Richards`): two packages of one name are told apart by it.
    pub package_location: String,
    /// Source file of the definition.
    pub file: String,
    /// Line of the definition in `file` (1-based).
    pub first_line: u32,
    /// Method or block.
    pub kind: CodeKind,
    /// For a block: its position among all blocks of its home method (pre-order, from 1)
    /// when the home method has more than one block, so that blocks get distinct names.
    pub block_ordinal: Option<usize>,
}

impl MethodDescription {
    /// `Class>>selector` for a method, `[]#k in Class>>selector` for a block.
    pub fn display_name(&self) -> String {
        let base = format!("{}>>{}", self.class, self.selector);
        match (self.kind, self.block_ordinal) {
            (CodeKind::Block, Some(k)) => format!("[]#{k} in {base}"),
            (CodeKind::Block, None) => format!("[] in {base}"),
            _ => base,
        }
    }
}

/// One instruction of a method or block, as a profiler's bytecode report needs
/// it ([`Image::instructions`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstructionInfo {
    /// Its index (the pc of the instruction).
    pub index: u32,
    /// Its source line.
    pub line: u32,
    /// The selector it sends, if it is a send (fast-path sends included).
    pub send: Option<String>,
    /// Where it may jump, if it is a branch (loop exits included).
    pub target: Option<u32>,
}

impl Image {
    /// Describe the method or block with this id, or `None` for an unknown id.
    pub fn describe_method(&self, id: u32) -> Option<MethodDescription> {
        let code = self.methods.get(id as usize)?;
        let holder = code.holder.get();
        let block_ordinal = if code.kind == CodeKind::Block {
            self.block_ordinal(code.home.get(), code.id)
        } else {
            None
        };
        Some(MethodDescription {
            class: self.class_name(holder).to_string(),
            selector: code.selector_name.to_string(),
            category: self
                .classes
                .get(holder as usize)
                .map(|c| c.category.to_string())
                .unwrap_or_default(),
            package_location: self.package_location(holder),
            file: code.file.to_string(),
            first_line: code.first_line,
            kind: code.kind,
            block_ordinal,
        })
    }

    /// The instructions of the method or block `id` (`None` for an unknown id):
    /// what a bytecode-range report needs (sends, branch targets, lines).
    pub fn instructions(&self, id: u32) -> Option<Vec<InstructionInfo>> {
        use lupa_compiler::Op;
        let code = self.methods.get(id as usize)?;
        let selector = |lit: u16| {
            code.sel_ids
                .get(usize::from(lit))
                .map(|c| c.get())
                .filter(|&s| s != u32::MAX)
                .map_or_else(|| "?".to_string(), |s| self.symbols.name(s).to_string())
        };
        Some(
            code.ops
                .iter()
                .enumerate()
                .map(|(i, op)| {
                    let (send, target) = match *op {
                        Op::Send { sel, .. } | Op::SuperSend { sel, .. } => {
                            (Some(selector(sel)), None)
                        }
                        Op::Special { op, .. } => (Some(op.selector().0.to_string()), None),
                        Op::Jump(t) | Op::JumpBack(t) => (None, Some(t)),
                        Op::JumpIfTrue { target, .. }
                        | Op::JumpIfFalse { target, .. }
                        | Op::JumpIfNil { target, .. }
                        | Op::JumpIfNotNil { target, .. }
                        | Op::ForIncr { target, .. } => (None, Some(target)),
                        Op::ForTest { exit, .. } => (None, Some(exit)),
                        _ => (None, None),
                    };
                    InstructionInfo {
                        index: i as u32,
                        line: code.line_of(i),
                        send,
                        target,
                    }
                })
                .collect(),
        )
    }

    /// The source line of instruction `index` of the method or block `id`
    /// (`None` for an unknown id).
    pub fn line_of(&self, id: u32, index: u32) -> Option<u32> {
        let code = self.methods.get(id as usize)?;
        Some(code.line_of(index as usize))
    }

    /// Number of methods and blocks created so far (ids are `0..method_count()`).
    pub fn method_count(&self) -> usize {
        self.methods.len()
    }

    /// The pre-order position of block `target` among the blocks of method `home`,
    /// when that method has more than one block.
    fn block_ordinal(&self, home: u32, target: u32) -> Option<usize> {
        fn walk(code: &crate::objects::MethodCode, target: u32, k: &mut usize) -> bool {
            for b in code.blocks.iter() {
                *k += 1;
                if b.id == target || walk(b, target, k) {
                    return true;
                }
            }
            false
        }
        let home = self.methods.get(home as usize)?;
        let mut k = 0;
        let several =
            home.blocks.len() + home.blocks.iter().map(|b| b.blocks.len()).sum::<usize>() > 1;
        (walk(home, target, &mut k) && several).then_some(k)
    }
}
