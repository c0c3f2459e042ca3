//! Which modules of a crate use which: the graph behind the house rule that no files import
//! each other in a circle (two files that need each other share one concern and should be
//! split differently).
//!
//! The module tree is found the way the compiler finds it: from the crate root, through every
//! `mod x;` declaration (inline modules are part of their file). Each file is parsed with `syn`,
//! and every path it names is resolved to the file that defines the module it starts in:
//! `use` trees (grouped, renamed, globbed, `pub use` re-exports), paths in expressions, types,
//! patterns, macro and attribute arguments, starting with `crate::`, `self::`, `super::`
//! (relative to the inline module they are written in) or the name of a child module. Test code
//! (items under `#[cfg(test)]`) is left out: tests may reach anywhere. Comments, doc links and
//! strings are not code and are not read.
//!
//! A path is resolved as written, not through re-exports: the crate root (or a `mod.rs`) that
//! re-exports a module and is used by it is in a circle with it. Code inside a crate names the
//! module that defines a thing; the facade is for other crates.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::path::{Path, PathBuf};

use proc_macro2::{TokenStream, TokenTree};
use syn::visit::Visit;

/// The module graph of one crate target (a library or a binary).
#[derive(Debug, Default)]
pub struct ModuleGraph {
    /// Module path (`""` for the crate root, `sweep::window`) → the file defining it.
    modules: BTreeMap<String, PathBuf>,
    /// Module → module it uses → the paths that make the edge (as written, for messages).
    uses: BTreeMap<String, BTreeMap<String, BTreeSet<String>>>,
}

/// Modules that use each other around a circle: one strongly connected component of the graph.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Circle {
    /// Every module of the component, sorted (`""` is the crate root).
    pub modules: Vec<String>,
    /// One shortest circle through the component, first module repeated at the end.
    pub example: Vec<String>,
    /// Each edge inside the component: user, used module and the paths that make it.
    pub edges: Vec<(String, String, Vec<String>)>,
}

/// A module's name in messages: its path, or `crate` for the root.
pub fn display_name(module: &str) -> &str {
    if module.is_empty() { "crate" } else { module }
}

impl fmt::Display for Circle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let names: Vec<&str> = self.modules.iter().map(|m| display_name(m)).collect();
        let example: Vec<&str> = self.example.iter().map(|m| display_name(m)).collect();
        writeln!(f, "{{{}}}, e.g. {}", names.join(", "), example.join(" -> "))?;
        for (from, to, paths) in &self.edges {
            writeln!(
                f,
                "    {} -> {}: {}",
                display_name(from),
                display_name(to),
                paths.join(", ")
            )?;
        }
        Ok(())
    }
}

impl ModuleGraph {
    /// The graphs of the crate at `crate_dir`: one per target root that exists
    /// (`src/lib.rs`, `src/main.rs`), named `lib` and `main`.
    pub fn of_crate(crate_dir: &Path) -> Result<Vec<(&'static str, ModuleGraph)>, String> {
        let mut out = Vec::new();
        for (name, file) in [("lib", "src/lib.rs"), ("main", "src/main.rs")] {
            let root = crate_dir.join(file);
            if root.is_file() {
                out.push((name, ModuleGraph::read(&root)?));
            }
        }
        if out.is_empty() {
            return Err(format!(
                "{} has neither src/lib.rs nor src/main.rs",
                crate_dir.display()
            ));
        }
        Ok(out)
    }

    /// The graph of the crate whose root file is `root`.
    pub fn read(root: &Path) -> Result<ModuleGraph, String> {
        let mut files = BTreeMap::new();
        discover(root, String::new(), &mut files)?;
        let modules: BTreeMap<String, PathBuf> = files
            .iter()
            .map(|(m, (path, _))| (m.clone(), path.clone()))
            .collect();
        let mut graph = ModuleGraph {
            modules,
            uses: BTreeMap::new(),
        };
        for (module, (_, file)) in &files {
            for (written, target) in references(file, module, &graph.modules) {
                if target != *module {
                    graph
                        .uses
                        .entry(module.clone())
                        .or_default()
                        .entry(target)
                        .or_default()
                        .insert(written);
                }
            }
        }
        Ok(graph)
    }

