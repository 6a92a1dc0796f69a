//! The method table and method dictionaries: turning compiled code into runtime
//! [`MethodCode`] ([`Image::make_code`]: literals become heap values, one inline
//! cache per send site, primitives bound by class and selector, trivial methods
//! recognised), installing it, finding the code of a Method object, and lookup.
//!
//! Method ids index the append-only `Image::methods`: an id never changes. Every
//! change to a method dictionary goes through the class table, which bumps the
//! epoch (see `class_table`).

use super::{Image, Lookup};
use crate::objects::{MethodCode, Shape, cls, numbers};
use lupa_compiler::{CodeKind, CompiledCode, Const};
use lupa_heap::{Heap, OutOfMemory, Value};
use std::cell::Cell;
use std::rc::Rc;

impl Image {
    /// Turn compiled code into runtime code (recursively for blocks) and register it.
    pub(crate) fn make_code(
        &mut self,
        heap: &mut Heap,
        holder: u32,
        cc: &CompiledCode,
        file: &Rc<str>,
    ) -> Result<Rc<MethodCode>, OutOfMemory> {
        let blocks = cc
            .blocks
            .iter()
            .map(|b| self.make_code(heap, holder, b, file))
            .collect::<Result<Vec<_>, _>>()?;
        let mut lits = Vec::with_capacity(cc.literals.len());
        let mut sel_ids = Vec::with_capacity(cc.literals.len());
        for l in &cc.literals {
            lits.push(Cell::new(self.const_value(heap, l)?));
            sel_ids.push(Cell::new(match l {
                Const::Symbol(s) => self.intern(s),
                _ => u32::MAX,
            }));
        }
        let selector = self.intern(&cc.selector);
        let id = self.methods.len() as u32;
        let class_name = self.classes[holder as usize].name.to_string();
        let mut primitive = None;
        if cc.is_primitive
            || cc.pragmas.iter().any(|(p, _)| p == "primitive")
            || is_intrinsic(&class_name, &cc.selector)
        {
            primitive = self.find_primitive(&class_name, &cc.selector);
        }
        let special = cc.pragmas.iter().any(|(p, _)| {
            matches!(
                p.as_str(),
                "metaLevel" | "baseLevel" | "unwindProtect" | "exceptionHandler" | "trapShortcut"
            )
        });
        let trivial =
            if primitive.is_none() && cc.kind == CodeKind::Method && !cc.is_primitive && !special {
                crate::objects::Trivial::of(
                    &cc.code,
                    cc.num_args as usize,
                    cc.num_temps as usize,
                    cc.env_size > 0 || cc.needs_env,
                )
            } else {
                None
            };
        let mut code = MethodCode {
            trivial,
            id,
            kind: cc.kind,
            selector,
            selector_name: Rc::from(cc.selector.as_str()),
            holder: Cell::new(holder),
            num_args: cc.num_args as usize,
            num_temps: cc.num_temps as usize,
            env_size: cc.env_size as usize,
            needs_env: cc.needs_env,
            home_env: cc.kind == CodeKind::Method && (cc.env_size > 0 || cc.needs_env),
            max_stack: cc.max_stack as usize,
            saw_double: Cell::new(false),
            saw_string: Cell::new(false),
            ops: cc.code.clone().into_boxed_slice(),
            literals: lits.into_boxed_slice(),
            sel_ids: sel_ids.into_boxed_slice(),
            caches: (0..cc.num_send_sites).map(|_| Default::default()).collect(),
            blocks: blocks.into_boxed_slice(),
            native: Cell::new(None),
            hotness: Cell::new(self.start_hotness),
            primitive: Cell::new(primitive),
            primitive_only: cc.is_primitive,
            unwind_protect: cc.pragmas.iter().any(|(p, _)| p == "unwindProtect"),
            exception_handler: cc.pragmas.iter().any(|(p, _)| p == "exceptionHandler"),
            trap_shortcut: cc.pragmas.iter().any(|(p, _)| p == "trapShortcut"),
            meta_level: cc
                .pragmas
                .iter()
                .any(|(p, _)| p == "metaLevel" || p == "baseLevel" || p == "trapShortcut"),
            base_level: cc.pragmas.iter().any(|(p, _)| p == "baseLevel"),
            frame_flags: 0,
            pragmas: cc.pragmas.clone(),
            lines: cc.lines.clone(),
            line_by_pc: MethodCode::lines_by_pc(&cc.lines, cc.first_line, cc.code.len()),
            first_line: cc.first_line,
            file: file.clone(),
            source_range: Cell::new((0, 0)),
            object: Cell::new(Value::NIL),
            home: Cell::new(id),
            arrivals: Default::default(),
            local_names: cc.local_names.clone(),
        };
        code.frame_flags = crate::sched::Frame::flags_of(&code);
        let code = Rc::new(code);
        for b in code.blocks.iter() {
            set_home(b, id);
        }
        self.methods.push(code.clone());
        Ok(code)
    }

