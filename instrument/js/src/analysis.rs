//! Capture analysis: which bindings are shared between activations.
//!
//! A binding is *captured* when some function other than the one that declares it refers to
//! it; only those (and globals) are logged, because a local that no closure sees can only be
//! touched by its own activation, which cannot race with itself.
//!
//! Captured bindings that nothing writes after their declaration are *quiet* and not logged
//! either (they are left out of [`Captures::captured`]):
//! - a binding with no write at all (a parameter, a `catch` parameter, `var x;`, an import)
//!   has no write to race with, and a race needs one;
//! - a binding whose only write is its own declaration (`var/let/const x = e`, a function or
//!   class declaration) in a function whose activation is one event action (not `async`, not
//!   a generator, not a module with top-level `await`): every closure that reads it runs in
//!   that action or in a later one that got the closure from it, so the declaration is
//!   ordered before the read, or the race is on whatever carried the closure (a global, a
//!   property), which is logged and covers it.
//!
//! Anything that could write a binding behind the syntax (a direct `eval`, `with`) turns the
//! whole program back to logging every captured binding.

use rustc_hash::{FxHashMap as HashMap, FxHashSet as HashSet};

use swc_core::common::{Span, Spanned, SyntaxContext};
use swc_core::ecma::ast::*;
use swc_core::ecma::visit::{Visit, VisitWith};

/// Identity of a function-like node (function, arrow, constructor, class field initializer,
/// static block): its span plus a tag, stable across the analysis and the rewriting pass.
pub(crate) type FnKey = (u32, u32, u8);

/// The top level of the program (script, module or handler body).
pub(crate) const TOP: FnKey = (0, 0, 0);

pub(crate) fn fn_key(span: Span, tag: u8) -> FnKey {
    (span.lo.0, span.hi.0, tag)
}

pub(crate) const TAG_FN: u8 = 1;
pub(crate) const TAG_ARROW: u8 = 2;
pub(crate) const TAG_CTOR: u8 = 3;
pub(crate) const TAG_FIELD: u8 = 4;
pub(crate) const TAG_STATIC: u8 = 5;
/// Block-like scopes that own captured `let`/`const`/`class` bindings get their own scope
/// instance per activation: a block statement, a `for (let…;…;…)` loop (one per iteration),
/// a `for (let … in/of …)` loop (one per iteration), a `catch` clause, the case block of a
/// `switch`.
pub(crate) const TAG_BLOCK: u8 = 8;
pub(crate) const TAG_FOR: u8 = 9;
pub(crate) const TAG_FOR_IN: u8 = 10;
pub(crate) const TAG_CATCH: u8 = 11;
pub(crate) const TAG_SWITCH: u8 = 12;

/// True for the key of a block-like scope (its scope id is a block-scoped `const`/`let`).
pub(crate) fn is_block_key(k: FnKey) -> bool {
    k.2 >= TAG_BLOCK
}

/// Result of the analysis.
#[derive(Default)]
pub(crate) struct Captures {
    /// Captured binding → the scope that owns it: the function-like node that declares it, or
    /// for block-scoped declarations inside blocks and loop heads, that block.
    pub captured: HashMap<Id, FnKey>,
    /// Scopes that own at least one captured binding (they need a scope id).
    pub owners: HashSet<FnKey>,
    /// Names declared at the top level (for scripts: known globals).
    pub top_names: HashSet<swc_core::atoms::Atom>,
    /// Names of function and class expressions (bound only inside themselves; never logged).
    pub self_names: HashSet<Id>,
}

