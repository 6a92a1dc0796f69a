//! Class loading and bootstrap: the class-path search (the user's class path
//! first, then the bundled library), parsing and defining a class (superclass
//! first, fields, shape, class-side fields, methods), the kernel bootstrap with
//! its fixed class indices and the synthetic definitions of optional kernel
//! classes a user's core-lib may lack.

use super::{Image, Lookup};
use crate::objects::{Shape, cls};
use crate::vm::VmError;
use lupa_heap::{Heap, OutOfMemory, Value};
use lupa_syntax::{ClassDef, SourceFile};
use std::rc::Rc;

include!(concat!(env!("OUT_DIR"), "/bundled.rs"));

impl Image {
    /// Create a class and its metaclass (placeholders, not yet defined), answering the class index.
    fn create_class_pair(&mut self, heap: &mut Heap, name: &str) -> Result<u32, OutOfMemory> {
        let c = self.classes.add(name, false);
        let m = self.classes.add(&format!("{name} class"), true);
        self.classes[c as usize].partner = m;
        self.classes[m as usize].partner = c;
        let cobj = self.alloc_class_objects(heap, c)?;
        self.set_global(name, cobj);
        Ok(c)
    }

    /// Allocate the heap objects of class `c` and its metaclass: the class object is
    /// an instance of the metaclass, the metaclass object an instance of Metaclass;
    /// each carries its class index as identity hash. Answers the class object.
    fn alloc_class_objects(&mut self, heap: &mut Heap, c: u32) -> Result<Value, OutOfMemory> {
        let m = self.classes[c as usize].partner;
        let cobj = heap.alloc_pointers(m, 0)?;
        heap.set_identity_hash(cobj, c);
        let mobj = heap.alloc_pointers(cls::METACLASS, 0)?;
        heap.set_identity_hash(mobj, m);
        self.classes[c as usize].object = cobj;
        self.classes[m as usize].object = mobj;
        Ok(cobj)
    }

    pub(crate) fn bootstrap(&mut self, heap: &mut Heap) -> Result<(), VmError> {
        // Fixed indices for the well-known classes; metaclasses come after them.
        for name in &cls::NAMES[1..] {
            self.classes.add(name, false);
        }
        for c in 1..cls::COUNT {
            let name = format!("{} class", self.classes[c as usize].name);
            let m = self.classes.add(&name, true);
            self.classes[c as usize].partner = m;
            self.classes[m as usize].partner = c;
        }
        for c in 1..cls::COUNT {
            let cobj = self.alloc_class_objects(heap, c)?;
            let name = self.classes[c as usize].name.clone();
            if c != cls::ENV {
                self.set_global(&name, cobj);
            }
        }
        // Shapes of the kernel classes.
        for (c, shape) in [
            (cls::ARRAY, Shape::Indexable),
            (cls::STRING, Shape::Bytes),
            (cls::SYMBOL, Shape::Bytes),
            (cls::DOUBLE, Shape::Words),
            (cls::INTEGER, Shape::Words),
            (cls::WEAK_ARRAY, Shape::Weak),
            (cls::EPHEMERON, Shape::Ephemeron),
            (cls::ENV, Shape::Indexable),
        ] {
            self.classes[c as usize].shape = shape;
        }
        self.sym_cache = super::WellKnownSymbols::new(self);
        // Load the kernel in dependency order (superclasses load themselves first).
        for c in 1..cls::COUNT {
            if c == cls::ENV {
                self.classes[c as usize].superclass = Some(cls::OBJECT);
                let m = self.classes[c as usize].partner;
                self.classes[m as usize].superclass =
                    Some(self.classes[cls::OBJECT as usize].partner);
                self.classes[c as usize].loaded = true;
                continue;
            }
            let name = self.classes[c as usize].name.to_string();
            if !self.classes[c as usize].loaded {
                match self.load_class_by_name(heap, &name) {
                    Ok(_) => {}
                    Err(VmError::ClassNotFound(_)) if c > cls::SYSTEM || c == cls::BLOCK4 => {
                        // Optional kernel classes (processes, weak arrays, ephemerons, Context, Block4) may be
                        // absent from a user's core-lib: give them a minimal definition.
                        self.define_synthetic(heap, c)?;
                    }
                    Err(e) => return Err(e),
                }
            }
        }
        if self.classes[cls::BLOCK4 as usize].superclass.is_none() {
            self.define_synthetic(heap, cls::BLOCK4)?;
        }
        self.foreign_kernel = match self.lookup(heap, cls::OBJECT, self.sym_cache.error) {
            Lookup::Method(m) => !self.methods[m as usize].file.starts_with("<lupa>/"),
            _ => true,
        };
        // The system object.
        let sys = self.instantiate(heap, cls::SYSTEM, 0)?;
        self.system_object = sys;
        self.set_global("system", sys);
        let sched = self.instantiate(heap, cls::SCHEDULER, 0)?;
        self.processor_object = sched;
        self.set_global("Processor", sched);
        Ok(())
    }