    /// Install compiled code as method of class `c`; answers its id.
    pub fn install_code(
        &mut self,
        heap: &mut Heap,
        c: u32,
        cc: &CompiledCode,
        file: &str,
    ) -> Result<u32, OutOfMemory> {
        let file: Rc<str> = Rc::from(file);
        let code = self.make_code(heap, c, cc, &file)?;
        debug_assert_eq!(code.kind, CodeKind::Method);
        let mclass = if code.primitive_only {
            cls::PRIMITIVE
        } else {
            cls::METHOD
        };
        let obj = heap.alloc_pointers(mclass, 0)?;
        heap.set_identity_hash(obj, code.id + 1);
        code.object.set(obj);
        let sel = code.selector;
        self.classes.put_method(c, sel, obj);
        Ok(code.id)
    }

    /// Why a method object cannot go into class `c`'s method dictionary under
    /// `sel`, or `None` when it can: a method must take as many arguments as
    /// the selector does and fit the instances of `c`
    /// ([`Image::receiver_problem`]). Objects that are not methods (run with
    /// `run:with:in:`) always fit.
    pub fn install_problem(&self, heap: &Heap, c: u32, sel: u32, obj: Value) -> Option<String> {
        let code = self.method_code_of(heap, obj)?;
        let sel_name = self.symbols.name(sel).to_string();
        let arity = crate::image::selector_arity(&sel_name);
        if arity != code.num_args {
            return Some(format!(
                "the selector #{sel_name} takes {arity} argument(s) but {}>>{} takes {}",
                self.class_name(code.holder.get()),
                code.selector_name,
                code.num_args
            ));
        }
        let info = &self.classes[c as usize];
        let fields = match info.shape {
            Shape::Bytes | Shape::Words => 0,
            _ if cls::holds_vm_slots(c) => 0,
            _ => info.fields.len(),
        };
        let whose = format!("instances of {} have", info.name);
        self.receiver_problem(&code, c, fields, &whose)
    }

    /// Why `code` cannot run on a receiver of class `c` that has `fields`
    /// named fields (`whose` says whose, for the message: "instances of Foo
    /// have", "the receiver (a Foo) has"), or `None` when it can. This is the
    /// one check of every way to run a method on a receiver other than a
    /// lookup in the receiver's own class (method installation,
    /// `invokeOn:with:`, `perform:inSuperclass:`), because the interpreter
    /// and native code trust a method's receiver:
    /// - a primitive, to be an instance of its class ([`Image::primitive_holder_problem`]);
    /// - a send to super, to inherit from the class it was written in (the
    ///   lookup starts above it, and what it finds trusts the receiver in turn);
    /// - field access, to find the fields the method (with its blocks) uses
    ///   ([`MethodCode::fields_used`]): the interpreter checks each access
    ///   against the object's size only, and the size of a byte or word
    ///   object counts no pointer slot; closures and environments count none
    ///   ([`cls::holds_vm_slots`]).
    pub fn receiver_problem(
        &self,
        code: &MethodCode,
        c: u32,
        fields: usize,
        whose: &str,
    ) -> Option<String> {
        if let Some(problem) = self.primitive_holder_problem(code, c) {
            return Some(problem);
        }
        if let Some(problem) = self.super_send_problem(code, code, c) {
            return Some(problem);
        }
        let used = code.fields_used();
        (used > fields).then(|| {
            format!(
                "{}>>{} uses {used} named field(s) but {whose} {fields}",
                self.class_name(code.holder.get()),
                code.selector_name,
            )
        })
    }