#[derive(Default)]
struct Analyzer {
    /// Context of unresolved (global) identifiers: never captured, not recorded.
    unresolved: SyntaxContext,
    stack: Vec<FnKey>,
    /// Block-like scopes open inside the current function (innermost last), with the depth
    /// of `stack` they belong to.
    blocks: Vec<(FnKey, usize)>,
    /// Binding → (declaring function, owning scope).
    decls: HashMap<Id, (FnKey, FnKey)>,
    refs: Vec<(Id, FnKey)>,
    self_names: HashSet<Id>,
    /// Bindings written somewhere other than by one declaration (assignments, updates, loop
    /// heads, `delete`, a second declaration, a function declaration inside a block).
    written: HashSet<Id>,
    /// Bindings declared with a write (an initialised declarator, `let`/`const`, a function
    /// or class declaration); a second such declaration counts in `written`.
    decl_written: HashSet<Id>,
    /// Functions whose activation can span several event actions (async, generators; the
    /// top level of a module with top-level `await`).
    suspending: HashSet<FnKey>,
    /// A direct `eval` or a `with` statement: names can be written behind the syntax.
    dynamic: bool,
    /// Depth of blocks nested inside the current function body (function declarations there
    /// follow Annex B and write a second, function-level binding).
    block_depth: Vec<usize>,
}

impl Analyzer {
    fn cur(&self) -> FnKey {
        self.stack.last().copied().unwrap_or(TOP)
    }

    /// Innermost open block-like scope of the current function, else the function.
    fn cur_owner(&self) -> FnKey {
        match self.blocks.last() {
            Some(&(k, depth)) if depth == self.stack.len() => k,
            _ => self.cur(),
        }
    }

    /// A function-scoped declaration (`var`, parameter, function declaration).
    fn decl(&mut self, id: &Ident) {
        let cur = self.cur();
        self.decls.entry(id.to_id()).or_insert((cur, cur));
    }

    /// A block-scoped declaration (`let`, `const`, `class`, catch parameter).
    fn decl_lexical(&mut self, id: &Ident) {
        let (cur, owner) = (self.cur(), self.cur_owner());
        self.decls.entry(id.to_id()).or_insert((cur, owner));
    }

    fn decl_pat(&mut self, pat: &Pat, lexical: bool) {
        let mut ids: Vec<Ident> = Vec::new();
        collect_pat_idents(pat, &mut ids);
        for id in &ids {
            if lexical {
                self.decl_lexical(id);
            } else {
                self.decl(id);
            }
        }
    }

    fn enter<F: FnOnce(&mut Self)>(&mut self, key: FnKey, f: F) {
        self.stack.push(key);
        self.block_depth.push(0);
        f(self);
        self.block_depth.pop();
        self.stack.pop();
    }

    fn enter_block<F: FnOnce(&mut Self)>(&mut self, key: FnKey, f: F) {
        self.blocks.push((key, self.stack.len()));
        self.nested(f);
        self.blocks.pop();
    }

    /// Runs `f` one block deeper inside the current function.
    fn nested<F: FnOnce(&mut Self)>(&mut self, f: F) {
        if let Some(d) = self.block_depth.last_mut() {
            *d += 1;
        }
        f(self);
        if let Some(d) = self.block_depth.last_mut() {
            *d -= 1;
        }
    }

    fn in_block(&self) -> bool {
        self.block_depth.last().is_some_and(|&d| d > 0)
    }

    fn write(&mut self, id: &Ident) {
        if id.ctxt != self.unresolved {
            self.written.insert(id.to_id());
        }
    }

    fn decl_write(&mut self, id: &Ident) {
        if !self.decl_written.insert(id.to_id()) {
            self.written.insert(id.to_id());
        }
    }

    /// Marks every identifier a pattern assigns. Unlike `collect_pat_idents` (declarations)
    /// it also takes parenthesised targets, which only assignment patterns hold
    /// (`[(x)] = a` holds `x` as an expression).
    fn write_pat(&mut self, pat: &Pat) {
        match pat {
            Pat::Ident(b) => self.write(&b.id),
            Pat::Array(a) => self.write_array(a),
            Pat::Object(o) => self.write_object(o),
            Pat::Rest(r) => self.write_pat(&r.arg),
            Pat::Assign(a) => self.write_pat(&a.left),
            Pat::Expr(e) => {
                if let Some(i) = named_ident(e) {
                    self.write(i);
                }
            }
            Pat::Invalid(_) => {}
        }
    }

