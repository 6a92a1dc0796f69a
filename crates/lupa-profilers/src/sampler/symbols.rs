//! Native pcs into Rust function names: the `lupa` binary's own symbol table
//! (read from `/proc/self/exe` with the `object` crate, names demangled without
//! their hash), shifted by where the binary is loaded (`/proc/self/maps`).
//!
//! Contract: [`Symbols::name_of`] answers the function whose symbol covers the
//! pc, or `None` (a pc in a shared library, the kernel's vDSO, or a stripped
//! binary). Release builds keep their symbol table (`strip` is not set in the
//! workspace's profile), so this works on the shipped binary.

use object::{Object, ObjectSegment, ObjectSymbol, SymbolKind};

/// The function symbols of the running binary, by address.
#[derive(Debug, Default)]
pub(crate) struct Symbols {
    /// (start, end, name), sorted by start, in run-time addresses.
    functions: Vec<(u64, u64, String)>,
}

impl Symbols {
    /// Read the running binary's symbols.
    pub(crate) fn of_this_binary() -> Result<Symbols, String> {
        let exe = std::fs::read_link("/proc/self/exe")
            .map_err(|e| format!("cannot find the running binary: {e}"))?;
        let data =
            std::fs::read(&exe).map_err(|e| format!("cannot read {}: {e}", exe.display()))?;
        let file = object::File::parse(&*data)
            .map_err(|e| format!("cannot parse {}: {e}", exe.display()))?;
        let maps = std::fs::read_to_string("/proc/self/maps")
            .map_err(|e| format!("cannot read /proc/self/maps: {e}"))?;
        let base = load_base(&maps, &exe.display().to_string())
            .ok_or_else(|| format!("{} is not mapped in /proc/self/maps", exe.display()))?;
        let first = file.segments().map(|s| s.address()).min().unwrap_or(0) & !0xfff;
        let bias = base.wrapping_sub(first);
        let mut functions: Vec<(u64, u64, String)> = file
            .symbols()
            .filter(|s| s.kind() == SymbolKind::Text && s.size() > 0)
            .filter_map(|s| {
                let name = s.name().ok()?;
                let start = s.address().wrapping_add(bias);
                Some((
                    start,
                    start + s.size(),
                    format!("{:#}", rustc_demangle::demangle(name)),
                ))
            })
            .collect();
        if functions.is_empty() {
            return Err(format!("{} has no symbol table (stripped?)", exe.display()));
        }
        functions.sort_by_key(|f| f.0);
        Ok(Symbols { functions })
    }

    /// The function at `pc`.
    pub(crate) fn name_of(&self, pc: u64) -> Option<&str> {
        let i = self
            .functions
            .partition_point(|f| f.0 <= pc)
            .checked_sub(1)?;
        let (start, end, name) = &self.functions[i];
        (*start <= pc && pc < *end).then_some(name.as_str())
    }
}

/// The start address of the mapping of `exe` at file offset 0.
fn load_base(maps: &str, exe: &str) -> Option<u64> {
    maps.lines().find_map(|line| {
        let mut fields = line.split_whitespace();
        let range = fields.next()?;
        let _perms = fields.next()?;
        let offset = fields.next()?;
        let path = fields.nth(2)?;
        (path == exe && u64::from_str_radix(offset, 16).ok()? == 0)
            .then(|| u64::from_str_radix(range.split('-').next()?, 16).ok())
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn a_function_with_a_name() -> u64 {
        std::hint::black_box(42)
    }

    #[test]
    fn a_function_of_this_binary_is_found_by_its_address() {
        let symbols = Symbols::of_this_binary().expect("test binaries have symbols");
        let pc = a_function_with_a_name as *const () as usize as u64;
        let name = symbols.name_of(pc).expect("symbolised");
        assert!(name.ends_with("a_function_with_a_name"), "{name}");
        assert_eq!(a_function_with_a_name(), 42);
        assert_eq!(symbols.name_of(0), None);
    }

    #[test]
    fn the_load_base_is_the_mapping_at_offset_zero() {
        let maps =
            "5600-5700 r--p 00001000 08:01 12 /bin/x\n5500-5600 r--p 00000000 08:01 12 /bin/x\n";
        assert_eq!(load_base(maps, "/bin/x"), Some(0x5500));
        assert_eq!(load_base(maps, "/bin/y"), None);
    }
}