    /// A send to super in `code` (method `top` or one of its blocks) starts
    /// its lookup above the class `code` was written in: answers why
    /// instances of `c`, which do not inherit from that class, cannot run it.
    fn super_send_problem(&self, top: &MethodCode, code: &MethodCode, c: u32) -> Option<String> {
        let holder = code.holder.get();
        let sends_super = code
            .ops
            .iter()
            .any(|op| matches!(op, lupa_compiler::Op::SuperSend { .. }));
        if sends_super && !self.is_kind_of(c, holder) {
            return Some(format!(
                "{}>>{} sends to super from {}: it cannot run on instances of {}",
                self.class_name(top.holder.get()),
                top.selector_name,
                self.class_name(holder),
                self.class_name(c)
            ));
        }
        code.blocks
            .iter()
            .find_map(|b| self.super_send_problem(top, b, c))
    }

    /// A primitive trusts its receiver to be what its class makes (a String's
    /// bytes, an Array's slots...): a method with a primitive may only run on
    /// instances of its class and subclasses. Answers why instances of class
    /// `c` are not such receivers, or `None`.
    pub fn primitive_holder_problem(&self, code: &MethodCode, c: u32) -> Option<String> {
        let holder = code.holder.get();
        (code.primitive.get().is_some() && !self.is_kind_of(c, holder)).then(|| {
            format!(
                "{}>>{} is a primitive of {}: it cannot run on instances of {}",
                self.class_name(holder),
                code.selector_name,
                self.class_name(holder),
                self.class_name(c)
            )
        })
    }

    /// If `v` is a Method/Primitive object, its code.
    pub fn method_code_of(&self, heap: &Heap, v: Value) -> Option<Rc<MethodCode>> {
        let id = method_id_of(heap, &self.methods, v)?;
        Some(self.methods[id as usize].clone())
    }

    /// Find what `sel` means for instances of class `c`: a method id, or an object to
    /// `run:with:in:`, or nothing.
    pub fn lookup(&mut self, heap: &Heap, c: u32, sel: u32) -> Lookup {
        let methods = &self.methods;
        self.classes
            .lookup(c, sel, |obj| method_id_of(heap, methods, obj))
    }

    /// [`lookup`](Self::lookup) past the lookup cache (which
    /// [`ClassTable::cached`](crate::ClassTable::cached) probes): the superclass chain walked, its
    /// answer cached.
    pub fn lookup_uncached(&mut self, heap: &Heap, c: u32, sel: u32) -> Lookup {
        let methods = &self.methods;
        self.classes
            .walk(c, sel, |obj| method_id_of(heap, methods, obj))
    }

    fn const_value(&mut self, heap: &mut Heap, c: &Const) -> Result<Value, OutOfMemory> {
        Ok(match c {
            Const::Nil => Value::NIL,
            Const::True => Value::TRUE,
            Const::False => Value::FALSE,
            Const::Int(i) => match Value::from_i64(*i) {
                Some(v) => v,
                None => numbers::int_value(heap, &num_bigint::BigInt::from(*i))?,
            },
            Const::BigInt(b) => numbers::int_value(heap, b)?,
            Const::Double(d) => numbers::double_value(heap, *d)?,
            Const::String(s) => heap.alloc_bytes(cls::STRING, s.as_bytes())?,
            Const::Symbol(s) => self.symbol(heap, s)?,
            Const::Array(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for i in items {
                    vals.push(self.const_value(heap, i)?);
                }
                heap.alloc_with(cls::ARRAY, &vals)?
            }
        })
    }