    /// Every module and the file defining it.
    pub fn modules(&self) -> impl Iterator<Item = (&str, &Path)> {
        self.modules.iter().map(|(m, p)| (m.as_str(), p.as_path()))
    }

    /// The modules `module` uses (never itself).
    pub fn uses(&self, module: &str) -> impl Iterator<Item = &str> {
        self.uses
            .get(module)
            .into_iter()
            .flat_map(|m| m.keys().map(String::as_str))
    }

    /// The paths by which `from` uses `to`, as written.
    pub fn paths(&self, from: &str, to: &str) -> impl Iterator<Item = &str> {
        self.uses
            .get(from)
            .and_then(|m| m.get(to))
            .into_iter()
            .flat_map(|s| s.iter().map(String::as_str))
    }

    /// Every circle: each group of modules that use each other, directly or around a loop.
    pub fn circles(&self) -> Vec<Circle> {
        let mut out: Vec<Circle> = strongly_connected(self)
            .into_iter()
            .filter(|c| c.len() > 1)
            .map(|component| {
                let set: BTreeSet<&str> = component.iter().copied().collect();
                let mut edges = Vec::new();
                for from in &set {
                    for to in self.uses(from).filter(|t| set.contains(t)) {
                        edges.push((
                            from.to_string(),
                            to.to_string(),
                            self.paths(from, to).map(str::to_string).collect(),
                        ));
                    }
                }
                Circle {
                    modules: set.iter().map(|s| s.to_string()).collect(),
                    example: self.shortest_circle(&set),
                    edges,
                }
            })
            .collect();
        out.sort_by(|a, b| a.modules.cmp(&b.modules));
        out
    }

    /// A shortest circle inside `set` (a strongly connected component of two or more).
    fn shortest_circle(&self, set: &BTreeSet<&str>) -> Vec<String> {
        let mut best: Option<Vec<String>> = None;
        for start in set {
            // Breadth-first from `start` back to itself, inside the component.
            let mut prev: BTreeMap<&str, &str> = BTreeMap::new();
            let mut queue = std::collections::VecDeque::from([*start]);
            let mut found = None;
            while let Some(n) = queue.pop_front() {
                for m in self.uses(n).filter(|m| set.contains(m)) {
                    if m == *start {
                        found = Some(n);
                        break;
                    }
                    if !prev.contains_key(m) {
                        prev.insert(m, n);
                        queue.push_back(m);
                    }
                }
                if found.is_some() {
                    break;
                }
            }
            let Some(mut n) = found else { continue };
            // Walked back from the last module to `start`, which `prev` never holds as a key.
            let mut path = vec![n.to_string()];
            while let Some(p) = prev.get(n) {
                path.push(p.to_string());
                n = p;
            }
            path.reverse();
            path.push(start.to_string());
            if best.as_ref().is_none_or(|b| path.len() < b.len()) {
                best = Some(path);
            }
        }
        best.unwrap_or_default()
    }
}

/// Tarjan's strongly connected components, each sorted.
fn strongly_connected(g: &ModuleGraph) -> Vec<Vec<&str>> {
    struct State<'a> {
        index: BTreeMap<&'a str, usize>,
        low: BTreeMap<&'a str, usize>,
        on_stack: BTreeSet<&'a str>,
        stack: Vec<&'a str>,
        out: Vec<Vec<&'a str>>,
    }
    fn visit<'a>(g: &'a ModuleGraph, n: &'a str, s: &mut State<'a>) {
        let i = s.index.len();
        s.index.insert(n, i);
        s.low.insert(n, i);
        s.stack.push(n);
        s.on_stack.insert(n);
        for m in g.uses(n) {
            if !s.index.contains_key(m) {
                visit(g, m, s);
                let low = s.low[n].min(s.low[m]);
                s.low.insert(n, low);
            } else if s.on_stack.contains(m) {
                let low = s.low[n].min(s.index[m]);
                s.low.insert(n, low);
            }
        }
        if s.low[n] == s.index[n] {
            let mut component = Vec::new();
            while let Some(m) = s.stack.pop() {
                s.on_stack.remove(m);
                component.push(m);
                if m == n {
                    break;
                }
            }
            component.sort_unstable();
            s.out.push(component);
        }
    }
    let mut s = State {
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        on_stack: BTreeSet::new(),
        stack: Vec::new(),
        out: Vec::new(),
    };
    for n in g.modules.keys() {
        if !s.index.contains_key(n.as_str()) {
            visit(g, n, &mut s);
        }
    }
    s.out
}