    fn write_target_pat(&mut self, pat: &AssignTargetPat) {
        match pat {
            AssignTargetPat::Array(a) => self.write_array(a),
            AssignTargetPat::Object(o) => self.write_object(o),
            AssignTargetPat::Invalid(_) => {}
        }
    }

    fn write_array(&mut self, a: &ArrayPat) {
        for p in a.elems.iter().flatten() {
            self.write_pat(p);
        }
    }

    fn write_object(&mut self, o: &ObjectPat) {
        for p in &o.props {
            match p {
                ObjectPatProp::KeyValue(kv) => self.write_pat(&kv.value),
                ObjectPatProp::Assign(a) => self.write(&a.key.id),
                ObjectPatProp::Rest(r) => self.write_pat(&r.arg),
            }
        }
    }

    fn suspends(&mut self, is_async: bool, is_generator: bool) {
        if is_async || is_generator {
            let cur = self.cur();
            self.suspending.insert(cur);
        }
    }
}

/// The identifier an expression names, through parentheses (`(x)++`).
fn named_ident(e: &Expr) -> Option<&Ident> {
    match e {
        Expr::Ident(i) => Some(i),
        Expr::Paren(p) => named_ident(&p.expr),
        _ => None,
    }
}

/// Binding identifiers of a declaration pattern.
pub(crate) fn collect_pat_idents(pat: &Pat, out: &mut Vec<Ident>) {
    match pat {
        Pat::Ident(b) => out.push(b.id.clone()),
        Pat::Array(a) => {
            for p in a.elems.iter().flatten() {
                collect_pat_idents(p, out);
            }
        }
        Pat::Rest(r) => collect_pat_idents(&r.arg, out),
        Pat::Object(o) => {
            for p in &o.props {
                match p {
                    ObjectPatProp::KeyValue(kv) => collect_pat_idents(&kv.value, out),
                    ObjectPatProp::Assign(a) => out.push(a.key.id.clone()),
                    ObjectPatProp::Rest(r) => collect_pat_idents(&r.arg, out),
                }
            }
        }
        Pat::Assign(a) => collect_pat_idents(&a.left, out),
        Pat::Invalid(_) | Pat::Expr(_) => {}
    }
}

impl Visit for Analyzer {
    fn visit_ident(&mut self, id: &Ident) {
        if id.ctxt == self.unresolved {
            return;
        }
        let cur = self.cur();
        self.refs.push((id.to_id(), cur));
    }

    // Labels are not variables.
    fn visit_labeled_stmt(&mut self, n: &LabeledStmt) {
        n.body.visit_with(self);
    }
    fn visit_break_stmt(&mut self, _: &BreakStmt) {}
    fn visit_continue_stmt(&mut self, _: &ContinueStmt) {}

    fn visit_var_decl(&mut self, n: &VarDecl) {
        let lexical = n.kind != VarDeclKind::Var;
        for d in &n.decls {
            self.decl_pat(&d.name, lexical);
            // `let x;` initialises to undefined: a write like `let x = undefined`.
            if d.init.is_some() || lexical {
                let mut ids = Vec::new();
                collect_pat_idents(&d.name, &mut ids);
                for id in &ids {
                    self.decl_write(id);
                }
            }
            d.visit_children_with(self);
        }
    }

    fn visit_block_stmt(&mut self, n: &BlockStmt) {
        self.enter_block(fn_key(n.span, TAG_BLOCK), |a| n.stmts.visit_with(a));
    }

    fn visit_assign_expr(&mut self, n: &AssignExpr) {
        match &n.left {
            AssignTarget::Simple(SimpleAssignTarget::Ident(b)) => self.write(&b.id),
            AssignTarget::Simple(SimpleAssignTarget::Paren(p)) => {
                if let Some(i) = named_ident(&p.expr) {
                    self.write(i);
                }
            }
            AssignTarget::Pat(p) => self.write_target_pat(p),
            AssignTarget::Simple(_) => {}
        }
        n.visit_children_with(self);
    }

    fn visit_update_expr(&mut self, n: &UpdateExpr) {
        if let Some(i) = named_ident(&n.arg) {
            self.write(i);
        }
        n.visit_children_with(self);
    }