    /// The source text of a method's definition, if known.
    pub fn method_source(&self, code: &MethodCode) -> Option<String> {
        let (start, end) = code.source_range.get();
        if end <= start {
            return None;
        }
        let src = self.sources.get(&*code.file)?;
        src.text
            .get(start as usize..end as usize)
            .map(str::to_string)
    }
}

/// Why compiled method `cc` cannot carry a pragma the VM acts on (the
/// method is then refused at compile time, at load or by `compile:`), or
/// `None`. The VM reads the frames of such methods by position:
/// - `<exceptionHandler>` (`Block>>on:do:`): the exception class and the
///   handler block are arguments 1 and 2, the handler's state temporary 1
///   (`Context argumentOf:at:`, `tempOf:at:`; a frame without them would make
///   every exception raised while looking for a handler look again forever);
/// - `<unwindProtect>` (`ensure:`, `ifCurtailed:`, traps): the unwind action
///   is temporary 1, the completion flag temporary 2 (the unwinder also
///   skips a frame without them);
/// - `<trapShortcut>`: [`crate::proxies::trap_shortcut_problem`].
///
/// `<primitive>`, `<metaLevel>` and `<baseLevel>` need no shape.
pub(crate) fn pragma_problem(cc: &CompiledCode) -> Option<String> {
    let has = |name: &str| cc.pragmas.iter().any(|(p, _)| p == name);
    if has("exceptionHandler") && (cc.num_args < 2 || cc.num_temps < 1) {
        return Some(format!(
            "is marked <exceptionHandler> but takes {} argument(s) and has {} temporaries: a handler (Block>>on:do:) takes the exception class and the handler block and keeps its state in a temporary",
            cc.num_args, cc.num_temps
        ));
    }
    if has("unwindProtect") && cc.num_temps < 2 {
        return Some(format!(
            "is marked <unwindProtect> but has {} temporaries: an unwind-protected method (ensure:) keeps its unwind action and its completion flag in temporaries 1 and 2",
            cc.num_temps
        ));
    }
    crate::proxies::trap_shortcut_problem(cc)
}

/// Intrinsics: methods that SOM's core-lib writes in Smalltalk and Lupa runs
/// with its own primitive, the Smalltalk body staying the fallback (run when
/// the primitive fails, e.g. on an index out of bounds), as the bundled
/// kernel's `<primitive>` methods do. Each is listed because the primitive
/// answers exactly what the core-lib body answers:
/// - `String>>charAt:` is `^self substringFrom: i to: i` (a one-character
///   String; out of bounds, the body raises the core-lib error);
/// - `Boolean>>&&` and `||` are `^self and: x` / `^self or: x`: with a
///   Boolean argument the primitive answers what `and:`/`or:` answer
///   (`prims/boolean.rs`); with a block it fails and the body runs.
const INTRINSICS: &[(&str, &str)] = &[("String", "charAt:"), ("Boolean", "&&"), ("Boolean", "||")];

/// Is `class>>selector` an intrinsic ([`INTRINSICS`])?
fn is_intrinsic(class: &str, selector: &str) -> bool {
    INTRINSICS.iter().any(|&(c, s)| c == class && s == selector)
}

fn set_home(b: &Rc<MethodCode>, id: u32) {
    b.home.set(id);
    for inner in b.blocks.iter() {
        set_home(inner, id);
    }
}

/// The id of method object `v` (a Method or Primitive instance registered in
/// `methods`), or `None` for any other value.
pub(super) fn method_id_of(heap: &Heap, methods: &[Rc<MethodCode>], v: Value) -> Option<u32> {
    if !v.is_ptr() {
        return None;
    }
    let c = heap.class_index(v);
    if c != cls::METHOD && c != cls::PRIMITIVE {
        return None;
    }
    let id = heap.stored_hash(v).checked_sub(1)?;
    let code = methods.get(id as usize)?;
    (code.object.get() == v).then_some(id)
}
