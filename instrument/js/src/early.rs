//! Early errors swc's parser does not report. A browser rejects a script with an early error
//! before running any of it; the pass must then serve it unchanged, or the instrumented text
//! (printed from a tree that no longer shows the error) could run where the original could
//! not. Checked here, on the parsed tree, before anything else runs:
//!
//! - declarations: a name declared twice by `let`/`const`/`class` (or by a function in a
//!   block, except sloppy blocks where only plain functions repeat it), a lexical name that is
//!   also a `var` of the same or a nested block, a parameter redeclared lexically in the body,
//!   a `catch` parameter redeclared in its block (or by `var` in a `for-of` head);
//! - parameters: duplicates where they are forbidden (strict code, arrows, methods, lists with
//!   defaults, patterns or rest), `yield`/`await` expressions in parameters of arrows,
//!   `'use strict'` in a function whose parameter list is not simple;
//! - strict mode (directive prologues, also when the directive follows the name and
//!   parameters it makes strict, classes, modules): `eval`/`arguments` bound or assigned,
//!   reserved words as identifiers, `delete` of an identifier, legacy octal numbers and
//!   escapes, labelled function declarations;
//! - `super.x` outside methods, `super()` outside constructors of derived classes;
//! - object literals: `{a = 1}` outside a pattern, a second `__proto__: v`;
//! - classes: a static member named `prototype`, a field named `constructor`;
//! - a labelled function as the body of `if`, a loop or `with`; `for (let.x of …)`,
//!   `for (async of …)`; an expression statement starting with `let [`;
//! - modules: a name exported twice, an exported local binding that is not declared;
//! - an async function, a generator, a class or a lexical declaration as the body of `if`, a
//!   loop, `with` (and a plain function as the body of a loop or `with`);
//! - grammar rules swc does not enforce, checked on the text at the nodes concerned
//!   (`syntax.rs`): both semicolons of a `for (;;)` head, escaped or line-broken member
//!   modifiers, escapes that are errors in untagged templates, `\u{…}` with a separator.
//!
//! The checks are conservative: code is only refused for an error the specification defines.
//! The same walk finds escaped keywords and legacy literals for `faithful.rs`.

use rustc_hash::{FxHashMap, FxHashSet};
use swc_core::atoms::Atom;
use swc_core::common::{BytePos, Span, Spanned};
use swc_core::ecma::ast::*;
use swc_core::ecma::visit::{Visit, VisitWith};

use crate::analysis::collect_pat_idents;
use crate::ast::unparen;
use crate::faithful;
use crate::syntax;

/// Why a program must be served unchanged.
pub(crate) enum Refusal {
    /// An early error: the browser rejects the program.
    Invalid(String),
    /// An escaped keyword the emitter would print as the keyword (`faithful.rs`).
    Unfaithful(String),
}

/// What the walk found besides errors.
pub(crate) struct Findings {
    /// A legacy octal-like number or string escape in sloppy code (`faithful::keep_raw`).
    pub legacy_literals: bool,
}

/// The first early error of `program` (`src` is its text, starting at `start`), or the first
/// escaped keyword-like identifier, as a message with the byte offset where it was found. One
/// walk over the tree does both, and notes legacy literals.
pub(crate) fn check(program: &Program, src: &str, start: BytePos) -> Result<Findings, Refusal> {
    let mut c = Checker {
        src,
        start: start.0,
        escapes: src.contains("\\u"),
        brace_escapes: src.contains("\\u{"),
        strict: false,
        module: false,
        scopes: Vec::new(),
        fns: Vec::new(),
        err: None,
        escaped: None,
        legacy: false,
        module_vars: FxHashSet::default(),
    };
    program.visit_with(&mut c);
    if let Some((msg, at)) = c.err {
        return Err(Refusal::Invalid(format!("{msg} at byte {at}")));
    }
    if let Some(at) = c.escaped {
        return Err(Refusal::Unfaithful(format!("escaped keyword at byte {at}")));
    }
    Ok(Findings {
        legacy_literals: c.legacy,
    })
}