    fn visit_unary_expr(&mut self, n: &UnaryExpr) {
        if n.op == UnaryOp::Delete
            && let Some(i) = named_ident(&n.arg)
        {
            self.write(i);
        }
        n.visit_children_with(self);
    }

    fn visit_call_expr(&mut self, n: &CallExpr) {
        if let Callee::Expr(e) = &n.callee
            && matches!(&**e, Expr::Ident(i) if &*i.sym == "eval" && i.ctxt == self.unresolved)
        {
            self.dynamic = true;
        }
        n.visit_children_with(self);
    }

    fn visit_with_stmt(&mut self, n: &WithStmt) {
        self.dynamic = true;
        n.visit_children_with(self);
    }

    fn visit_await_expr(&mut self, n: &AwaitExpr) {
        // Top-level await (inside a function, `async` already marked it).
        self.suspends(true, false);
        n.visit_children_with(self);
    }

    fn visit_for_of_stmt(&mut self, n: &ForOfStmt) {
        if n.is_await {
            self.suspends(true, false);
        }
        self.for_in_of(n.span, &n.left, &n.right, &n.body);
    }

    fn visit_if_stmt(&mut self, n: &IfStmt) {
        // `if (c) function f() {}`: a function declaration in statement position.
        n.test.visit_with(self);
        self.nested(|a| {
            n.cons.visit_with(a);
            n.alt.visit_with(a);
        });
    }

    fn visit_for_stmt(&mut self, n: &ForStmt) {
        if matches!(&n.init, Some(VarDeclOrExpr::VarDecl(v)) if v.kind != VarDeclKind::Var) {
            self.enter_block(fn_key(n.span, TAG_FOR), |a| n.visit_children_with(a));
        } else {
            n.visit_children_with(self);
        }
    }

    fn visit_switch_stmt(&mut self, n: &SwitchStmt) {
        n.discriminant.visit_with(self);
        self.enter_block(fn_key(n.span, TAG_SWITCH), |a| n.cases.visit_with(a));
    }

    fn visit_for_in_stmt(&mut self, n: &ForInStmt) {
        self.for_in_of(n.span, &n.left, &n.right, &n.body);
    }

    fn visit_fn_decl(&mut self, n: &FnDecl) {
        self.decl(&n.ident);
        self.decl_write(&n.ident);
        if self.in_block() {
            self.write(&n.ident);
        }
        n.function.visit_with(self);
    }

    fn visit_class_decl(&mut self, n: &ClassDecl) {
        self.decl_lexical(&n.ident);
        self.decl_write(&n.ident);
        n.class.visit_with(self);
    }

    fn visit_fn_expr(&mut self, n: &FnExpr) {
        if let Some(id) = &n.ident {
            self.self_names.insert(id.to_id());
        }
        n.function.visit_with(self);
    }

    fn visit_class_expr(&mut self, n: &ClassExpr) {
        if let Some(id) = &n.ident {
            self.self_names.insert(id.to_id());
        }
        n.class.visit_with(self);
    }

    fn visit_catch_clause(&mut self, n: &CatchClause) {
        // The parameter and the body's own declarations share one scope instance.
        self.enter_block(fn_key(n.span, TAG_CATCH), |a| {
            if let Some(p) = &n.param {
                a.decl_pat(p, true);
                p.visit_with(a);
            }
            n.body.stmts.visit_with(a);
        });
    }

    fn visit_import_specifier(&mut self, n: &ImportSpecifier) {
        match n {
            ImportSpecifier::Named(s) => self.decl(&s.local),
            ImportSpecifier::Default(s) => self.decl(&s.local),
            ImportSpecifier::Namespace(s) => self.decl(&s.local),
        }
    }

    fn visit_function(&mut self, n: &Function) {
        self.enter(fn_key(n.span, TAG_FN), |a| {
            a.suspends(n.is_async, n.is_generator);
            for p in &n.params {
                a.decl_pat(&p.pat, false);
            }
            n.decorators.visit_with(a);
            n.params.visit_with(a);
            // The body's top-level declarations belong to the function, not to a block.
            if let Some(b) = &n.body {
                b.stmts.visit_with(a);
            }
        });
    }