    fn define_synthetic(&mut self, heap: &mut Heap, c: u32) -> Result<(), VmError> {
        let sup = match c {
            cls::BLOCK4 => cls::BLOCK,
            _ => cls::OBJECT,
        };
        if !self.classes[sup as usize].loaded {
            let name = self.classes[sup as usize].name.to_string();
            self.load_class_by_name(heap, &name)?;
        }
        self.classes.set_superclass(c, Some(sup));
        self.classes[c as usize].fields = self.classes[sup as usize].fields.clone();
        self.classes[c as usize].loaded = true;
        let m = self.classes[c as usize].partner;
        self.classes[m as usize].loaded = true;
        // Primitive-only synthetic methods for the classes the VM relies on.
        let prims: &[(&str, &str)] = match c {
            cls::BLOCK4 => &[("value:with:with:", "value: a with: b with: c = primitive")],
            _ => &[],
        };
        for (_, src) in prims {
            self.compile_and_install(heap, c, src, "<synthetic>")?;
        }
        Ok(())
    }

    /// Find the source of class `name`: the class path first, then the bundled library.
    /// A file that exists but cannot be read, or is not UTF-8, is an error naming
    /// it (with the byte offset of the first invalid byte), not a missing class.
    fn find_class_source(&self, name: &str) -> Result<Option<(String, String, String)>, VmError> {
        let file = format!("{name}.som");
        for dir in &self.class_path {
            let p = dir.join(&file);
            // Only a regular file is read: opening a FIFO or a device would
            // block or never end.
            match std::fs::metadata(&p) {
                Ok(meta) if !meta.is_file() => {
                    return Err(VmError::Io(format!(
                        "cannot read {}: not a regular file",
                        p.display()
                    )));
                }
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                _ => {}
            }
            let bytes = match std::fs::read(&p) {
                Ok(bytes) => bytes,
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
                Err(e) => return Err(VmError::Io(format!("cannot read {}: {e}", p.display()))),
            };
            let text = String::from_utf8(bytes).map_err(|e| {
                VmError::Compile(format!(
                    "{}: not valid UTF-8 (first invalid byte at offset {})",
                    p.display(),
                    e.utf8_error().valid_up_to()
                ))
            })?;
            return Ok(Some((p.display().to_string(), text, package_of(dir))));
        }
        if self.use_bundled {
            for (path, text) in BUNDLED {
                let base = path.rsplit('/').next().unwrap_or(path);
                if base == file {
                    let cat = path
                        .rsplit_once('/')
                        .map(|(d, _)| d.to_string())
                        .unwrap_or_default();
                    return Ok(Some((
                        format!("{BUNDLED_PREFIX}{path}"),
                        (*text).to_string(),
                        cat,
                    )));
                }
            }
        }
        Ok(None)
    }