/// What `super` may do in the innermost non-arrow function.
#[derive(Clone, Copy, PartialEq, Eq)]
enum FnCtx {
    /// Script or module top level, a plain function.
    Plain,
    /// A method, getter, setter, field initializer or static block: `super.x` is allowed.
    Method,
    /// A class constructor: `super.x`, and `super()` when the class has a heritage.
    Ctor { derived: bool },
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum ScopeKind {
    /// The top level of a function, script, module or static block: `var` stops here.
    Function,
    Block,
    /// A `catch` clause; its lexical names are the parameter's names.
    Catch {
        simple: bool,
    },
}

struct Scope {
    kind: ScopeKind,
    /// Lexically declared names.
    lexical: FxHashSet<Atom>,
}

struct Checker<'a> {
    src: &'a str,
    start: u32,
    /// The text holds `\u`: identifiers may be escaped.
    escapes: bool,
    /// The text holds `\u{`: names and strings may hold code point escapes.
    brace_escapes: bool,
    strict: bool,
    module: bool,
    scopes: Vec<Scope>,
    fns: Vec<FnCtx>,
    err: Option<(&'static str, u32)>,
    /// Offset of the first escaped keyword-like identifier.
    escaped: Option<u32>,
    /// A legacy octal-like literal was seen (in sloppy code; strict code refuses it).
    legacy: bool,
    /// `var` names of a module at any depth (exported bindings may name them).
    module_vars: FxHashSet<Atom>,
}

/// Reserved words of strict mode code that are identifiers in sloppy code.
fn strict_reserved(name: &str) -> bool {
    matches!(
        name,
        "implements"
            | "interface"
            | "let"
            | "package"
            | "private"
            | "protected"
            | "public"
            | "static"
            | "yield"
    )
}

/// Whether a directive prologue holds `'use strict'` (written exactly so, no escapes).
fn has_use_strict(stmts: &[Stmt]) -> bool {
    for s in stmts {
        let Stmt::Expr(ExprStmt { expr, .. }) = s else {
            return false;
        };
        let Expr::Lit(Lit::Str(s)) = &**expr else {
            return false;
        };
        if s.raw
            .as_deref()
            .is_some_and(|r| r == "'use strict'" || r == "\"use strict\"")
        {
            return true;
        }
    }
    false
}

/// The statement a chain of labels ends in.
fn unlabel(mut s: &Stmt) -> &Stmt {
    while let Stmt::Labeled(l) = s {
        s = &l.body;
    }
    s
}

/// `l: function f() {}` (through any number of labels).
fn is_labelled_function(s: &Stmt) -> bool {
    matches!(s, Stmt::Labeled(_)) && matches!(unlabel(s), Stmt::Decl(Decl::Fn(_)))
}

/// Whether the names hold a duplicate.
fn has_duplicate(names: &[Ident]) -> bool {
    if names.len() < 2 {
        return false;
    }
    let mut seen = FxHashSet::default();
    names.iter().any(|n| !seen.insert(n.sym.clone()))
}

/// A property key that is `__proto__` (not computed).
fn is_proto_key(k: &PropName) -> bool {
    match k {
        PropName::Ident(i) => &*i.sym == "__proto__",
        PropName::Str(s) => s.value.as_str() == Some("__proto__"),
        _ => false,
    }
}

/// A property key that names `name` (not computed).
fn key_is(k: &PropName, name: &str) -> bool {
    match k {
        PropName::Ident(i) => &*i.sym == name,
        PropName::Str(s) => s.value.as_str() == Some(name),
        _ => false,
    }
}

/// Finds `yield` and `await` expressions outside nested functions and classes.
#[derive(Default)]
struct FindYieldAwait {
    yield_: bool,
    await_: bool,
}

impl Visit for FindYieldAwait {
    fn visit_yield_expr(&mut self, n: &YieldExpr) {
        self.yield_ = true;
        n.visit_children_with(self);
    }
    fn visit_await_expr(&mut self, n: &AwaitExpr) {
        self.await_ = true;
        n.visit_children_with(self);
    }
    fn visit_function(&mut self, _: &Function) {}
    fn visit_arrow_expr(&mut self, _: &ArrowExpr) {}
    fn visit_class(&mut self, _: &Class) {}
}

/// One function-like node, as the checks need it.
struct FnShape<'a> {
    /// `None` for arrows (they see the `super` of their surroundings).
    ctx: Option<FnCtx>,
    /// The name of a function declaration or expression.
    name: Option<&'a Ident>,
    params: Vec<&'a Pat>,
    body: Option<&'a [Stmt]>,
    expr_body: Option<&'a Expr>,
    /// Arrows and methods: duplicate parameters are errors in sloppy code too.
    unique_params: bool,
    arrow: bool,
}

impl<'a> Checker<'a> {
    fn fail(&mut self, msg: &'static str, span: Span) {
        if self.err.is_none() {
            self.err = Some((msg, span.lo.0.saturating_sub(self.start)));
        }
    }