    fn visit_arrow_expr(&mut self, n: &ArrowExpr) {
        self.enter(fn_key(n.span, TAG_ARROW), |a| {
            a.suspends(n.is_async, n.is_generator);
            for p in &n.params {
                a.decl_pat(p, false);
            }
            n.params.visit_with(a);
            match &*n.body {
                ArrowFunctionBody::FunctionBody(b) => b.stmts.visit_with(a),
                ArrowFunctionBody::Expr(e) => e.visit_with(a),
            }
        });
    }

    fn visit_constructor(&mut self, n: &Constructor) {
        n.key.visit_with(self);
        self.enter(fn_key(n.span, TAG_CTOR), |a| {
            for p in &n.params {
                if let ParamOrTsParamProp::Param(p) = p {
                    a.decl_pat(&p.pat, false);
                }
            }
            n.params.visit_with(a);
            if let Some(b) = &n.body {
                b.stmts.visit_with(a);
            }
        });
    }

    fn visit_class_prop(&mut self, n: &ClassProp) {
        n.key.visit_with(self);
        if let Some(v) = &n.value {
            self.enter(fn_key(n.span, TAG_FIELD), |a| v.visit_with(a));
        }
    }

    fn visit_private_prop(&mut self, n: &PrivateProp) {
        if let Some(v) = &n.value {
            self.enter(fn_key(n.span, TAG_FIELD), |a| v.visit_with(a));
        }
    }

    fn visit_static_block(&mut self, n: &StaticBlock) {
        self.enter(fn_key(n.span(), TAG_STATIC), |a| n.body.stmts.visit_with(a));
    }
}

impl Analyzer {
    /// `for (let/const … in/of …)`: the head bindings are fresh per iteration; their scope id
    /// is allocated at the start of the body, so the head itself (evaluated before) is not
    /// inside the block.
    fn for_in_of(&mut self, span: Span, left: &ForHead, right: &Expr, body: &Stmt) {
        // The head is written once per iteration.
        match left {
            ForHead::VarDecl(v) => v.decls.iter().for_each(|d| self.write_pat(&d.name)),
            ForHead::Pat(p) => self.write_pat(p),
            ForHead::UsingDecl(u) => u.decls.iter().for_each(|d| self.write_pat(&d.name)),
        }
        match left {
            ForHead::VarDecl(v) if v.kind != VarDeclKind::Var => {
                self.enter_block(fn_key(span, TAG_FOR_IN), |a| {
                    for d in &v.decls {
                        a.decl_pat(&d.name, true);
                    }
                });
                // Head defaults are evaluated outside the iteration's scope id.
                v.decls.iter().for_each(|d| d.name.visit_with(self));
                right.visit_with(self);
                self.enter_block(fn_key(span, TAG_FOR_IN), |a| body.visit_with(a));
            }
            _ => {
                left.visit_with(self);
                right.visit_with(self);
                self.nested(|a| body.visit_with(a));
            }
        }
    }
}

/// Runs the analysis over a resolved program.
pub(crate) fn analyze(program: &Program, unresolved: SyntaxContext) -> Captures {
    let mut a = Analyzer {
        unresolved,
        block_depth: vec![0],
        ..Default::default()
    };
    program.visit_with(&mut a);
    let mut out = Captures {
        self_names: a.self_names,
        ..Default::default()
    };
    for (id, (owner, _)) in &a.decls {
        if *owner == TOP {
            out.top_names.insert(id.0.clone());
        }
    }
    let quiet = |id: &Id, func: FnKey| {
        !a.dynamic
            && !a.written.contains(id)
            && (!a.decl_written.contains(id) || !a.suspending.contains(&func))
    };
    for (id, at) in a.refs {
        if let Some(&(func, owner)) = a.decls.get(&id)
            && func != at
            && !out.captured.contains_key(&id)
            && !quiet(&id, func)
        {
            out.captured.insert(id, owner);
            out.owners.insert(owner);
        }
    }
    out
}