    /// Names of every class the class path and bundled library offer (for `lupa test`).
    pub fn available_class_names(&self, bundled_prefix: Option<&str>) -> Vec<String> {
        let mut names = Vec::new();
        for dir in &self.class_path {
            names.extend(class_files_in(dir));
        }
        if let Some(prefix) = bundled_prefix {
            for (path, _) in BUNDLED {
                if path.starts_with(prefix) {
                    let base = path.rsplit('/').next().unwrap_or(path);
                    names.push(base.trim_end_matches(".som").to_string());
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// Every package the VM can load classes from, class-path directories
    /// (those holding class files) first, then the bundled library's
    /// folders (when it is searched), each once.
    pub fn packages(&self) -> Vec<PackageInfo> {
        let mut out: Vec<PackageInfo> = Vec::new();
        for dir in &self.class_path {
            if class_files_in(dir).is_empty() {
                continue;
            }
            let p = PackageInfo {
                name: package_of(dir),
                location: dir_location(dir),
                bundled: false,
            };
            if !out.contains(&p) {
                out.push(p);
            }
        }
        if self.use_bundled {
            for (path, _) in BUNDLED {
                let Some((dir, _)) = path.rsplit_once('/') else {
                    continue;
                };
                let p = PackageInfo {
                    name: dir.rsplit('/').next().unwrap_or(dir).to_string(),
                    location: format!("{BUNDLED_PREFIX}{dir}"),
                    bundled: true,
                };
                if !out.contains(&p) {
                    out.push(p);
                }
            }
        }
        out
    }

    /// The packages `spec` names (empty: none). A package is the directory
    /// its classes are loaded from, so two directories of the same last name
    /// are two packages: a name (`Richards`) names the class-path directories
    /// of that name when there are any (the class path comes first, as it
    /// does for classes), else the bundled folders of that last name; a path
    /// (it has a `/`) names one directory: a bundled folder (`Benchmarks/Richards`, or
    /// `<lupa>/Benchmarks/Richards` as reports write it) or a class-path
    /// directory as given on the class path.
    pub fn resolve_package(&self, spec: &str) -> Vec<PackageInfo> {
        let all = self.packages();
        let is_path = spec.contains('/') || spec.contains(std::path::MAIN_SEPARATOR);
        let by_path: Vec<PackageInfo> = all
            .iter()
            .filter(|_| is_path)
            .filter(|p| {
                let bundled_path = p.location.strip_prefix(BUNDLED_PREFIX);
                p.location == spec
                    || (p.bundled && bundled_path == Some(spec))
                    || (!p.bundled
                        && std::path::Path::new(spec)
                            .components()
                            .eq(std::path::Path::new(&p.location).components()))
            })
            .cloned()
            .collect();
        if !by_path.is_empty() {
            return by_path;
        }
        let user: Vec<PackageInfo> = all
            .iter()
            .filter(|p| !p.bundled && p.name == spec)
            .cloned()
            .collect();
        if !user.is_empty() {
            return user;
        }
        all.into_iter()
            .filter(|p| p.bundled && p.name == spec)
            .collect()
    }

    /// Names of the classes of the packages `package` names
    /// ([`Image::resolve_package`]) that load from there (a class of the same
    /// name earlier on the search path is another package's), sorted,
    /// without duplicates.
    pub fn package_class_names(&self, package: &str) -> Vec<String> {
        let mut names = Vec::new();
        for p in self.resolve_package(package) {
            let files = if p.bundled {
                let folder = p
                    .location
                    .strip_prefix(BUNDLED_PREFIX)
                    .unwrap_or(&p.location);
                BUNDLED
                    .iter()
                    .filter_map(|(path, _)| {
                        let (dir, file) = path.rsplit_once('/')?;
                        (dir == folder).then(|| file.trim_end_matches(".som").to_string())
                    })
                    .collect()
            } else {
                self.class_path
                    .iter()
                    .filter(|d| dir_location(d) == p.location)
                    .flat_map(|d| class_files_in(d))
                    .collect::<Vec<_>>()
            };
            for name in files {
                if self.location_of_class_named(&name).as_deref() == Some(p.location.as_str()) {
                    names.push(name);
                }
            }
        }
        names.sort();
        names.dedup();
        names
    }

    /// Where class `name` comes from: the package location of the loaded
    /// class, or of the file the search would load it from.
    fn location_of_class_named(&self, name: &str) -> Option<String> {
        if let Some(c) = self.classes.index_of(name)
            && self.classes[c as usize].loaded
        {
            return Some(self.package_location(c));
        }
        let file = format!("{name}.som");
        for dir in &self.class_path {
            if dir.join(&file).is_file() {
                return Some(dir_location(dir));
            }
        }
        if self.use_bundled {
            for (path, _) in BUNDLED {
                if let Some((dir, f)) = path.rsplit_once('/')
                    && f == file
                {
                    return Some(format!("{BUNDLED_PREFIX}{dir}"));
                }
            }
        }
        None
    }

    /// The package location of class (or metaclass) `c`: the directory its
    /// source file is in (`<lupa>/Benchmarks/Richards` for a bundled class,
    /// the class-path directory for the program's own; empty when it has no
    /// file).
    pub fn package_location(&self, c: u32) -> String {
        let Some(info) = self.classes.get(c as usize) else {
            return String::new();
        };
        location_of_source(&info.source)
    }

    /// Load (if needed) and answer the class index of `name`.
    pub fn load_class_by_name(&mut self, heap: &mut Heap, name: &str) -> Result<u32, VmError> {
        if let Some(c) = self.classes.index_of(name)
            && self.classes[c as usize].loaded
        {
            return Ok(c);
        }
        if self.loading.iter().any(|n| n == name) {
            return Err(VmError::Compile(format!(
                "class {name} inherits from itself (cycle: {})",
                self.loading.join(" -> ")
            )));
        }
        let Some((path, text, category)) = self.find_class_source(name)? else {
            let path = self
                .class_path
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(":");
            let wherein = match (path.is_empty(), self.use_bundled) {
                (true, true) => "in Lupa's class library (no class path given)".to_string(),
                (true, false) => {
                    "anywhere: no class path given and the bundled library is off".to_string()
                }
                (false, true) => format!("on the class path ({path}) nor in Lupa's class library"),
                (false, false) => format!("on the class path ({path})"),
            };
            return Err(VmError::ClassNotFound(format!(
                "cannot find class {name}: no {name}.som {wherein}"
            )));
        };
        // What loading allocates (methods, class, metaclass, literals) is the
        // VM's, not the program's: a lifetime profile does not sample it.
        let held = if self.loading.is_empty() {
            heap.hold_allocation_sampling()
        } else {
            None
        };
        self.loading.push(name.to_string());
        let r = self.load_class_source(heap, &path, &text, &category, Some(name));
        self.loading.pop();
        heap.release_allocation_sampling(held);
        r
    }

    /// Parse, compile and install a class from source. `expected` is the name the
    /// file must define (its file name).
    pub fn load_class_source(
        &mut self,
        heap: &mut Heap,
        path: &str,
        text: &str,
        category: &str,
        expected: Option<&str>,
    ) -> Result<u32, VmError> {
        let src = Rc::new(SourceFile::new(path, text));
        let def = lupa_syntax::parse_class(text).map_err(|d| VmError::Compile(d.render(&src)))?;
        if let Some(exp) = expected
            && def.name.name != exp
        {
            return Err(VmError::Compile(format!(
                "{path}: the file defines class {} but was expected to define {exp}",
                def.name.name
            )));
        }
        self.sources.insert(Rc::from(path), src.clone());
        let c = self.define_class(heap, &def, &src, category)?;
        if !path.starts_with("<lupa>/") {
            self.add_missing_primitives(heap, c, &def)?;
        }
        Ok(c)
    }

    /// A user's class that shadows one of Lupa's (a core-lib of its own:
    /// SOM's `System`, `Class`, `Method`...) gets the primitives Lupa's
    /// declares and it lacks, so that the VM's services (the collector's
    /// statistics, lifetimes, method proxies) work on any core-lib: every
    /// primitive (`= primitive`, or `<primitive>` with its fallback code),
    /// and, for the kernel classes (`Object`, `Class`, `Method`, `String`,
    /// `System`...), the Smalltalk methods the class does not understand at
    /// all (never one it defines or inherits).
    fn add_missing_primitives(
        &mut self,
        heap: &mut Heap,
        c: u32,
        def: &ClassDef,
    ) -> Result<(), VmError> {
        if !self.use_bundled {
            return Ok(());
        }
        let kernel = c < cls::COUNT;
        let theirs_super = def.superclass.as_ref().map(|s| s.name.clone());
        let partner = self.classes[c as usize].partner;
        // Lupa's class of that name, then (kernel classes only) its
        // superclasses up to the user's class's superclass: Lupa's `Array`
        // inherits `includes:` from `Collection`, SOM's from nothing.
        let mut name = Some(def.name.name.clone());
        let mut first = true;
        while let Some(n) = name.take() {
            if !first && (Some(&n) == theirs_super.as_ref() || n == "Object") {
                break;
            }
            let Some((path, lupa)) = bundled_class(&n) else {
                break;
            };
            let src = Rc::new(SourceFile::new(format!("<lupa>/{path}"), lupa.1));
            let lupa = lupa.0;
            let sides = [
                (c, &def.instance_methods, &lupa.instance_methods),
                (partner, &def.class_methods, &lupa.class_methods),
            ];
            for (target, theirs, ours) in sides {
                for md in ours {
                    if theirs.iter().any(|m| m.selector == md.selector) {
                        continue;
                    }
                    let primitive = matches!(md.body, lupa_syntax::MethodBody::Primitive)
                        || md.pragmas.iter().any(|p| p.selector == "primitive");
                    let sel = self.intern(&md.selector);
                    let understood =
                        !matches!(self.lookup(heap, target, sel), super::Lookup::NotFound);
                    if primitive && first && !understood {
                        self.compile_def_and_install(heap, target, md, &src)?;
                    } else if kernel && !understood {
                        // A kernel class's Smalltalk method the class does not
                        // understand at all (not even inherited); one that
                        // does not compile against the user's class is left out.
                        let _ = self.compile_def_and_install(heap, target, md, &src);
                    }
                }
            }
            if !kernel {
                break;
            }
            first = false;
            name = lupa.superclass.as_ref().map(|s| s.name.clone());
        }
        Ok(())
    }

    fn define_class(
        &mut self,
        heap: &mut Heap,
        def: &ClassDef,
        src: &Rc<SourceFile>,
        category: &str,
    ) -> Result<u32, VmError> {
        let name = def.name.name.as_str();
        let sup = match &def.superclass {
            None => Some(cls::OBJECT),
            Some(id) if id.name == "nil" => None,
            Some(id) => {
                let s = self
                    .load_class_by_name(heap, &id.name)
                    .map_err(|e| match e {
                        VmError::ClassNotFound(m) => {
                            let (l, c) = src.line_col(id.span.start);
                            VmError::ClassNotFound(format!(
                                "{}:{l}:{c}: superclass of {name}: {m}",
                                src.name
                            ))
                        }
                        other => other,
                    })?;
                Some(s)
            }
        };
        let c = match self.classes.index_of(name) {
            Some(c) => c,
            None => self.create_class_pair(heap, name)?,
        };
        // The new superclass link must not close a cycle (`Object = Integer ( )`
        // on the class path: Integer's implicit superclass is Object), or every
        // lookup that misses would walk it forever.
        let mut ancestor = sup;
        let mut chain = vec![name.to_string()];
        while let Some(a) = ancestor {
            chain.push(self.classes[a as usize].name.to_string());
            if a == c {
                let (l, col) = def
                    .superclass
                    .as_ref()
                    .map(|id| src.line_col(id.span.start))
                    .unwrap_or((1, 1));
                return Err(VmError::Compile(format!(
                    "{}:{l}:{col}: class {name} would inherit from itself ({})",
                    src.name,
                    chain.join(" -> ")
                )));
            }
            ancestor = self.classes[a as usize].superclass;
        }
        self.classes.set_superclass(c, sup);
        let m = self.classes[c as usize].partner;
        // Fields.
        let mut fields: Vec<Rc<str>> = sup
            .map(|s| self.classes[s as usize].fields.clone())
            .unwrap_or_default();
        for f in &def.instance_fields {
            if fields.iter().any(|g| **g == *f.name) {
                let (l, c) = src.line_col(f.span.start);
                return Err(VmError::Compile(format!(
                    "{}:{l}:{c}: error: field '{}' of {name} is already defined in a superclass",
                    src.name, f.name
                )));
            }
        }
        fields.extend(
            def.instance_fields
                .iter()
                .map(|f| Rc::from(f.name.as_str())),
        );
        let msup = self.classes[m as usize].superclass.unwrap_or(cls::CLASS);
        let mut mfields: Vec<Rc<str>> = if msup == m {
            Vec::new()
        } else {
            self.classes[msup as usize].fields.clone()
        };
        mfields.extend(def.class_fields.iter().map(|f| Rc::from(f.name.as_str())));
        // Shape is inherited unless the class is a kernel class with a fixed shape.
        if c >= cls::COUNT
            && let Some(s) = sup
        {
            self.classes[c as usize].shape = self.classes[s as usize].shape;
        }
        // Instances of byte and word classes have no pointer slots: a named
        // field there would make field access read raw data as objects. The
        // slots of closures and environments are the VM's: a field there
        // would let a method overwrite a block's code or an env's parent. A
        // class redefined with fields must not give them to such a subclass
        // either.
        if !fields.is_empty() {
            let fieldless = std::iter::once(c)
                .chain(self.loaded_subclasses(c))
                .find_map(|k| {
                    self.fieldless_reason(k)
                        .map(|why| (self.classes[k as usize].name.clone(), why))
                });
            if let Some((who, why)) = fieldless {
                let (l, col) = src.line_col(def.name.span.start);
                let whose = if *who == *name {
                    String::new()
                } else {
                    format!(" (they would be inherited by {who})")
                };
                return Err(VmError::Compile(format!(
                    "{}:{l}:{col}: error: {name} cannot have instance variables ({}){whose}: {why}",
                    src.name,
                    fields.join(", "),
                )));
            }
        }
        self.classes[c as usize].fields = fields;
        self.classes[c as usize].source = Rc::from(src.name.as_str());
        self.classes[c as usize].category = Rc::from(category);
        self.classes[m as usize].source = Rc::from(src.name.as_str());
        self.classes[m as usize].category = Rc::from(category);
        let old_class_fields = self.classes[m as usize].fields.len();
        self.classes[m as usize].fields = mfields;
        // The class object must have room for its class-side fields.
        let need = self.classes[m as usize].fields.len();
        if need != old_class_fields || heap.size(self.classes[c as usize].object) != need {
            let old = self.classes[c as usize].object;
            let new = heap.alloc_pointers(m, need)?;
            let keep = heap.size(old).min(need);
            for i in 0..keep {
                let v = heap.slot(old, i);
                heap.set_slot(new, i, v);
            }
            heap.set_identity_hash(new, c);
            self.classes[c as usize].object = new;
            self.set_global(name, new);
        }
        // Methods.
        self.classes[c as usize].methods.clear();
        self.classes[c as usize].method_order.clear();
        self.classes[m as usize].methods.clear();
        self.classes[m as usize].method_order.clear();
        for md in &def.instance_methods {
            self.compile_def_and_install(heap, c, md, src)?;
        }
        for md in &def.class_methods {
            self.compile_def_and_install(heap, m, md, src)?;
        }
        self.classes[c as usize].loaded = true;
        self.classes[m as usize].loaded = true;
        self.classes.bump_epoch();
        Ok(c)
    }

    /// Why instances of class `k` can have no named field, or `None`: they
    /// hold raw bytes or words, or their slots are the VM's own data
    /// ([`cls::holds_vm_slots`]).
    fn fieldless_reason(&self, k: u32) -> Option<&'static str> {
        if cls::holds_vm_slots(k) {
            return Some(
                "its instances are made by the VM, which reads their slots as its own data (a block's code, receiver and outer environment; an environment's parent and variables)",
            );
        }
        match self.classes[k as usize].shape {
            Shape::Bytes => Some("its instances hold raw bytes"),
            Shape::Words => Some("its instances hold raw words"),
            _ => None,
        }
    }

    /// The loaded classes that inherit from `c` (not `c` itself).
    fn loaded_subclasses(&self, c: u32) -> impl Iterator<Item = u32> + '_ {
        (0..self.classes.len() as u32)
            .filter(move |&k| k != c && self.classes[k as usize].loaded && self.is_kind_of(k, c))
    }

    fn compile_def_and_install(
        &mut self,
        heap: &mut Heap,
        c: u32,
        md: &lupa_syntax::MethodDef,
        src: &Rc<SourceFile>,
    ) -> Result<u32, VmError> {
        let fields: Vec<String> = self.classes[c as usize]
            .fields
            .iter()
            .map(|f| f.to_string())
            .collect();
        let cc = lupa_compiler::compile_method(md, &fields, src)
            .map_err(|d| VmError::Compile(d.render(src)))?;
        if cfg!(debug_assertions)
            && let Err(e) = lupa_compiler::verify(&cc)
        {
            return Err(VmError::Compile(format!(
                "{}: internal error: the compiled code of {} fails verification: {e}",
                src.name, md.selector
            )));
        }
        if let Some(problem) = super::methods::pragma_problem(&cc) {
            let (l, col) = src.line_col(md.span.start);
            return Err(VmError::Compile(format!(
                "{}:{l}:{col}: error: {}>>{} {problem}",
                src.name,
                self.class_name(c),
                md.selector
            )));
        }
        let id = self.install_code(heap, c, &cc, &src.name)?;
        self.methods[id as usize]
            .source_range
            .set((md.span.start, md.span.end));
        self.sources
            .entry(Rc::from(src.name.as_str()))
            .or_insert_with(|| src.clone());
        Ok(id)
    }

    /// Compile method source in class `c` and install it; answers the method id.
    pub fn compile_and_install(
        &mut self,
        heap: &mut Heap,
        c: u32,
        source: &str,
        file: &str,
    ) -> Result<u32, VmError> {
        let src = Rc::new(SourceFile::new(file, source));
        let md = lupa_syntax::parse_method(source).map_err(|d| VmError::Compile(d.render(&src)))?;
        self.compile_def_and_install(heap, c, &md, &src)
    }

    /// The source file registered under a name (for diagnostics).
    pub fn source(&self, name: &str) -> Option<Rc<SourceFile>> {
        self.sources.get(name).cloned()
    }
}

/// Lupa's bundled class `name`: its path and its parsed definition with
/// its text.
fn bundled_class(name: &str) -> Option<(&'static str, (ClassDef, &'static str))> {
    let file = format!("{name}.som");
    let (path, text) = BUNDLED
        .iter()
        .find(|(p, _)| p.rsplit('/').next() == Some(file.as_str()))?;
    let def = lupa_syntax::parse_class(text).ok()?;
    Some((path, (def, text)))
}

/// The package of the classes of a class-path directory: its last path
/// component (of the absolute path, so `.` is named after the directory it is).
pub fn package_of(dir: &std::path::Path) -> String {
    let named = |d: &std::path::Path| d.file_name().map(|s| s.to_string_lossy().into_owned());
    named(dir)
        .or_else(|| dir.canonicalize().ok().as_deref().and_then(named))
        .unwrap_or_default()
}

/// How reports and [`PackageInfo::location`] name the bundled library's
/// folders: the prefix of its source files' names.
pub const BUNDLED_PREFIX: &str = "<lupa>/";

/// A package: the directory classes are loaded from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageInfo {
    /// Its name: the directory's last component (`Richards`).
    pub name: String,
    /// Where it is: `<lupa>/` and the bundled folder (`<lupa>/Benchmarks/Richards`),
    /// or the class-path directory as given (`./Richards`).
    pub location: String,
    /// Is it a folder of the bundled library?
    pub bundled: bool,
}

/// The package location of a source file: its directory (empty for a file
/// without one, e.g. `<synthetic>`).
pub(crate) fn location_of_source(source: &str) -> String {
    match source.rsplit_once('/') {
        Some((dir, _)) => dir.to_string(),
        None => String::new(),
    }
}

/// The package location of a class-path directory: the directory of the
/// files found in it, as their names are built (`dir/Name.som`).
fn dir_location(dir: &std::path::Path) -> String {
    location_of_source(&dir.join("X.som").display().to_string())
}

/// The class names of the `.som` files directly in `dir` (none if it cannot be read).
fn class_files_in(dir: &std::path::Path) -> Vec<String> {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    rd.flatten()
        .filter_map(|e| {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "som") {
                p.file_stem().map(|s| s.to_string_lossy().into_owned())
            } else {
                None
            }
        })
        .collect()
}