    fn text(&self, span: Span) -> &'a str {
        let lo = span.lo.0.saturating_sub(self.start) as usize;
        let hi = span.hi.0.saturating_sub(self.start) as usize;
        self.src.get(lo..hi).unwrap_or("")
    }

    /// Notes an identifier that spells a keyword-like word with escapes.
    fn escaped_word(&mut self, span: Span, name: &str) {
        if self.escapes
            && self.escaped.is_none()
            && faithful::keyword_like(name)
            && self.text(span).contains('\\')
        {
            self.escaped = Some(span.lo.0.saturating_sub(self.start));
        }
    }

    fn fn_ctx(&self) -> FnCtx {
        self.fns.last().copied().unwrap_or(FnCtx::Plain)
    }

    /// Lexically declared names of a statement list, checked for duplicates. `fn_top`: the
    /// top level of a function or script, where function declarations are `var`-like (they
    /// are returned separately); elsewhere (blocks, switch cases, modules) they are lexical.
    fn declare_list<'s>(
        &mut self,
        stmts: impl Iterator<Item = &'s Stmt>,
        fn_top: bool,
    ) -> (FxHashSet<Atom>, Vec<&'s Ident>) {
        let mut lexical: FxHashMap<Atom, bool> = FxHashMap::default();
        let mut top_fns = Vec::new();
        let mut ids = Vec::new();
        for s in stmts {
            match unlabel(s) {
                Stmt::Decl(Decl::Var(v)) if v.kind != VarDeclKind::Var => {
                    ids.clear();
                    for d in &v.decls {
                        collect_pat_idents(&d.name, &mut ids);
                    }
                    for id in &ids {
                        self.lexical(&mut lexical, id, false);
                    }
                }
                Stmt::Decl(Decl::Class(c)) => self.lexical(&mut lexical, &c.ident, false),
                Stmt::Decl(Decl::Fn(f)) if fn_top => top_fns.push(&f.ident),
                Stmt::Decl(Decl::Fn(f)) => {
                    let plain = !f.function.is_async && !f.function.is_generator;
                    self.lexical(&mut lexical, &f.ident, plain);
                }
                _ => {}
            }
        }
        for f in &top_fns {
            if lexical.contains_key(&f.sym) {
                self.fail("a function redeclares a lexical binding", f.span);
            }
        }
        (lexical.into_keys().collect(), top_fns)
    }

    /// Adds one lexical name; a second declaration is an error except between plain function
    /// declarations of a sloppy block (Annex B).
    fn lexical(&mut self, names: &mut FxHashMap<Atom, bool>, id: &Ident, plain_fn: bool) {
        if &*id.sym == "let" {
            self.fail("`let` cannot be a lexically bound name", id.span);
        }
        match names.get(&id.sym) {
            None => {
                names.insert(id.sym.clone(), plain_fn);
            }
            Some(&was_plain) => {
                let annex_b = was_plain && plain_fn && !self.strict && !self.module;
                if !annex_b {
                    self.fail("a lexical binding is declared twice", id.span);
                }
            }
        }
    }

    /// A `var` binding: an error when a lexical binding of the same name is in scope up to
    /// the enclosing function (`for_of`: declared by a `for (var … of …)` head, which may not
    /// redeclare even a simple `catch` parameter).
    fn declare_var(&mut self, id: &Ident, for_of: bool) {
        let mut clash = false;
        for s in self.scopes.iter().rev() {
            if s.lexical.contains(&id.sym) {
                clash |= match s.kind {
                    ScopeKind::Catch { simple } => !simple || for_of,
                    _ => true,
                };
            }
            if s.kind == ScopeKind::Function {
                break;
            }
        }
        if clash {
            self.fail("`var` redeclares a lexical binding", id.span);
        }
        if self.module
            && self
                .scopes
                .iter()
                .filter(|s| s.kind == ScopeKind::Function)
                .count()
                == 1
        {
            self.module_vars.insert(id.sym.clone());
        }
    }

    fn var_decl(&mut self, v: &VarDecl, for_of: bool) {
        if v.kind == VarDeclKind::Var {
            let mut ids = Vec::new();
            for d in &v.decls {
                collect_pat_idents(&d.name, &mut ids);
            }
            for id in &ids {
                self.declare_var(id, for_of);
            }
        }
        v.visit_children_with(self);
    }

    /// A name bound or assigned in strict code may not be `eval` or `arguments`.
    fn check_binding(&mut self, id: &Ident) {
        if self.strict && matches!(&*id.sym, "eval" | "arguments") {
            self.fail(
                "`eval` or `arguments` bound or assigned in strict mode",
                id.span,
            );
        }
    }

    /// Visits a statement list in a block scope of its own.
    fn block(&mut self, stmts: &[Stmt]) {
        let (lexical, _) = self.declare_list(stmts.iter(), false);
        self.scopes.push(Scope {
            kind: ScopeKind::Block,
            lexical,
        });
        stmts.visit_with(self);
        self.scopes.pop();
    }

    fn function(&mut self, f: FnShape<'_>) {
        let saved = self.strict;
        let use_strict = f.body.is_some_and(has_use_strict);
        let simple = f.params.iter().all(|p| matches!(p, Pat::Ident(_)));
        if use_strict && !simple {
            let span = f
                .body
                .and_then(|b| b.first())
                .map_or(Span::default(), |s| s.span());
            self.fail(
                "'use strict' in a function with a non-simple parameter list",
                span,
            );
        }
        self.strict = saved || use_strict;
        if let Some(n) = f.name {
            self.check_binding(n);
            if self.strict && strict_reserved(&n.sym) {
                self.fail("reserved word as a name in strict mode", n.span);
            }
        }
        let mut names = Vec::new();
        for p in &f.params {
            collect_pat_idents(p, &mut names);
        }
        if (self.strict || f.unique_params || !simple) && has_duplicate(&names) {
            let span = names.last().map_or(Span::default(), |n| n.span);
            self.fail("duplicate parameter name", span);
        }
        if f.arrow {
            let mut y = FindYieldAwait::default();
            for p in &f.params {
                p.visit_with(&mut y);
            }
            if y.yield_ || y.await_ {
                let span = f.params.first().map_or(Span::default(), |p| p.span());
                self.fail("`yield` or `await` in arrow parameters", span);
            }
        }
        let (lexical, _) = match f.body {
            Some(b) => self.declare_list(b.iter(), true),
            None => Default::default(),
        };
        if let Some(n) = names.iter().find(|n| lexical.contains(&n.sym)) {
            self.fail("a parameter is redeclared lexically", n.span);
        }
        self.scopes.push(Scope {
            kind: ScopeKind::Function,
            lexical,
        });
        if let Some(ctx) = f.ctx {
            self.fns.push(ctx);
        }
        for p in &f.params {
            p.visit_with(self);
        }
        if let Some(b) = f.body {
            b.visit_with(self);
        }
        if let Some(e) = f.expr_body {
            e.visit_with(self);
        }
        if f.ctx.is_some() {
            self.fns.pop();
        }
        self.scopes.pop();
        self.strict = saved;
    }

    /// A method, getter or setter: `super.x` allowed, duplicate parameters never.
    fn method(&mut self, function: &Function, ctx: FnCtx) {
        self.function_node(None, function, ctx, true);
    }

    /// A function declaration or expression.
    fn plain_function(&mut self, name: Option<&Ident>, function: &Function) {
        self.function_node(name, function, FnCtx::Plain, false);
    }

    fn function_node(&mut self, name: Option<&Ident>, f: &Function, ctx: FnCtx, unique: bool) {
        f.decorators.visit_with(self);
        self.function(FnShape {
            ctx: Some(ctx),
            name,
            params: f.params.iter().map(|p| &p.pat).collect(),
            body: f.body.as_ref().map(|b| &b.stmts[..]),
            expr_body: None,
            unique_params: unique,
            arrow: false,
        });
    }

    /// Checks the body of `if` (`if_body`), a loop or `with`: no declaration (`var` is a
    /// statement), except a plain function as the body of `if` in sloppy code (Annex B; swc
    /// reports that one itself).
    fn sub_statement(&mut self, body: &Stmt, if_body: bool) {
        if is_labelled_function(body) {
            self.fail(
                "a labelled function as the body of a statement",
                body.span(),
            );
        }
        let Stmt::Decl(d) = body else {
            return;
        };
        let allowed = match d {
            Decl::Fn(f) => {
                if_body
                    && !self.strict
                    && !self.module
                    && !f.function.is_async
                    && !f.function.is_generator
            }
            // A `var` statement is a statement, not a declaration.
            Decl::Var(v) => v.kind == VarDeclKind::Var,
            _ => false,
        };
        if !allowed {
            self.fail("a declaration as the body of a statement", body.span());
        }
    }

    /// Checks the modifiers written between the start of a member (`start`) and its key.
    fn modifiers(&mut self, start: BytePos, key: Span, is_async: bool) {
        let prefix = self.text(Span::new(start, key.lo));
        if let Some(msg) = syntax::modifier_error(prefix, is_async) {
            self.fail(msg, key);
        }
    }

    /// Checks the text of an identifier-like name for `\u{…}` escapes with separators.
    fn name_escapes(&mut self, span: Span) {
        if self.brace_escapes && syntax::bad_code_point_escape(self.text(span)) {
            self.fail("a `\\u{…}` escape that is not hex digits", span);
        }
    }

    /// A `for` head's `let`/`const` names, for the scope around the loop.
    fn head_names(&mut self, v: &VarDecl) -> FxHashSet<Atom> {
        let mut ids = Vec::new();
        for d in &v.decls {
            collect_pat_idents(&d.name, &mut ids);
        }
        let mut names = FxHashMap::default();
        for id in &ids {
            self.lexical(&mut names, id, false);
        }
        names.into_keys().collect()
    }

    fn exports(&mut self, m: &Module, top: &FxHashSet<Atom>) {
        let mut exported: FxHashSet<Atom> = FxHashSet::default();
        let mut export = |c: &mut Self, name: Atom, span: Span| {
            if !exported.insert(name) {
                c.fail("a name is exported twice", span);
            }
        };
        let export_name = |n: &ModuleExportName| -> Option<Atom> {
            match n {
                ModuleExportName::Ident(i) => Some(i.sym.clone()),
                ModuleExportName::Str(s) => s.value.as_str().map(Atom::from),
                #[allow(unreachable_patterns)]
                _ => None,
            }
        };
        for item in &m.body {
            let ModuleItem::ModuleDecl(d) = item else {
                continue;
            };
            match d {
                ModuleDecl::ExportDecl(e) => {
                    let mut ids = Vec::new();
                    match &e.decl {
                        Decl::Fn(f) => ids.push(f.ident.clone()),
                        Decl::Class(c) => ids.push(c.ident.clone()),
                        Decl::Var(v) => {
                            for d in &v.decls {
                                collect_pat_idents(&d.name, &mut ids);
                            }
                        }
                        _ => {}
                    }
                    for id in ids {
                        export(self, id.sym.clone(), id.span);
                    }
                }
                ModuleDecl::ExportDefaultDecl(e) => export(self, "default".into(), e.span),
                ModuleDecl::ExportDefaultExpr(e) => export(self, "default".into(), e.span),
                ModuleDecl::ExportNamed(n) => {
                    for s in &n.specifiers {
                        match s {
                            ExportSpecifier::Named(s) => {
                                let name = s.exported.as_ref().unwrap_or(&s.orig);
                                if let Some(a) = export_name(name) {
                                    export(self, a, s.span);
                                }
                                if n.src.is_none()
                                    && let ModuleExportName::Ident(i) = &s.orig
                                    && !top.contains(&i.sym)
                                    && !self.module_vars.contains(&i.sym)
                                {
                                    self.fail("an exported binding is not declared", i.span);
                                }
                            }
                            ExportSpecifier::Namespace(s) => {
                                if let Some(a) = export_name(&s.name) {
                                    export(self, a, s.span);
                                }
                            }
                            ExportSpecifier::Default(s) => {
                                export(self, s.exported.sym.clone(), s.exported.span)
                            }
                        }
                    }
                }
                _ => {}
            }
        }
    }
}