/// Parses `file` (module `module`) and, through its `mod x;` declarations, every file below it.
fn discover(
    file: &Path,
    module: String,
    out: &mut BTreeMap<String, (PathBuf, syn::File)>,
) -> Result<(), String> {
    let text = std::fs::read_to_string(file)
        .map_err(|e| format!("cannot read {}: {e}", file.display()))?;
    let parsed =
        syn::parse_file(&text).map_err(|e| format!("cannot parse {}: {e}", file.display()))?;
    // Where `mod x;` looks for x.rs or x/mod.rs: beside a root or mod.rs, else in a folder
    // named after the file.
    let stem = file.file_stem().and_then(|s| s.to_str()).unwrap_or("");
    let parent = file.parent().unwrap_or(Path::new("")).to_path_buf();
    let dir = if module.is_empty() || stem == "mod" {
        parent.clone()
    } else {
        parent.join(stem)
    };
    let mut children = Vec::new();
    declared_modules(&parsed.items, &module, &dir, &parent, true, &mut children)?;
    out.insert(module, (file.to_path_buf(), parsed));
    for (child, path) in children {
        discover(&path, child, out)?;
    }
    Ok(())
}

/// The file modules declared in `items` (of module `module`, whose children live in `dir`), with
/// their files; inline modules are searched for nested declarations.
fn declared_modules(
    items: &[syn::Item],
    module: &str,
    dir: &Path,
    file_dir: &Path,
    top: bool,
    out: &mut Vec<(String, PathBuf)>,
) -> Result<(), String> {
    for item in items {
        let syn::Item::Mod(m) = item else { continue };
        if is_test_only(&m.attrs) {
            continue;
        }
        let name = m.ident.to_string();
        let child = join(module, &name);
        match &m.content {
            Some((_, inner)) => {
                declared_modules(inner, &child, &dir.join(&name), file_dir, false, out)?;
            }
            None => {
                let path = match path_attribute(&m.attrs) {
                    Some(p) if top => file_dir.join(p),
                    Some(_) => {
                        return Err(format!(
                            "#[path] on `mod {name};` inside an inline module is not supported"
                        ));
                    }
                    None => {
                        let flat = dir.join(format!("{name}.rs"));
                        if flat.is_file() {
                            flat
                        } else {
                            dir.join(&name).join("mod.rs")
                        }
                    }
                };
                out.push((child, path));
            }
        }
    }
    Ok(())
}

fn path_attribute(attrs: &[syn::Attribute]) -> Option<String> {
    attrs.iter().find_map(|a| match &a.meta {
        syn::Meta::NameValue(nv) if nv.path.is_ident("path") => match &nv.value {
            syn::Expr::Lit(syn::ExprLit {
                lit: syn::Lit::Str(s),
                ..
            }) => Some(s.value()),
            _ => None,
        },
        _ => None,
    })
}

/// `#[cfg(test)]` or `#[cfg(all(test, …))]`: code that only exists in test builds.
fn is_test_only(attrs: &[syn::Attribute]) -> bool {
    fn test_only(meta: &syn::Meta) -> bool {
        match meta {
            syn::Meta::Path(p) => p.is_ident("test"),
            syn::Meta::List(l) if l.path.is_ident("all") => l
                .parse_args_with(
                    syn::punctuated::Punctuated::<syn::Meta, syn::Token![,]>::parse_terminated,
                )
                .is_ok_and(|args| args.iter().any(test_only)),
            _ => false,
        }
    }
    attrs.iter().any(|a| {
        a.path().is_ident("cfg") && a.parse_args::<syn::Meta>().is_ok_and(|m| test_only(&m))
    })
}

fn join(module: &str, name: &str) -> String {
    if module.is_empty() {
        name.to_string()
    } else {
        format!("{module}::{name}")
    }
}

