//! `File class` primitives: reading and writing files by handle (the table is
//! `crate::io::files::OpenFiles`, the Smalltalk side `smalltalk/Kernel/File.som`).
//! A failure (a missing or unreadable file, a closed handle) is an error whose
//! message names the path and the reason; the `File` methods signal it.

use super::Primitive;
use super::{Args, PrimFailure, PrimResult, Reply::Answer};
use crate::objects::cls;
use crate::vm::Vm;
use lupa_heap::Value;

fn int(i: i64) -> Result<Value, PrimFailure> {
    Value::from_i64(i).ok_or(PrimFailure::Fail)
}

fn bytes_or_nil(vm: &mut Vm, b: Option<Vec<u8>>) -> PrimResult {
    Ok(Answer(match b {
        Some(b) => vm.new_bytes(cls::STRING, &b)?,
        None => Value::NIL,
    }))
}

/// `primOpenRead: path`: a handle.
fn open_read(vm: &mut Vm, args: Args) -> PrimResult {
    let path = args.string(vm, 1)?;
    let h = vm
        .blocking(|vm| vm.io.files.open_read(&path))
        .map_err(PrimFailure::Error)?;
    Ok(Answer(int(h)?))
}

/// `primOpenWrite: path`: a handle; the file appears at `primClose:`.
fn open_write(vm: &mut Vm, args: Args) -> PrimResult {
    let path = args.string(vm, 1)?;
    let h = vm
        .blocking(|vm| vm.io.files.open_write(&path))
        .map_err(PrimFailure::Error)?;
    Ok(Answer(int(h)?))
}

/// `primReadLine: handle`: the next line (no end of line), or nil at the
/// end. A line longer than a VM-side table may be (`vm::side_tables`) is an
/// out-of-memory error.
fn read_line(vm: &mut Vm, args: Args) -> PrimResult {
    let h = args.int(vm, 1)?;
    let max = vm.side_table_limit();
    let line = vm
        .blocking(|vm| vm.io.files.read_line(h, max))
        .map_err(PrimFailure::Error)?;
    bytes_or_nil(vm, line)
}

/// `primRead: handle count: n`: up to n bytes, or nil at the end.
fn read(vm: &mut Vm, args: Args) -> PrimResult {
    let h = args.int(vm, 1)?;
    let n = args.int(vm, 2)?;
    let n = usize::try_from(n).map_err(|_| PrimFailure::Error(format!("cannot read {n} bytes")))?;
    vm.check_side_table(&format!("reading {n} bytes"), n, "")?;
    let chunk = vm
        .blocking(|vm| vm.io.files.read(h, n))
        .map_err(PrimFailure::Error)?;
    bytes_or_nil(vm, chunk)
}

/// `primLineNumber: handle`: lines answered so far.
fn line_number(vm: &mut Vm, args: Args) -> PrimResult {
    let h = args.int(vm, 1)?;
    let n = vm.io.files.line_number(h).map_err(PrimFailure::Error)?;
    Ok(Answer(int(n as i64)?))
}

/// `primWrite: handle string: aString`.
fn write(vm: &mut Vm, args: Args) -> PrimResult {
    let h = args.int(vm, 1)?;
    let s = args.get(vm, 2);
    if vm.string_of(s).is_none() {
        return Err(PrimFailure::wrong(2, super::Expected::String));
    }
    let bytes = vm.heap.bytes(s).to_vec();
    vm.blocking(|vm| vm.io.files.write(h, &bytes))
        .map_err(PrimFailure::Error)?;
    Ok(Answer(args.receiver(vm)))
}

/// `primClose: handle`.
fn close(vm: &mut Vm, args: Args) -> PrimResult {
    let h = args.int(vm, 1)?;
    vm.blocking(|vm| vm.io.files.close(h))
        .map_err(PrimFailure::Error)?;
    Ok(Answer(args.receiver(vm)))
}

/// `primAbandon: handle`: close, discarding what a writer wrote.
fn abandon(vm: &mut Vm, args: Args) -> PrimResult {
    let h = args.int(vm, 1)?;
    vm.blocking(|vm| vm.io.files.abandon(h))
        .map_err(PrimFailure::Error)?;
    Ok(Answer(args.receiver(vm)))
}

/// `exists: path`.
fn exists(vm: &mut Vm, args: Args) -> PrimResult {
    let path = args.string(vm, 1)?;
    let exists = vm.blocking(|_| std::path::Path::new(&path).exists());
    Ok(Answer(if exists { Value::TRUE } else { Value::FALSE }))
}

/// `sizeOf: path`: bytes, or nil when there is no such file.
fn size_of(vm: &mut Vm, args: Args) -> PrimResult {
    let path = args.string(vm, 1)?;
    let meta = vm.blocking(|_| std::fs::metadata(&path));
    Ok(Answer(match meta {
        Ok(m) => int(i64::try_from(m.len()).map_err(|_| PrimFailure::Fail)?)?,
        Err(_) => Value::NIL,
    }))
}

/// `delete: path`: true if a file was removed, false if there was none.
fn delete(vm: &mut Vm, args: Args) -> PrimResult {
    let path = args.string(vm, 1)?;
    match vm.blocking(|_| std::fs::remove_file(&path)) {
        Ok(()) => Ok(Answer(Value::TRUE)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Answer(Value::FALSE)),
        Err(e) => Err(PrimFailure::Error(format!("cannot delete {path}: {e}"))),
    }
}

/// `temporaryPath: aName`: a path in the system's temporary directory, unique to
/// this process (`TMPDIR/lupa-PID-aName`).
fn temporary_path(vm: &mut Vm, args: Args) -> PrimResult {
    let name = args.string(vm, 1)?;
    if name.contains('/') || name.is_empty() {
        return Err(PrimFailure::Error(format!(
            "a temporary file name must be a plain name, not '{name}'"
        )));
    }
    let p = std::env::temp_dir().join(format!("lupa-{}-{name}", std::process::id()));
    Ok(Answer(
        vm.new_bytes(cls::STRING, p.to_string_lossy().as_bytes())?,
    ))
}

/// The primitives of this module: the classes and selector each is bound to.
pub(crate) const PRIMITIVES: &[Primitive] = &[
    Primitive::new(&["File class"], "primOpenRead:", open_read),
    Primitive::new(&["File class"], "primOpenWrite:", open_write),
    Primitive::new(&["File class"], "primReadLine:", read_line).allocating(),
    Primitive::new(&["File class"], "primRead:count:", read).allocating(),
    Primitive::new(&["File class"], "primLineNumber:", line_number),
    Primitive::new(&["File class"], "primWrite:string:", write),
    Primitive::new(&["File class"], "primClose:", close),
    Primitive::new(&["File class"], "primAbandon:", abandon),
    Primitive::new(&["File class"], "exists:", exists),
    Primitive::new(&["File class"], "sizeOf:", size_of),
    Primitive::new(&["File class"], "delete:", delete),
    Primitive::new(&["File class"], "temporaryPath:", temporary_path).allocating(),
];