impl Visit for Checker<'_> {
    fn visit_script(&mut self, s: &Script) {
        self.strict = has_use_strict(&s.body);
        let (lexical, _) = self.declare_list(s.body.iter(), true);
        self.scopes.push(Scope {
            kind: ScopeKind::Function,
            lexical,
        });
        s.body.visit_with(self);
        self.scopes.pop();
    }

    fn visit_module(&mut self, m: &Module) {
        self.strict = true;
        self.module = true;
        let stmts = m.body.iter().filter_map(|i| match i {
            ModuleItem::Stmt(s) => Some(s),
            _ => None,
        });
        let (mut lexical, _) = self.declare_list(stmts, false);
        // Declarations exported in place, and imports, are lexical too.
        let mut names = lexical.iter().map(|a| (a.clone(), false)).collect();
        for item in &m.body {
            let ModuleItem::ModuleDecl(d) = item else {
                continue;
            };
            match d {
                ModuleDecl::Import(i) => {
                    for s in &i.specifiers {
                        let local = match s {
                            ImportSpecifier::Named(s) => &s.local,
                            ImportSpecifier::Default(s) => &s.local,
                            ImportSpecifier::Namespace(s) => &s.local,
                        };
                        self.lexical(&mut names, local, false);
                    }
                }
                ModuleDecl::ExportDecl(e) => match &e.decl {
                    Decl::Fn(f) => self.lexical(&mut names, &f.ident, false),
                    Decl::Class(c) => self.lexical(&mut names, &c.ident, false),
                    Decl::Var(v) if v.kind != VarDeclKind::Var => {
                        let mut ids = Vec::new();
                        for d in &v.decls {
                            collect_pat_idents(&d.name, &mut ids);
                        }
                        for id in &ids {
                            self.lexical(&mut names, id, false);
                        }
                    }
                    _ => {}
                },
                ModuleDecl::ExportDefaultDecl(e) => match &e.decl {
                    DefaultDecl::Fn(FnExpr {
                        ident: Some(id), ..
                    }) => self.lexical(&mut names, id, false),
                    DefaultDecl::Class(ClassExpr {
                        ident: Some(id), ..
                    }) => self.lexical(&mut names, id, false),
                    _ => {}
                },
                _ => {}
            }
        }
        lexical = names.into_keys().collect();
        self.scopes.push(Scope {
            kind: ScopeKind::Function,
            lexical,
        });
        m.body.visit_with(self);
        let top = self.scopes.pop().map(|s| s.lexical).unwrap_or_default();
        self.exports(m, &top);
    }

    fn visit_export_decl(&mut self, e: &ExportDecl) {
        // `export var x`: a var of the module's top level.
        match &e.decl {
            Decl::Var(v) => self.var_decl(v, false),
            Decl::Fn(f) => self.visit_fn_decl(f),
            other => other.visit_with(self),
        }
    }

    fn visit_module_export_name(&mut self, _: &ModuleExportName) {}

    fn visit_import_specifier(&mut self, s: &ImportSpecifier) {
        let local = match s {
            ImportSpecifier::Named(s) => &s.local,
            ImportSpecifier::Default(s) => &s.local,
            ImportSpecifier::Namespace(s) => &s.local,
        };
        self.check_binding(local);
        local.visit_with(self);
    }

    fn visit_block_stmt(&mut self, b: &BlockStmt) {
        self.block(&b.stmts);
    }

    fn visit_switch_stmt(&mut self, s: &SwitchStmt) {
        s.discriminant.visit_with(self);
        let (lexical, _) = self.declare_list(s.cases.iter().flat_map(|c| c.cons.iter()), false);
        self.scopes.push(Scope {
            kind: ScopeKind::Block,
            lexical,
        });
        s.cases.visit_with(self);
        self.scopes.pop();
    }

    fn visit_catch_clause(&mut self, c: &CatchClause) {
        let mut names = Vec::new();
        if let Some(p) = &c.param {
            collect_pat_idents(p, &mut names);
        }
        if has_duplicate(&names) {
            self.fail("duplicate name in a catch parameter", c.span);
        }
        let simple = matches!(c.param, Some(Pat::Ident(_)));
        self.scopes.push(Scope {
            kind: ScopeKind::Catch { simple },
            lexical: names.iter().map(|n| n.sym.clone()).collect(),
        });
        c.param.visit_with(self);
        let (lexical, _) = self.declare_list(c.body.stmts.iter(), false);
        if let Some(n) = names.iter().find(|n| lexical.contains(&n.sym)) {
            self.fail("a catch parameter is redeclared in its block", n.span);
        }
        self.scopes.push(Scope {
            kind: ScopeKind::Block,
            lexical,
        });
        c.body.stmts.visit_with(self);
        self.scopes.pop();
        self.scopes.pop();
    }

    fn visit_var_decl(&mut self, v: &VarDecl) {
        self.var_decl(v, false);
    }

    fn visit_for_stmt(&mut self, s: &ForStmt) {
        self.sub_statement(&s.body, false);
        self.for_semicolons(s);
        let lexical = match &s.init {
            Some(VarDeclOrExpr::VarDecl(v)) if v.kind != VarDeclKind::Var => self.head_names(v),
            _ => {
                s.visit_children_with(self);
                return;
            }
        };
        self.scopes.push(Scope {
            kind: ScopeKind::Block,
            lexical,
        });
        s.visit_children_with(self);
        self.scopes.pop();
    }

    fn visit_for_in_stmt(&mut self, s: &ForInStmt) {
        self.for_in_of(&s.left, &s.right, &s.body, false);
    }

    fn visit_for_of_stmt(&mut self, s: &ForOfStmt) {
        if let ForHead::Pat(p) = &s.left {
            // `for (let.x of …)` and `for (async of …)` are not for-of heads.
            let text = self.text(p.span());
            let starts = |w: &str| {
                text.strip_prefix(w).is_some_and(|rest| {
                    !rest
                        .chars()
                        .next()
                        .is_some_and(|c| c.is_alphanumeric() || c == '_' || c == '$')
                })
            };
            if starts("let")
                || (!s.is_await
                    && matches!(&**p, Pat::Ident(i) if &*i.id.sym == "async")
                    && starts("async"))
            {
                self.fail(
                    "a for-of head may not start with `let` or `async`",
                    p.span(),
                );
            }
        }
        self.for_in_of(&s.left, &s.right, &s.body, true);
    }

    fn visit_expr_stmt(&mut self, s: &ExprStmt) {
        // An expression statement may not start with `let [` (a newline between them
        // included): in a statement position where a declaration is not allowed, swc reads
        // `let⏎[a] = b` as an assignment to `let[a]`.
        let text = self.text(s.span);
        if let Some(rest) = text.strip_prefix("let")
            && rest.trim_start().starts_with('[')
        {
            self.fail("an expression statement starting with `let [`", s.span);
        }
        s.visit_children_with(self);
    }

    fn visit_while_stmt(&mut self, s: &WhileStmt) {
        self.sub_statement(&s.body, false);
        s.visit_children_with(self);
    }

    fn visit_do_while_stmt(&mut self, s: &DoWhileStmt) {
        self.sub_statement(&s.body, false);
        s.visit_children_with(self);
    }

    fn visit_if_stmt(&mut self, s: &IfStmt) {
        self.sub_statement(&s.cons, true);
        if let Some(alt) = &s.alt {
            self.sub_statement(alt, true);
        }
        s.visit_children_with(self);
    }

    fn visit_with_stmt(&mut self, s: &WithStmt) {
        self.sub_statement(&s.body, false);
        s.visit_children_with(self);
    }

    fn visit_labeled_stmt(&mut self, s: &LabeledStmt) {
        if let Stmt::Decl(Decl::Fn(f)) = unlabel(&s.body) {
            if self.strict {
                self.fail("a labelled function in strict mode", s.span);
            } else if f.function.is_async || f.function.is_generator {
                self.fail("a labelled async function or generator", s.span);
            }
        }
        s.visit_children_with(self);
    }

    fn visit_fn_decl(&mut self, f: &FnDecl) {
        self.plain_function(Some(&f.ident), &f.function);
    }

    fn visit_fn_expr(&mut self, f: &FnExpr) {
        self.plain_function(f.ident.as_ref(), &f.function);
    }

    fn visit_arrow_expr(&mut self, a: &ArrowExpr) {
        let (body, expr_body) = match &*a.body {
            ArrowFunctionBody::FunctionBody(b) => (Some(&b.stmts[..]), None),
            ArrowFunctionBody::Expr(e) => (None, Some(&**e)),
        };
        self.function(FnShape {
            ctx: None,
            name: None,
            params: a.params.iter().collect(),
            body,
            expr_body,
            unique_params: true,
            arrow: true,
        });
    }

    fn visit_prop(&mut self, p: &Prop) {
        match p {
            Prop::Method(m) => {
                // The function's span starts where the property does (at `async` or `*`).
                self.modifiers(m.function.span.lo, m.key.span(), m.function.is_async);
                m.key.visit_with(self);
                self.method(&m.function, FnCtx::Method);
            }
            Prop::Getter(g) => {
                self.modifiers(g.span.lo, g.key.span(), false);
                g.key.visit_with(self);
                self.method(&g.function, FnCtx::Method);
            }
            Prop::Setter(s) => {
                self.modifiers(s.span.lo, s.key.span(), false);
                s.key.visit_with(self);
                self.method(&s.function, FnCtx::Method);
            }
            Prop::Assign(a) => self.fail("`{a = b}` outside a destructuring pattern", a.span),
            other => other.visit_children_with(self),
        }
    }

    fn visit_object_lit(&mut self, o: &ObjectLit) {
        let protos = o
            .props
            .iter()
            .filter(|p| matches!(p, PropOrSpread::Prop(p) if matches!(&**p, Prop::KeyValue(kv) if is_proto_key(&kv.key))))
            .count();
        if protos > 1 {
            self.fail("`__proto__` defined twice in an object literal", o.span);
        }
        o.visit_children_with(self);
    }

    fn visit_class(&mut self, c: &Class) {
        let saved = self.strict;
        self.strict = true;
        c.decorators.visit_with(self);
        c.super_class.visit_with(self);
        let derived = c.super_class.is_some();
        for m in &c.body {
            match m {
                ClassMember::Constructor(k) => {
                    k.key.visit_with(self);
                    self.function(FnShape {
                        ctx: Some(FnCtx::Ctor { derived }),
                        name: None,
                        params: k
                            .params
                            .iter()
                            .filter_map(|p| match p {
                                ParamOrTsParamProp::Param(p) => Some(&p.pat),
                                _ => None,
                            })
                            .collect(),
                        body: k.body.as_ref().map(|b| &b.stmts[..]),
                        expr_body: None,
                        unique_params: true,
                        arrow: false,
                    });
                }
                ClassMember::Method(k) => {
                    if k.is_static && key_is(&k.key, "prototype") {
                        self.fail("a static class member named `prototype`", k.span);
                    }
                    self.modifiers(k.span.lo, k.key.span(), k.function.is_async);
                    k.key.visit_with(self);
                    self.method(&k.function, FnCtx::Method);
                }
                ClassMember::PrivateMethod(k) => {
                    self.modifiers(k.span.lo, k.key.span, k.function.is_async);
                    k.key.visit_with(self);
                    self.method(&k.function, FnCtx::Method);
                }
                ClassMember::ClassProp(p) => {
                    if key_is(&p.key, "constructor") || (p.is_static && key_is(&p.key, "prototype"))
                    {
                        self.fail("a class field named `constructor` or `prototype`", p.span);
                    }
                    self.modifiers(p.span.lo, p.key.span(), false);
                    p.decorators.visit_with(self);
                    p.key.visit_with(self);
                    self.fns.push(FnCtx::Method);
                    p.value.visit_with(self);
                    self.fns.pop();
                }
                ClassMember::PrivateProp(p) => {
                    self.modifiers(p.span.lo, p.key.span, false);
                    p.decorators.visit_with(self);
                    p.key.visit_with(self);
                    self.fns.push(FnCtx::Method);
                    p.value.visit_with(self);
                    self.fns.pop();
                }
                ClassMember::StaticBlock(b) => {
                    self.modifiers(b.span.lo, b.body.span, false);
                    self.function(FnShape {
                        ctx: Some(FnCtx::Method),
                        name: None,
                        params: Vec::new(),
                        body: Some(&b.body.stmts[..]),
                        expr_body: None,
                        unique_params: true,
                        arrow: false,
                    });
                }
                other => other.visit_with(self),
            }
        }
        self.strict = saved;
    }

    fn visit_class_decl(&mut self, c: &ClassDecl) {
        let saved = self.strict;
        self.strict = true;
        self.check_binding(&c.ident);
        c.ident.visit_with(self);
        self.strict = saved;
        c.class.visit_with(self);
    }

    fn visit_class_expr(&mut self, c: &ClassExpr) {
        if let Some(id) = &c.ident {
            let saved = self.strict;
            self.strict = true;
            self.check_binding(id);
            id.visit_with(self);
            self.strict = saved;
        }
        c.class.visit_with(self);
    }

    fn visit_super_prop_expr(&mut self, s: &SuperPropExpr) {
        if self.fn_ctx() == FnCtx::Plain {
            self.fail("`super.x` outside a method", s.span);
        }
        s.visit_children_with(self);
    }

    fn visit_call_expr(&mut self, c: &CallExpr) {
        if matches!(c.callee, Callee::Super(_)) && self.fn_ctx() != (FnCtx::Ctor { derived: true })
        {
            self.fail(
                "`super()` outside the constructor of a derived class",
                c.span,
            );
        }
        c.visit_children_with(self);
    }

    fn visit_binding_ident(&mut self, b: &BindingIdent) {
        self.check_binding(&b.id);
        b.id.visit_with(self);
    }

    fn visit_simple_assign_target(&mut self, t: &SimpleAssignTarget) {
        if let SimpleAssignTarget::Paren(p) = t
            && let Expr::Ident(i) = unparen(&p.expr)
        {
            self.check_binding(i);
        }
        t.visit_children_with(self);
    }

    fn visit_pat(&mut self, p: &Pat) {
        if let Pat::Expr(e) = p
            && let Expr::Ident(i) = unparen(e)
        {
            self.check_binding(i);
        }
        p.visit_children_with(self);
    }

    fn visit_update_expr(&mut self, u: &UpdateExpr) {
        if let Expr::Ident(i) = unparen(&u.arg) {
            self.check_binding(i);
        }
        u.visit_children_with(self);
    }

    fn visit_unary_expr(&mut self, u: &UnaryExpr) {
        if self.strict && u.op == UnaryOp::Delete && matches!(unparen(&u.arg), Expr::Ident(_)) {
            self.fail("`delete` of an identifier in strict mode", u.span);
        }
        u.visit_children_with(self);
    }

    fn visit_ident(&mut self, i: &Ident) {
        if self.strict && strict_reserved(&i.sym) {
            self.fail("reserved word as an identifier in strict mode", i.span);
        }
        self.escaped_word(i.span, &i.sym);
        self.name_escapes(i.span);
    }

    fn visit_ident_name(&mut self, i: &IdentName) {
        self.escaped_word(i.span, &i.sym);
        self.name_escapes(i.span);
    }

    fn visit_private_name(&mut self, n: &PrivateName) {
        self.name_escapes(n.span);
    }

    fn visit_tagged_tpl(&mut self, t: &TaggedTpl) {
        // A tagged template may hold any escape (its cooked value is then undefined).
        t.tag.visit_with(self);
        t.tpl.exprs.visit_with(self);
    }

    fn visit_tpl(&mut self, t: &Tpl) {
        for q in &t.quasis {
            if syntax::bad_template_escape(&q.raw) {
                self.fail("an escape that untagged templates do not allow", q.span);
            }
        }
        t.exprs.visit_with(self);
    }

    fn visit_meta_prop_expr(&mut self, m: &MetaPropExpr) {
        if self.escapes && self.escaped.is_none() && self.text(m.span).contains('\\') {
            self.escaped = Some(m.span.lo.0.saturating_sub(self.start));
        }
    }

    fn visit_str(&mut self, s: &Str) {
        if self.brace_escapes && s.raw.as_deref().is_some_and(syntax::bad_code_point_escape) {
            self.fail("a `\\u{…}` escape that is not hex digits", s.span);
        }
        if s.raw.as_deref().is_some_and(faithful::legacy_string) {
            if self.strict {
                self.fail("legacy octal escape in strict mode", s.span);
            }
            self.legacy = true;
        }
    }

    fn visit_number(&mut self, n: &Number) {
        if n.raw.as_deref().is_some_and(faithful::legacy_number) {
            if self.strict {
                self.fail("legacy octal number in strict mode", n.span);
            }
            self.legacy = true;
        }
    }
}