/// Every path `file` (module `module`) names inside the crate, as written and as the module
/// defining what it names.
fn references(
    file: &syn::File,
    module: &str,
    modules: &BTreeMap<String, PathBuf>,
) -> Vec<(String, String)> {
    let mut v = Refs {
        scope: module
            .split("::")
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect(),
        modules,
        inline: BTreeSet::new(),
        out: Vec::new(),
    };
    v.visit_file(file);
    v.out
}

/// The visitor behind [`references`].
struct Refs<'a> {
    /// The module the code being read is in (inline modules included), as segments.
    scope: Vec<String>,
    modules: &'a BTreeMap<String, PathBuf>,
    /// Inline modules of this file, as full paths (children a relative path may start with).
    inline: BTreeSet<String>,
    out: Vec<(String, String)>,
}

impl Refs<'_> {
    /// Records `segments` (a path as written, `crate`/`self`/`super` included) when it names
    /// something inside the crate; a path may also start with a child module's name.
    fn record(&mut self, segments: &[String]) {
        let Some(first) = segments.first() else {
            return;
        };
        let mut absolute: Vec<String> = match first.as_str() {
            "crate" | "$crate" => Vec::new(),
            "self" => self.scope.clone(),
            "super" => {
                let mut base = self.scope.clone();
                let mut rest = segments;
                while rest.first().is_some_and(|s| s == "super") {
                    base.pop();
                    rest = &rest[1..];
                }
                base.extend(rest.iter().cloned());
                return self.push(segments, base);
            }
            name => {
                // A path starting with a child module's name; anything else is another crate,
                // a local item or an imported name (whose `use` was recorded where it was).
                let child = join(&self.scope.join("::"), name);
                if segments.len() < 2
                    || !(self.modules.contains_key(&child) || self.inline.contains(&child))
                {
                    return;
                }
                self.scope.clone()
            }
        };
        let skip = usize::from(matches!(first.as_str(), "crate" | "$crate" | "self"));
        absolute.extend(segments[skip..].iter().cloned());
        self.push(segments, absolute);
    }

    fn push(&mut self, written: &[String], absolute: Vec<String>) {
        // The longest prefix that is a file module owns the path.
        let owner = (0..=absolute.len())
            .rev()
            .map(|n| absolute[..n].join("::"))
            .find(|p| self.modules.contains_key(p));
        if let Some(owner) = owner {
            self.out.push((written.join("::"), owner));
        }
    }

    /// Records every path of a `use` tree (a glob uses the module it names).
    fn use_tree(&mut self, prefix: &mut Vec<String>, tree: &syn::UseTree) {
        match tree {
            syn::UseTree::Path(p) => {
                prefix.push(p.ident.to_string());
                self.use_tree(prefix, &p.tree);
                prefix.pop();
            }
            syn::UseTree::Name(n) => {
                let name = n.ident.to_string();
                self.use_leaf(prefix, name);
            }
            syn::UseTree::Rename(r) => {
                let name = r.ident.to_string();
                self.use_leaf(prefix, name);
            }
            syn::UseTree::Glob(_) => {
                // `use a::*` uses module a.
                let path = prefix.clone();
                self.record_use(&path);
            }
            syn::UseTree::Group(g) => {
                for t in &g.items {
                    self.use_tree(prefix, t);
                }
            }
        }
    }

    fn use_leaf(&mut self, prefix: &[String], name: String) {
        // `use a::{self}` names module a itself.
        let mut path = prefix.to_vec();
        if name != "self" || path.is_empty() {
            path.push(name);
        }
        self.record_use(&path);
    }

    /// A `use` path: unlike an expression, one segment (`use child;`) may name a child module.
    fn record_use(&mut self, path: &[String]) {
        if let [only] = path {
            let child = join(&self.scope.join("::"), only);
            if self.modules.contains_key(&child) {
                self.out.push((only.clone(), child));
            }
            return;
        }
        self.record(path);
    }

    /// Paths inside a macro's tokens: `ident :: ident …` runs, `$crate` included.
    fn tokens(&mut self, tokens: TokenStream) {
        // The run being read, and how many `:` followed its last segment.
        let mut run: Vec<String> = Vec::new();
        let mut colons = 0;
        let mut dollar = false;
        for tt in tokens {
            match tt {
                TokenTree::Ident(i) => {
                    let name = if dollar {
                        format!("${i}")
                    } else {
                        i.to_string()
                    };
                    if colons != 2 {
                        self.flush(&mut run);
                    }
                    run.push(name);
                    colons = 0;
                    dollar = false;
                }
                TokenTree::Punct(p) if p.as_char() == ':' && !run.is_empty() && colons < 2 => {
                    colons += 1;
                }
                other => {
                    self.flush(&mut run);
                    colons = 0;
                    dollar = matches!(&other, TokenTree::Punct(p) if p.as_char() == '$');
                    if let TokenTree::Group(g) = other {
                        self.tokens(g.stream());
                    }
                }
            }
        }
        self.flush(&mut run);
    }

    fn flush(&mut self, run: &mut Vec<String>) {
        if run.len() > 1 {
            self.record(run);
        }
        run.clear();
    }
}