impl Checker<'_> {
    /// Both semicolons of a `for (init; test; update)` head must be written: swc inserts the
    /// second one before `)` after a line break, which no engine does.
    fn for_semicolons(&mut self, s: &ForStmt) {
        let lo = |span: Span| span.lo.0.saturating_sub(self.start) as usize;
        let hi = |span: Span| span.hi.0.saturating_sub(self.start) as usize;
        let first = match &s.init {
            Some(init) => Some(hi(init.span())),
            None => syntax::after_for_paren(self.src, lo(s.span)),
        };
        let ok = first.is_some_and(|at| {
            syntax::semicolon_at(self.src, at) && {
                // Just after the first semicolon, or after the test.
                let second = match &s.test {
                    Some(t) => hi(t.span()),
                    None => syntax::skip_trivia(self.src, at).map_or(at, |(i, _)| i + 1),
                };
                syntax::semicolon_at(self.src, second)
            }
        });
        if !ok {
            self.fail("a `for (;;)` head without both semicolons", s.span);
        }
    }

    fn for_in_of(&mut self, left: &ForHead, right: &Expr, body: &Stmt, for_of: bool) {
        self.sub_statement(body, false);
        match left {
            ForHead::VarDecl(v) if v.kind != VarDeclKind::Var => {
                let lexical = self.head_names(v);
                self.scopes.push(Scope {
                    kind: ScopeKind::Block,
                    lexical,
                });
                v.visit_with(self);
                right.visit_with(self);
                body.visit_with(self);
                self.scopes.pop();
            }
            ForHead::VarDecl(v) => {
                self.var_decl(v, for_of);
                right.visit_with(self);
                body.visit_with(self);
            }
            other => {
                other.visit_with(self);
                right.visit_with(self);
                body.visit_with(self);
            }
        }
    }
}