impl<'ast> Visit<'ast> for Refs<'_> {
    fn visit_item(&mut self, item: &'ast syn::Item) {
        let attrs = match item {
            syn::Item::Const(i) => &i.attrs,
            syn::Item::Enum(i) => &i.attrs,
            syn::Item::ExternCrate(i) => &i.attrs,
            syn::Item::Fn(i) => &i.attrs,
            syn::Item::ForeignMod(i) => &i.attrs,
            syn::Item::Impl(i) => &i.attrs,
            syn::Item::Macro(i) => &i.attrs,
            syn::Item::Mod(i) => &i.attrs,
            syn::Item::Static(i) => &i.attrs,
            syn::Item::Struct(i) => &i.attrs,
            syn::Item::Trait(i) => &i.attrs,
            syn::Item::TraitAlias(i) => &i.attrs,
            syn::Item::Type(i) => &i.attrs,
            syn::Item::Union(i) => &i.attrs,
            syn::Item::Use(i) => &i.attrs,
            _ => return syn::visit::visit_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_item(self, item);
        }
    }

    fn visit_impl_item(&mut self, item: &'ast syn::ImplItem) {
        let attrs = match item {
            syn::ImplItem::Const(i) => &i.attrs,
            syn::ImplItem::Fn(i) => &i.attrs,
            syn::ImplItem::Type(i) => &i.attrs,
            syn::ImplItem::Macro(i) => &i.attrs,
            _ => return syn::visit::visit_impl_item(self, item),
        };
        if !is_test_only(attrs) {
            syn::visit::visit_impl_item(self, item);
        }
    }

    fn visit_item_mod(&mut self, m: &'ast syn::ItemMod) {
        // Only inline modules have code here; a file module is read from its own file.
        if let Some((_, items)) = &m.content {
            let name = m.ident.to_string();
            self.inline.insert(join(&self.scope.join("::"), &name));
            self.scope.push(name);
            for item in items {
                self.visit_item(item);
            }
            self.scope.pop();
        }
    }

    fn visit_item_use(&mut self, u: &'ast syn::ItemUse) {
        let mut prefix = Vec::new();
        if u.leading_colon.is_some() {
            // `use ::name`: always another crate.
            return;
        }
        self.use_tree(&mut prefix, &u.tree);
    }

    fn visit_path(&mut self, p: &'ast syn::Path) {
        if p.leading_colon.is_none() {
            let segments: Vec<String> = p.segments.iter().map(|s| s.ident.to_string()).collect();
            self.record(&segments);
        }
        syn::visit::visit_path(self, p);
    }

    fn visit_visibility(&mut self, _: &'ast syn::Visibility) {
        // `pub(in crate::a)` limits who sees an item; it uses nothing.
    }

    fn visit_attribute(&mut self, a: &'ast syn::Attribute) {
        // Doc links are not imports; a derive helper's argument (`value_parser = super::f`) is.
        if a.path().is_ident("doc") {
            return;
        }
        match &a.meta {
            syn::Meta::Path(p) => self.visit_path(p),
            syn::Meta::List(l) => {
                self.visit_path(&l.path);
                self.tokens(l.tokens.clone());
            }
            syn::Meta::NameValue(nv) => {
                self.visit_path(&nv.path);
                self.visit_expr(&nv.value);
            }
        }
    }

    fn visit_macro(&mut self, m: &'ast syn::Macro) {
        self.visit_path(&m.path);
        self.tokens(m.tokens.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn graph(files: &[(&str, &str)]) -> ModuleGraph {
        let dir = tempfile::tempdir().unwrap();
        for (path, text) in files {
            let p = dir.path().join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        ModuleGraph::read(&dir.path().join("lib.rs")).unwrap()
    }

    fn edges(g: &ModuleGraph) -> Vec<String> {
        let mut out = Vec::new();
        for (m, _) in g.modules() {
            for t in g.uses(m) {
                out.push(format!("{} -> {}", display_name(m), display_name(t)));
            }
        }
        out
    }

    #[test]
    fn grouped_imports_and_super_paths_are_resolved() {
        // The graph code itself: a two-file circle and a grouped import are found.
        let g = graph(&[
            ("lib.rs", "mod a; mod b; mod m;"),
            ("a.rs", "pub struct X;"),
            ("b.rs", "mod c; pub struct Z;"),
            ("b/c.rs", "pub struct Y;"),
            ("m/mod.rs", "mod n; mod d;"),
            ("m/d.rs", "pub fn g() {}"),
            (
                "m/n.rs",
                "use crate::{a::X, b::{c::Y, Z}};\nfn f() { super::d::g(); }",
            ),
        ]);
        let n: Vec<&str> = g.uses("m::n").collect();
        assert_eq!(n, ["a", "b", "b::c", "m::d"]);
        let paths: Vec<&str> = g.paths("m::n", "b").collect();
        assert_eq!(paths, ["crate::b::Z"]);
        assert!(g.circles().is_empty());
    }

    #[test]
    fn self_pub_use_expressions_and_nested_modules_are_seen() {
        let g = graph(&[
            (
                "lib.rs",
                // A re-export by child name, a macro argument, a `self::` path.
                "pub mod p; mod q; mod r; mod s; pub use p::P;\n\
                 fn f() { println!(\"{:?}\", q::Q); let _ = self::r::R; }",
            ),
            (
                "p.rs",
                // `crate::` inside an inline module, and `super::` there meaning this file.
                "pub struct P;\nmod inner { use super::P as _; pub fn f() -> crate::s::S { crate::s::S } }",
            ),
            (
                "q.rs",
                "#[derive(Debug)] pub struct Q;\n/// [`crate::r::R`]\nfn f() {}",
            ),
            (
                "r.rs",
                "pub struct R; // crate::p::P in a comment\nconst _: &str = \"crate::q::Q\";",
            ),
            (
                "s.rs",
                // Test-only code does not count; code after the test module does, and so
                // does a path in an attribute's arguments.
                "pub struct S;\n#[cfg(test)] mod tests { use crate::p::P; }\n\
                 #[cfg(not(test))] fn g() { let _ = crate::q::Q; }\n\
                 #[derive(Clone)] struct A { #[arg(value_parser = crate::r::parse)] x: u8 }",
            ),
        ]);
        assert_eq!(
            edges(&g),
            [
                "crate -> p",
                "crate -> q",
                "crate -> r",
                "p -> s",
                "s -> q",
                "s -> r"
            ]
        );
    }

    #[test]
    fn every_circle_is_named_with_its_paths() {
        let g = graph(&[
            ("lib.rs", "mod a; mod b; mod c; mod d; mod e;"),
            ("a.rs", "use crate::b::B; pub struct A;"),
            ("b.rs", "pub struct B; fn f() -> crate::c::C { todo!() }"),
            ("c.rs", "pub struct C(crate::a::A);"),
            (
                "d.rs",
                "pub use self::inner::D; mod inner { pub struct D(super::super::e::E); }",
            ),
            ("e.rs", "pub struct E; fn f(_: crate::d::D) {}"),
        ]);
        let circles = g.circles();
        assert_eq!(circles.len(), 2);
        assert_eq!(circles[0].modules, ["a", "b", "c"]);
        assert_eq!(circles[0].example, ["a", "b", "c", "a"]);
        assert_eq!(circles[1].modules, ["d", "e"]);
        let text = circles[1].to_string();
        assert!(text.contains("d -> e: super::super::e::E"), "{text}");
        assert!(text.contains("e -> d: crate::d::D"), "{text}");
    }
}
