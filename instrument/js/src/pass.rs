//! The record pass: rewrites accesses to shared state into calls of the runtime entry points
//! (`__shepherd.*`, see `runtime-js/access.js` and `docs/runtime-api.md`).
//!
//! Every rewrite keeps the native operation in user code (or, for plain reads, in a runtime
//! function whose `[[Get]]` is indistinguishable from the native one), evaluates each operand
//! once and in spec order, and never moves user code into a new function.

use swc_core::atoms::Atom;
use swc_core::common::{DUMMY_SP, Mark, Span, Spanned, SyntaxContext};
use swc_core::ecma::ast::*;
use swc_core::ecma::visit::{VisitMut, VisitMutWith};

use crate::analysis::{
    Captures, FnKey, TAG_ARROW, TAG_BLOCK, TAG_CATCH, TAG_CTOR, TAG_FIELD, TAG_FN, TAG_FOR,
    TAG_FOR_IN, TAG_STATIC, TAG_SWITCH, TOP, collect_pat_idents, fn_key, is_block_key,
};
use crate::ast::*;
use crate::contract::Kind;
use crate::positions::Positions;
use crate::with_alias::alias_runtime;

/// Key of the frame of an arrow the pass adds to get temporaries where there is no place for
/// declarations (parameter lists, class field initializers).
const TAG_TEMPS: u8 = 6;

/// Eight hex digits of FNV-1a over `parts`: names a source's top-level temporaries.
fn short_hash(parts: &[&str]) -> String {
    let mut h: u32 = 0x811c_9dc5;
    for b in parts.iter().flat_map(|p| p.bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    format!("{h:08x}")
}

/// Globals that are always declared, so reading them cannot throw.
fn known_global(name: &str) -> bool {
    matches!(
        name,
        "window"
            | "self"
            | "globalThis"
            | "document"
            | "navigator"
            | "location"
            | "history"
            | "console"
            | "Object"
            | "Array"
            | "Function"
            | "String"
            | "Number"
            | "Boolean"
            | "Symbol"
            | "BigInt"
            | "Math"
            | "JSON"
            | "Date"
            | "RegExp"
            | "Error"
            | "TypeError"
            | "RangeError"
            | "SyntaxError"
            | "ReferenceError"
            | "Promise"
            | "Map"
            | "Set"
            | "WeakMap"
            | "WeakSet"
            | "Reflect"
            | "Proxy"
            | "parseInt"
            | "parseFloat"
            | "isNaN"
            | "isFinite"
            | "encodeURIComponent"
            | "decodeURIComponent"
            | "encodeURI"
            | "decodeURI"
            | "setTimeout"
            | "clearTimeout"
            | "setInterval"
            | "clearInterval"
            | "eval"
            | "escape"
            | "unescape"
            | "ArrayBuffer"
            | "Uint8Array"
            | "Int32Array"
            | "Float64Array"
    )
}

/// Identifiers that are never logged: immutable globals, the implicit `arguments`, our own.
fn never_logged(name: &str) -> bool {
    matches!(name, "arguments" | "undefined" | "NaN" | "Infinity" | API)
        || name.starts_with(RESERVED)
        || name.starts_with(API_DOT)
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    /// Not shared: leave alone.
    Local,
    /// A global variable (by name); `known` when reading it cannot throw.
    Global { known: bool },
    /// A variable captured by a closure, owned by the given function-like node.
    Captured(FnKey),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum FrameKind {
    /// Top level of a classic script (or `javascript:` URL): declarations are globals, and no
    /// binding may be added (temporaries live on `__shepherd.$`).
    TopScript,
    /// Top level of a module or a handler body: a function-like scope.
    TopVar,
    /// A function, arrow or static block body: `var` temporaries.
    Function,
    /// A class field initializer: no place for declarations.
    Field,
}

struct Frame {
    key: FnKey,
    kind: FrameKind,
    /// Highest temporary index used + 1.
    temps: usize,
    /// True while the function's parameter list is being visited (its body scope, where the
    /// temporaries and the scope id live, is not visible there).
    in_params: bool,
    /// Saved expression depth of the enclosing frame.
    saved_depth: usize,
}

pub(crate) struct Pass<'a> {
    pub kind: Kind,
    pub unresolved: SyntaxContext,
    pub top_level: SyntaxContext,
    pub caps: &'a Captures,
    /// Distinguishes this source's top-level temporaries from other scripts' on `__shepherd.$`
    /// ([`short_hash`] of the source, computed on first use: most scripts never need it, and
    /// the hash is a serial chain of multiplications over every byte).
    tag: std::cell::OnceCell<String>,
    /// The source as given started with a byte order mark (part of the tag's input).
    bom: bool,
    frames: Vec<Frame>,
    /// Temporary nesting level: operands evaluated while a temporary is live use a higher one.
    depth: usize,
    /// Inside `with` (or a handler body): free identifiers are dynamically scoped.
    dynamic: usize,
    /// Interned temporary names by level (function temporaries, script-level temporaries).
    fn_temps: Vec<Atom>,
    script_temps: Vec<Atom>,
    /// Line index of the original source: the trailing position argument of access calls.
    pos: &'a Positions,
    /// The code has no URL of its own (inline script, handler, `javascript:` URL).
    inline: bool,
    /// Block-like scopes with their own scope id that enclose the current node.
    blocks: Vec<FnKey>,
    /// Private names declared by the enclosing classes (innermost last): name, is a method
    /// or accessor (immutable, never logged).
    privates: Vec<Vec<(Atom, bool)>>,
    /// Interned scope-id names by owner: every captured access names one, and formatting and
    /// interning it each time cost 8% of a job on jQuery.
    sid_names: std::cell::RefCell<rustc_hash::FxHashMap<FnKey, Atom>>,
    /// Quoted location names by name (`ast::quoted_name`), interned once per job.
    names: std::cell::RefCell<rustc_hash::FxHashMap<Atom, Atom>>,
}

impl<'a> Pass<'a> {
    pub(crate) fn new(
        kind: Kind,
        unresolved_mark: Mark,
        top_level_mark: Mark,
        caps: &'a Captures,
        pos: &'a Positions,
        inline: bool,
        bom: bool,
    ) -> Self {
        Pass {
            bom,
            pos,
            inline,
            blocks: Vec::new(),
            privates: Vec::new(),
            kind,
            unresolved: SyntaxContext::empty().apply_mark(unresolved_mark),
            top_level: SyntaxContext::empty().apply_mark(top_level_mark),
            caps,
            tag: std::cell::OnceCell::new(),
            frames: Vec::new(),
            depth: 0,
            dynamic: usize::from(kind == Kind::Handler),
            fn_temps: Vec::new(),
            script_temps: Vec::new(),
            sid_names: Default::default(),
            names: Default::default(),
        }
    }

    /// The scope-id name of `owner`, formatted and interned once per job.
    fn sid_name(&self, owner: FnKey, make: impl FnOnce() -> String) -> Atom {
        self.sid_names
            .borrow_mut()
            .entry(owner)
            .or_insert_with(|| Atom::from(make()))
            .clone()
    }

    /// The string literal of a location name (an identifier name), printed verbatim.
    fn name_lit(&self, name: &Atom) -> Expr {
        let quoted = self
            .names
            .borrow_mut()
            .entry(name.clone())
            .or_insert_with(|| quoted_name(name))
            .clone();
        Expr::Ident(Ident::new_no_ctxt(quoted, DUMMY_SP))
    }

    /// The tag of this source's top-level temporaries.
    fn tag(&self) -> &str {
        self.tag.get_or_init(|| {
            // Of the text as given, which swc's source file holds without a leading BOM.
            let bom = if self.bom { "\u{feff}" } else { "" };
            short_hash(&[bom, self.pos.source()])
        })
    }

    fn script_like(&self) -> bool {
        matches!(self.kind, Kind::Script | Kind::JsUrl)
    }

    // ---- frames -------------------------------------------------------------------------

    fn push_frame(&mut self, key: FnKey, kind: FrameKind) {
        let saved_depth = self.depth;
        self.depth = 0;
        self.frames.push(Frame {
            key,
            kind,
            temps: 0,
            in_params: false,
            saved_depth,
        });
    }

    fn pop_frame(&mut self) -> Frame {
        // Frames are pushed and popped in pairs by the visitor methods below.
        let f = self.frames.pop().unwrap_or(Frame {
            key: TOP,
            kind: FrameKind::Field,
            temps: 0,
            in_params: false,
            saved_depth: 0,
        });
        self.depth = f.saved_depth;
        f
    }

    fn frame(&self) -> Option<&Frame> {
        self.frames.last()
    }

    fn temps_ok(&self) -> bool {
        self.frame()
            .is_some_and(|f| f.kind != FrameKind::Field && !f.in_params)
    }

    /// The temporary at nesting level `level`, as an expression and as an assignment target.
    fn temp(&mut self, level: usize) -> Box<Expr> {
        let Some(f) = self.frames.last_mut() else {
            return Box::new(Expr::Ident(ident("undefined")));
        };
        f.temps = f.temps.max(level + 1);
        let top = f.kind == FrameKind::TopScript;
        if top {
            self.tag();
        }
        let tag = self.tag.get().map_or("", String::as_str);
        let names = if top {
            &mut self.script_temps
        } else {
            &mut self.fn_temps
        };
        while names.len() <= level {
            let i = names.len();
            names.push(Atom::from(if top {
                format!("_{tag}_{i}")
            } else {
                format!("{RESERVED}t{i}")
            }));
        }
        let name = names[level].clone();
        if top {
            Box::new(Expr::Member(MemberExpr {
                span: DUMMY_SP,
                obj: api_expr("$"),
                prop: MemberProp::Ident(IdentName::new(name, DUMMY_SP)),
            }))
        } else {
            Box::new(Expr::Ident(Ident::new_no_ctxt(name, DUMMY_SP)))
        }
    }

    fn temp_target(&mut self, level: usize) -> AssignTarget {
        match *self.temp(level) {
            Expr::Member(m) => AssignTarget::Simple(SimpleAssignTarget::Member(m)),
            Expr::Ident(i) => AssignTarget::Simple(SimpleAssignTarget::Ident(i.into())),
            other => AssignTarget::Simple(SimpleAssignTarget::Paren(ParenExpr {
                span: DUMMY_SP,
                expr: Box::new(other),
            })),
        }
    }

    /// `(tmp = e)`
    fn assign_temp(&mut self, level: usize, e: Box<Expr>) -> Expr {
        let left = self.temp_target(level);
        Expr::Assign(AssignExpr {
            span: DUMMY_SP,
            op: AssignOp::Assign,
            left,
            right: e,
        })
    }

    /// A call of access function `name` with the position of `span` appended (contract in
    /// `docs/runtime-api.md`: `p` is always the last argument).
    fn acall<A>(&self, span: Span, name: &'static str, args: A) -> Expr
    where
        A: IntoIterator<Item = Expr>,
        A::IntoIter: ExactSizeIterator,
    {
        let p = self.pos.encode(span).map(int_lit);
        api_call_then(span, name, args, p)
    }

    /// Expression yielding the scope id of `owner`, or `None` when it is not visible here.
    fn sid(&self, owner: FnKey) -> Option<Box<Expr>> {
        if is_block_key(owner) {
            return self.blocks.contains(&owner).then(|| {
                let name = self.sid_name(owner, || block_sid_name(owner));
                Box::new(Expr::Ident(Ident::new_no_ctxt(name, DUMMY_SP)))
            });
        }
        let f = self.frames.iter().rev().find(|f| f.key == owner)?;
        if f.in_params {
            return None;
        }
        Some(self.sid_expr(owner, f.kind))
    }

    fn sid_expr(&self, owner: FnKey, kind: FrameKind) -> Box<Expr> {
        if kind == FrameKind::TopScript {
            // A key no span has: the script-level name is not a function's.
            let name = self.sid_name((u32::MAX, u32::MAX, 0), || format!("_{}_s", self.tag()));
            Box::new(Expr::Member(MemberExpr {
                span: DUMMY_SP,
                obj: api_expr("$"),
                prop: MemberProp::Ident(IdentName::new(name, DUMMY_SP)),
            }))
        } else {
            let name = self.sid_name(owner, || {
                format!("{RESERVED}s{}_{}_{}", owner.0, owner.1, owner.2)
            });
            Box::new(Expr::Ident(Ident::new_no_ctxt(name, DUMMY_SP)))
        }
    }

    // ---- classification -----------------------------------------------------------------

    fn classify(&self, id: &Ident) -> Class {
        let name: &str = &id.sym;
        if never_logged(name) {
            return Class::Local;
        }
        let key = id.to_id();
        if self.caps.self_names.contains(&key) {
            return Class::Local;
        }
        if id.ctxt == self.unresolved {
            if self.kind == Kind::Handler && name == "event" {
                return Class::Local;
            }
            let known = self.caps.top_names.contains(&id.sym) || known_global(name);
            return Class::Global { known };
        }
        if self.script_like() && id.ctxt == self.top_level {
            return Class::Global { known: true };
        }
        match self.caps.captured.get(&key) {
            Some(owner) => Class::Captured(*owner),
            None => Class::Local,
        }
    }

    // ---- identifiers --------------------------------------------------------------------

    /// A read of identifier `id` as a value.
    fn read_ident(&self, id: Ident) -> Expr {
        let span = id.span;
        match self.classify(&id) {
            Class::Local => Expr::Ident(id),
            Class::Global { known } => {
                let name = id.sym.clone();
                let value = if known {
                    Expr::Ident(id)
                } else {
                    // Log the read before a possible ReferenceError: `u` logs (when the name is
                    // not a property of the global object) and returns 0.
                    bin(
                        BinaryOp::LogicalOr,
                        self.acall(span, "u", [self.name_lit(&name)]),
                        Expr::Ident(id),
                    )
                };
                let read = self.acall(span, "g", [self.name_lit(&name), value]);
                if &*name == "eval" {
                    // A value read of `eval` (indirect eval): the runtime swaps in a wrapper
                    // that instruments string arguments.
                    api_call(span, "ge", vec![read])
                } else {
                    read
                }
            }
            Class::Captured(owner) => match self.sid(owner) {
                Some(sid) => {
                    let name = id.sym.clone();
                    self.acall(span, "cr", [*sid, self.name_lit(&name), Expr::Ident(id)])
                }
                None => Expr::Ident(id),
            },
        }
    }

    /// Wraps `e` (an expression that wrote identifier `id`) in a write log.
    /// `rw`: the old value was read too (compound assignment, prefix update).
    fn log_ident_write(&self, id: &Ident, e: Expr, rw: bool, span: Span) -> Expr {
        match self.classify(id) {
            Class::Local => e,
            Class::Global { .. } => self.acall(
                span,
                if rw { "x" } else { "w" },
                [self.name_lit(&id.sym), e],
            ),
            Class::Captured(owner) => match self.sid(owner) {
                Some(sid) => self.acall(
                    span,
                    if rw { "cx" } else { "cw" },
                    [*sid, self.name_lit(&id.sym), e],
                ),
                None => e,
            },
        }
    }

    /// Statement logging the current value of `id` as a write (`void __shepherd.w("f", f)`),
    /// or `None` when `id` is not shared. `void` keeps completion values unchanged.
    fn write_stmt(&self, id: &Ident) -> Option<Stmt> {
        let e = self.log_ident_write(id, Expr::Ident(id.clone()), false, id.span);
        if matches!(e, Expr::Ident(_)) {
            return None;
        }
        Some(void_stmt(e))
    }

    // ---- members ------------------------------------------------------------------------

    /// Visits the object and computed key of a member expression at the current depth.
    fn visit_member_parts(&mut self, m: &mut MemberExpr) {
        self.visit_expr_keep(&mut m.obj);
        if let MemberProp::Computed(c) = &mut m.prop {
            c.expr.visit_mut_with(self);
        }
    }

    /// Visits an expression that is used as the base object of a receiver-keeping form
    /// (`o` in `o.m()`): parenthesised members keep their shape.
    fn visit_expr_keep(&mut self, e: &mut Box<Expr>) {
        e.visit_mut_with(self);
    }

    /// True when private name `#name` is a field of the innermost class declaring it (methods
    /// and accessors are immutable: calling or reading them never races).
    fn private_is_field(&self, name: &Atom) -> bool {
        for class in self.privates.iter().rev() {
            if let Some((_, method)) = class.iter().find(|(n, _)| n == name) {
                return !method;
            }
        }
        true
    }

    /// Key of a loggable member: a static name, or a computed expression. Private fields are
    /// logged under the key `"#name"` (location `T.objEntry(o, "#name")`).
    fn member_key(&self, m: &MemberExpr) -> Option<MemberKey> {
        if matches!(*m.obj, Expr::Ident(ref i) if &*i.sym == API) {
            return None;
        }
        if matches!(*m.obj, Expr::MetaProp(_)) {
            return None;
        }
        match &m.prop {
            MemberProp::Ident(n) => Some(MemberKey::Static(self.name_lit(&n.sym))),
            MemberProp::PrivateName(n) => self
                .private_is_field(&n.name)
                .then(|| MemberKey::Static(str_lit(&format!("#{}", n.name)))),
            MemberProp::Computed(c) => match &*c.expr {
                Expr::Lit(Lit::Str(_)) | Expr::Lit(Lit::Num(_)) => {
                    Some(MemberKey::Static((*c.expr).clone()))
                }
                _ => Some(MemberKey::Dynamic),
            },
        }
    }

    /// Rewrites a member read (children already visited): `__shepherd.r(o, k)`.
    fn read_member(&mut self, m: MemberExpr) -> Expr {
        let span = m.span;
        let Some(key) = self.member_key(&m) else {
            return Expr::Member(m);
        };
        let k = match key {
            MemberKey::Static(k) => k,
            MemberKey::Dynamic => match m.prop {
                MemberProp::Computed(c) => *c.expr,
                _ => return Expr::Member(m),
            },
        };
        self.acall(span, "r", [*m.obj, k])
    }

    /// A private field read `o.#x` (children not yet visited): the read stays in user code,
    /// `__shepherd.pr(t = o, "#x", t.#x)` (no temporary for `this`).
    fn read_private(&mut self, m: MemberExpr) -> Expr {
        let span = m.span;
        self.member_op(span, m, "pr", None, |m, _| Expr::Member(m), vec![])
    }

    /// Wraps the object of a callee member so the call keeps its receiver:
    /// `__shepherd.b(o, "m").m(…)`, `__shepherd.b(o, k)[__shepherd.K](…)`.
    fn receiver(&mut self, m: &mut MemberExpr, optional: bool) {
        let Some(key) = self.member_key(m) else {
            return;
        };
        let span = m.span;
        let f = if optional { "bo" } else { "b" };
        let obj = std::mem::replace(
            &mut m.obj,
            Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })),
        );
        match key {
            MemberKey::Static(k) => {
                *m.obj = self.acall(span, f, [*obj, k]);
            }
            MemberKey::Dynamic => {
                if optional {
                    // `o?.[k]()`: k must not be evaluated when o is nullish; leave unlogged.
                    m.obj = obj;
                    return;
                }
                let MemberProp::Computed(c) = &mut m.prop else {
                    m.obj = obj;
                    return;
                };
                let k = std::mem::replace(&mut c.expr, api_expr("K"));
                *m.obj = self.acall(span, f, [*obj, *k]);
            }
        }
    }

    /// Rewrites a write-like operation on a member (`o.p = v`, `o[k] += v`, `o.p++`,
    /// `delete o.p`). `build` receives the member with its object and key replaced by
    /// temporaries and returns the native operation; the result is
    /// `__shepherd.<f>(t = o, k, <native>, extra…)`; `this` needs no temporary. Where no
    /// temporaries can be declared (parameter lists, class field initializers) the operation
    /// is wrapped in an arrow whose parameters are the temporaries,
    /// `((t0, t1) => <op>)()`: an arrow keeps `this`, `arguments`, `super` and `new.target`,
    /// and neither place may contain `yield` or `await`.
    fn member_op(
        &mut self,
        span: Span,
        mut m: MemberExpr,
        f: &'static str,
        mut rest: Option<Box<Expr>>,
        build: impl FnOnce(MemberExpr, Option<Box<Expr>>) -> Expr,
        extra: Vec<Expr>,
    ) -> Expr {
        let key = self.member_key(&m);
        let this_obj = matches!(*m.obj, Expr::This(_));
        let needs_temps = !this_obj || matches!(key, Some(MemberKey::Dynamic));
        if needs_temps
            && !self.temps_ok()
            && key.is_some()
            && !matches!(*m.obj, Expr::OptChain(_))
            && self.in_temp_less_place()
            && !mentions_eval(&m, rest.as_deref())
        {
            return self.with_arrow_temps(span, |p| p.member_op(span, m, f, rest, build, extra));
        }
        if key.is_none() || (needs_temps && !self.temps_ok()) || matches!(*m.obj, Expr::OptChain(_))
        {
            self.visit_member_parts(&mut m);
            if let Some(r) = &mut rest {
                r.visit_mut_with(self);
            }
            return build(m, rest);
        }
        let d = self.depth;
        let (obj_arg, d1) = if this_obj {
            (Expr::This(ThisExpr { span: DUMMY_SP }), d)
        } else {
            // The object is evaluated before its temporary is assigned: same level.
            self.visit_expr_keep(&mut m.obj);
            let obj = std::mem::replace(&mut m.obj, self.temp(d));
            (self.assign_temp(d, obj), d + 1)
        };
        let key_arg = match key {
            Some(MemberKey::Static(k)) => {
                self.depth = d1;
                k
            }
            _ => {
                let MemberProp::Computed(c) = &mut m.prop else {
                    return build(m, rest);
                };
                self.depth = d1;
                c.expr.visit_mut_with(self);
                let kexpr = std::mem::replace(&mut c.expr, self.temp(d1));
                self.depth = d1 + 1;
                // The raw key: the native operation converts it as often as the engine does
                // (compound assignments convert twice in V8, per the current spec).
                self.assign_temp(d1, kexpr)
            }
        };
        if let Some(r) = &mut rest {
            r.visit_mut_with(self);
        }
        self.depth = d;
        let mut args = vec![obj_arg, key_arg, build(m, rest)];
        args.extend(extra);
        self.acall(span, f, args)
    }

    /// Inside a parameter list or a class field initializer (no declarations possible).
    fn in_temp_less_place(&self) -> bool {
        self.frame()
            .is_some_and(|f| f.kind == FrameKind::Field || f.in_params)
    }

    /// Runs `f` in a frame of its own and wraps its result in `((t0, …) => <result>)()`.
    fn with_arrow_temps(&mut self, span: Span, f: impl FnOnce(&mut Self) -> Expr) -> Expr {
        self.push_frame(fn_key(span, TAG_TEMPS), FrameKind::Function);
        let body = f(self);
        let frame = self.pop_frame();
        let params = (0..frame.temps)
            .map(|i| Pat::Ident(ident(&format!("{RESERVED}t{i}")).into()))
            .collect();
        let arrow = Expr::Arrow(ArrowExpr {
            span: DUMMY_SP,
            ctxt: SyntaxContext::empty(),
            params,
            body: Box::new(ArrowFunctionBody::Expr(Box::new(body))),
            is_async: false,
            is_generator: false,
            type_params: None,
            return_type: None,
        });
        Expr::Call(CallExpr {
            span: DUMMY_SP,
            ctxt: SyntaxContext::empty(),
            callee: Callee::Expr(Box::new(Expr::Paren(ParenExpr {
                span: DUMMY_SP,
                expr: Box::new(arrow),
            }))),
            args: vec![],
            type_args: None,
        })
    }

    // ---- expression forms ---------------------------------------------------------------

    fn rewrite_assign(&mut self, mut a: AssignExpr) -> Expr {
        let span = a.span;
        let rw = a.op != AssignOp::Assign;
        // `((o.p)) = v` is `o.p = v`. A grouped identifier keeps its parentheses: it is
        // written like a bare one, but `(f) = function () {}` leaves the function unnamed.
        if let AssignTarget::Simple(SimpleAssignTarget::Paren(p)) = &mut a.left {
            match unparen(&p.expr) {
                Expr::Ident(i) => {
                    let id = i.clone();
                    a.right.visit_mut_with(self);
                    return self.log_ident_write(&id, Expr::Assign(a), rw, span);
                }
                Expr::Member(_) | Expr::SuperProp(_) => {
                    let inner = unparen_owned(std::mem::replace(
                        &mut p.expr,
                        Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })),
                    ));
                    a.left = match *inner {
                        Expr::Member(m) => AssignTarget::Simple(SimpleAssignTarget::Member(m)),
                        Expr::SuperProp(s) => {
                            AssignTarget::Simple(SimpleAssignTarget::SuperProp(s))
                        }
                        other => AssignTarget::Simple(SimpleAssignTarget::Paren(ParenExpr {
                            span: DUMMY_SP,
                            expr: Box::new(other),
                        })),
                    };
                }
                _ => {}
            }
        }
        match a.left {
            AssignTarget::Simple(SimpleAssignTarget::Ident(ref b)) => {
                let id = b.id.clone();
                a.right.visit_mut_with(self);
                self.log_ident_write(&id, Expr::Assign(a), rw, span)
            }
            AssignTarget::Simple(SimpleAssignTarget::Member(m)) => {
                let op = a.op;
                let f = if rw { "X" } else { "W" };
                self.member_op(
                    span,
                    m,
                    f,
                    Some(a.right),
                    |m, right| {
                        Expr::Assign(AssignExpr {
                            span,
                            op,
                            left: AssignTarget::Simple(SimpleAssignTarget::Member(m)),
                            right: right
                                .unwrap_or_else(|| Box::new(Expr::Ident(ident("undefined")))),
                        })
                    },
                    vec![],
                )
            }
            AssignTarget::Simple(SimpleAssignTarget::SuperProp(ref mut sp)) => {
                // `super.x = v` sets the property on `this` (the receiver): logged there.
                let key = super_key(sp);
                self.visit_super_parts(sp);
                a.right.visit_mut_with(self);
                match key {
                    Some(k) => self.acall(
                        span,
                        if rw { "X" } else { "W" },
                        [this_expr(), k, Expr::Assign(a)],
                    ),
                    _ => Expr::Assign(a),
                }
            }
            AssignTarget::Pat(ref p)
                if !self.temps_ok()
                    && self.in_temp_less_place()
                    && pattern_needs_temps(p)
                    && !{
                        let mut f = FindEval(false);
                        swc_core::ecma::visit::VisitWith::visit_with(&a, &mut f);
                        f.0
                    } =>
            {
                // No declarations possible here: an arrow supplies the temporaries.
                self.with_arrow_temps(span, move |s| s.rewrite_assign(a))
            }
            AssignTarget::Pat(ref mut p) => {
                // The right side is evaluated before any target, so its temporaries are free
                // again when the targets take theirs (from the same level up).
                let d = self.depth;
                let mut tg = Targets::default();
                self.visit_assign_pat(p, &mut tg);
                self.depth = d;
                a.right.visit_mut_with(self);
                let mut logs: Vec<Expr> = tg
                    .ids
                    .iter()
                    .filter_map(|id| {
                        let e = self.log_ident_write(id, Expr::Ident(id.clone()), false, id.span);
                        (!matches!(e, Expr::Ident(_))).then_some(e)
                    })
                    .collect();
                logs.extend(tg.members);
                if logs.is_empty() {
                    return Expr::Assign(a);
                }
                let mut args = vec![Expr::Assign(a)];
                args.extend(logs);
                api_call(span, "f", args)
            }
            _ => {
                a.visit_mut_children_with(self);
                Expr::Assign(a)
            }
        }
    }

    /// Visits an assignment pattern: defaults and computed keys are reads; targets are not.
    fn visit_assign_pat(&mut self, p: &mut AssignTargetPat, ids: &mut Targets) {
        match p {
            AssignTargetPat::Array(a) => {
                for e in a.elems.iter_mut().flatten() {
                    self.visit_target_pat(e, ids);
                }
            }
            AssignTargetPat::Object(o) => {
                for prop in &mut o.props {
                    self.visit_target_obj_prop(prop, ids);
                }
            }
            AssignTargetPat::Invalid(_) => {}
        }
    }

    fn visit_target_obj_prop(&mut self, prop: &mut ObjectPatProp, ids: &mut Targets) {
        match prop {
            ObjectPatProp::KeyValue(kv) => {
                if let PropName::Computed(c) = &mut kv.key {
                    c.expr.visit_mut_with(self);
                }
                self.visit_target_pat(&mut kv.value, ids);
            }
            ObjectPatProp::Assign(a) => {
                ids.ids.push(a.key.id.clone());
                if let Some(v) = &mut a.value {
                    v.visit_mut_with(self);
                }
            }
            ObjectPatProp::Rest(r) => self.visit_target_pat(&mut r.arg, ids),
        }
    }

    fn visit_target_pat(&mut self, p: &mut Pat, ids: &mut Targets) {
        match p {
            Pat::Ident(b) => ids.ids.push(b.id.clone()),
            Pat::Array(a) => {
                for e in a.elems.iter_mut().flatten() {
                    self.visit_target_pat(e, ids);
                }
            }
            Pat::Object(o) => {
                for prop in &mut o.props {
                    self.visit_target_obj_prop(prop, ids);
                }
            }
            Pat::Rest(r) => self.visit_target_pat(&mut r.arg, ids),
            Pat::Assign(a) => {
                self.visit_target_pat(&mut a.left, ids);
                a.right.visit_mut_with(self);
            }
            Pat::Expr(e) => self.visit_target_expr(e, ids),
            Pat::Invalid(_) => {}
        }
    }

    /// An expression used as an assignment target inside a pattern or a for-in/of head: the
    /// engine writes it. Members get temporaries for their object and key,
    /// `[(t0 = o).a, (t1 = o)[t2 = k]] = e`, and a write log `__shepherd.V(t0, "a")` each
    /// (value unknown), evaluated after the assignment. Each target takes new temporary
    /// levels: they stay live until the logs run.
    fn visit_target_expr(&mut self, e: &mut Box<Expr>, tg: &mut Targets) {
        match &mut **e {
            Expr::Member(m) => self.target_member(m, tg),
            Expr::SuperProp(sp) => {
                if let Some(k) = super_key(sp) {
                    tg.members.push(self.acall(sp.span, "V", [this_expr(), k]));
                }
                self.visit_super_parts(sp);
            }
            Expr::Paren(p) => self.visit_target_expr(&mut p.expr, tg),
            // A grouped identifier target, `[(x)] = a`: written like `[x] = a`.
            Expr::Ident(i) => tg.ids.push(i.clone()),
            _ => e.visit_mut_with(self),
        }
    }

    fn target_member(&mut self, m: &mut MemberExpr, tg: &mut Targets) {
        let key = self.member_key(m);
        let this_obj = matches!(*m.obj, Expr::This(_));
        let needs_temps = !this_obj || matches!(key, Some(MemberKey::Dynamic));
        if key.is_none() || (needs_temps && !self.temps_ok()) {
            self.visit_member_parts(m);
            return;
        }
        let d = self.depth;
        let obj_arg = if this_obj {
            this_expr()
        } else {
            self.visit_expr_keep(&mut m.obj);
            let obj = std::mem::replace(&mut m.obj, self.temp(d));
            let assign = self.assign_temp(d, obj);
            *m.obj = Expr::Paren(ParenExpr {
                span: DUMMY_SP,
                expr: Box::new(assign),
            });
            self.depth = d + 1;
            *self.temp(d)
        };
        let key_arg = match key {
            Some(MemberKey::Static(k)) => k,
            _ => {
                let MemberProp::Computed(c) = &mut m.prop else {
                    return;
                };
                let level = self.depth;
                c.expr.visit_mut_with(self);
                let kexpr = std::mem::replace(&mut c.expr, self.temp(level));
                *c.expr = self.assign_temp(level, kexpr);
                self.depth = level + 1;
                *self.temp(level)
            }
        };
        tg.members.push(self.acall(m.span, "V", [obj_arg, key_arg]));
    }

    /// Visits the computed key of a `super[k]` (there is no object to visit).
    fn visit_super_parts(&mut self, sp: &mut SuperPropExpr) {
        if let SuperProp::Computed(c) = &mut sp.prop {
            c.expr.visit_mut_with(self);
        }
    }

    fn rewrite_update(&mut self, mut u: UpdateExpr) -> Expr {
        let span = u.span;
        // `((x))++` is `x++` (no name is given, so the grouping means nothing).
        if matches!(
            unparen(&u.arg),
            Expr::Ident(_) | Expr::Member(_) | Expr::SuperProp(_)
        ) {
            let arg = std::mem::replace(
                &mut u.arg,
                Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })),
            );
            u.arg = unparen_owned(arg);
        }
        let delta = if u.op == UpdateOp::PlusPlus {
            1.0
        } else {
            -1.0
        };
        match *u.arg {
            Expr::Ident(ref id) => {
                let id = id.clone();
                let prefix = u.prefix;
                let native = Expr::Update(u);
                if prefix {
                    return self.log_ident_write(&id, native, true, span);
                }
                match self.classify(&id) {
                    Class::Local => native,
                    Class::Global { .. } => {
                        self.acall(span, "y", [self.name_lit(&id.sym), native, num_lit(delta)])
                    }
                    Class::Captured(owner) => match self.sid(owner) {
                        Some(sid) => self.acall(
                            span,
                            "cy",
                            [*sid, self.name_lit(&id.sym), native, num_lit(delta)],
                        ),
                        None => native,
                    },
                }
            }
            Expr::Member(m) => {
                let (op, prefix) = (u.op, u.prefix);
                let build = |m: MemberExpr, _: Option<Box<Expr>>| {
                    Expr::Update(UpdateExpr {
                        span,
                        op,
                        prefix,
                        arg: Box::new(Expr::Member(m)),
                    })
                };
                if prefix {
                    self.member_op(span, m, "X", None, build, vec![])
                } else {
                    self.member_op(span, m, "Y", None, build, vec![num_lit(delta)])
                }
            }
            Expr::SuperProp(ref mut sp) => {
                let key = super_key(sp);
                self.visit_super_parts(sp);
                let prefix = u.prefix;
                match key {
                    Some(k) if prefix => self.acall(span, "X", [this_expr(), k, Expr::Update(u)]),
                    Some(k) => {
                        self.acall(span, "Y", [this_expr(), k, Expr::Update(u), num_lit(delta)])
                    }
                    None => Expr::Update(u),
                }
            }
            _ => {
                u.visit_mut_children_with(self);
                Expr::Update(u)
            }
        }
    }

    fn rewrite_unary(&mut self, mut u: UnaryExpr) -> Expr {
        let span = u.span;
        match u.op {
            UnaryOp::TypeOf => {
                // `typeof (x)` is `typeof x`: no ReferenceError either.
                if let Expr::Ident(id) = unparen(&u.arg) {
                    let id = id.clone();
                    return match self.classify(&id) {
                        Class::Local => Expr::Unary(u),
                        // Keep `typeof x` whole: no ReferenceError for undeclared globals.
                        Class::Global { .. } => {
                            self.acall(span, "gt", [self.name_lit(&id.sym), Expr::Unary(u)])
                        }
                        Class::Captured(_) => {
                            u.arg = Box::new(self.read_ident(id));
                            Expr::Unary(u)
                        }
                    };
                }
                u.visit_mut_children_with(self);
                Expr::Unary(u)
            }
            UnaryOp::Delete => {
                let arg = std::mem::replace(
                    &mut u.arg,
                    Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })),
                );
                let arg = if matches!(unparen(&arg), Expr::Member(_) | Expr::Ident(_)) {
                    unparen_owned(arg)
                } else {
                    arg
                };
                match *arg {
                    Expr::Ident(id) => {
                        let global = matches!(self.classify(&id), Class::Global { .. });
                        let name = id.sym.clone();
                        u.arg = Box::new(Expr::Ident(id));
                        if global {
                            self.acall(span, "d", [self.name_lit(&name), Expr::Unary(u)])
                        } else {
                            Expr::Unary(u)
                        }
                    }
                    Expr::Member(m) => self.member_op(
                        span,
                        m,
                        "D",
                        None,
                        |m, _| {
                            Expr::Unary(UnaryExpr {
                                span,
                                op: UnaryOp::Delete,
                                arg: Box::new(Expr::Member(m)),
                            })
                        },
                        vec![],
                    ),
                    Expr::SuperProp(mut sp) => {
                        // Always a ReferenceError; only the key is evaluated first.
                        self.visit_super_parts(&mut sp);
                        u.arg = Box::new(Expr::SuperProp(sp));
                        Expr::Unary(u)
                    }
                    other => {
                        let mut other = Box::new(other);
                        other.visit_mut_with(self);
                        u.arg = other;
                        Expr::Unary(u)
                    }
                }
            }
            _ => {
                u.visit_mut_children_with(self);
                Expr::Unary(u)
            }
        }
    }

    fn rewrite_call(&mut self, mut c: CallExpr) -> Expr {
        if is_api_call(&c) {
            // Already instrumented (e.g. `eval(f.toString())` of instrumented code).
            return Expr::Call(c);
        }
        match &mut c.callee {
            Callee::Expr(callee) => {
                strip_reference_parens(callee);
                match &mut **callee {
                    Expr::Ident(id) if &*id.sym == "eval" && id.ctxt == self.unresolved => {
                        // Direct eval stays direct: only its argument is rewritten.
                        for (i, a) in c.args.iter_mut().enumerate() {
                            a.expr.visit_mut_with(self);
                            if i == 0 && a.spread.is_none() {
                                let arg = std::mem::replace(
                                    &mut a.expr,
                                    Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })),
                                );
                                *a.expr = api_call(DUMMY_SP, "e", vec![*arg]);
                            }
                        }
                        return Expr::Call(c);
                    }
                    Expr::Ident(id) if self.dynamic > 0 => {
                        // Inside `with`/handlers `f()` may be a method call on the scope object,
                        // so the call itself stays native; the read of the name is still logged
                        // first (EventRacer Fig. 1: a handler calling a not-yet-defined `f`).
                        if matches!(self.classify(id), Class::Global { .. }) {
                            let name = id.sym.clone();
                            c.args.visit_mut_with(self);
                            return Expr::Paren(ParenExpr {
                                span: DUMMY_SP,
                                expr: Box::new(Expr::Seq(SeqExpr {
                                    span: DUMMY_SP,
                                    exprs: vec![
                                        Box::new(self.acall(id.span, "q", [self.name_lit(&name)])),
                                        Box::new(Expr::Call(c)),
                                    ],
                                })),
                            });
                        }
                    }
                    Expr::Member(m) => {
                        self.visit_member_parts(m);
                        if !matches!(*m.obj, Expr::OptChain(_)) {
                            self.receiver(m, false);
                        }
                    }
                    Expr::SuperProp(sp) => {
                        // `super.m(a)` stays native (its `this`); the read of the method is
                        // logged on `this` first: `(b(this, "m"), super.m(a))`, and
                        // `(b(this, k), super[K](a))` converts a computed key once.
                        let span = sp.span;
                        let log = match super_key(sp) {
                            Some(k) => Some(self.acall(span, "b", [this_expr(), k])),
                            None => match &mut sp.prop {
                                SuperProp::Computed(ck) => {
                                    ck.expr.visit_mut_with(self);
                                    let k = std::mem::replace(&mut ck.expr, api_expr("K"));
                                    Some(self.acall(span, "b", [this_expr(), *k]))
                                }
                                SuperProp::Ident(_) => None,
                            },
                        };
                        c.args.visit_mut_with(self);
                        let Some(log) = log else {
                            return Expr::Call(c);
                        };
                        return Expr::Paren(ParenExpr {
                            span: DUMMY_SP,
                            expr: Box::new(Expr::Seq(SeqExpr {
                                span: DUMMY_SP,
                                exprs: vec![Box::new(log), Box::new(Expr::Call(c))],
                            })),
                        });
                    }
                    _ => callee.visit_mut_with(self),
                }
            }
            Callee::Import(_) => {
                c.args.visit_mut_with(self);
                // `import(s)` → `import(__shepherd.di(s[, import.meta.url]))`: the runtime
                // learns which action starts the import (its module graph is forked by it).
                if let Some(first) = c.args.first_mut()
                    && first.spread.is_none()
                {
                    let spec = std::mem::replace(
                        &mut *first.expr,
                        Expr::Invalid(Invalid { span: DUMMY_SP }),
                    );
                    let mut args = vec![spec];
                    if self.kind == Kind::Module {
                        args.push(import_meta_url());
                    }
                    *first.expr = api_call(DUMMY_SP, "di", args);
                }
                return Expr::Call(c);
            }
            Callee::Super(_) => {}
        }
        c.args.visit_mut_with(self);
        Expr::Call(c)
    }

    fn rewrite_opt_chain(&mut self, mut o: OptChainExpr) -> Expr {
        match &mut *o.base {
            OptChainBase::Member(m) => {
                self.visit_member_parts(m);
                if o.optional {
                    self.receiver(m, true);
                }
            }
            OptChainBase::Call(c) => {
                strip_reference_parens(&mut c.callee);
                match &mut *c.callee {
                    Expr::Member(m) => {
                        self.visit_member_parts(m);
                        if !matches!(*m.obj, Expr::OptChain(_)) {
                            self.receiver(m, false);
                        }
                    }
                    Expr::Ident(_) if self.dynamic > 0 => {}
                    Expr::SuperProp(sp) => self.visit_super_parts(sp),
                    other => other.visit_mut_with(self),
                }
                c.args.visit_mut_with(self);
            }
        }
        Expr::OptChain(o)
    }

    // ---- bodies -------------------------------------------------------------------------

    /// Statements to put after the directive prologue of a body owned by `key`: temporaries,
    /// the scope id, and hoisting-time writes of function declarations.
    fn prologue(&self, frame: &Frame, stmts: &[Stmt]) -> Vec<Stmt> {
        let mut out = Vec::new();
        if frame.kind != FrameKind::TopScript && frame.temps > 0 {
            let decls = (0..frame.temps)
                .map(|i| VarDeclarator {
                    span: DUMMY_SP,
                    name: Pat::Ident(ident(&format!("{RESERVED}t{i}")).into()),
                    init: None,
                    definite: false,
                })
                .collect();
            out.push(Stmt::Decl(Decl::Var(Box::new(VarDecl {
                span: DUMMY_SP,
                ctxt: SyntaxContext::empty(),
                kind: VarDeclKind::Var,
                declare: false,
                decls,
            }))));
        }
        let needs_sid = if frame.kind == FrameKind::TopScript {
            // Script-level declarations are globals; only block-scoped captured ones need it.
            self.caps
                .captured
                .iter()
                .any(|(id, o)| *o == TOP && id.1 != self.top_level && id.1 != self.unresolved)
        } else {
            self.caps.owners.contains(&frame.key)
        };
        if needs_sid {
            let sid_call = api_call(DUMMY_SP, "s", vec![]);
            if frame.kind == FrameKind::TopScript {
                let target = match *self.sid_expr(frame.key, frame.kind) {
                    Expr::Member(m) => AssignTarget::Simple(SimpleAssignTarget::Member(m)),
                    _ => return out,
                };
                // Parenthesised: `void a = b` would parse as `(void a) = b`.
                out.push(void_stmt(Expr::Paren(ParenExpr {
                    span: DUMMY_SP,
                    expr: Box::new(Expr::Assign(AssignExpr {
                        span: DUMMY_SP,
                        op: AssignOp::Assign,
                        left: target,
                        right: Box::new(sid_call),
                    })),
                })));
            } else if let Expr::Ident(name) = *self.sid_expr(frame.key, frame.kind) {
                out.push(Stmt::Decl(Decl::Var(Box::new(VarDecl {
                    span: DUMMY_SP,
                    ctxt: SyntaxContext::empty(),
                    kind: VarDeclKind::Var,
                    declare: false,
                    decls: vec![VarDeclarator {
                        span: DUMMY_SP,
                        name: Pat::Ident(name.into()),
                        init: Some(Box::new(sid_call)),
                        definite: false,
                    }],
                }))));
            }
        }
        for s in stmts {
            if let Stmt::Decl(Decl::Fn(f)) = s
                && let Some(w) = self.write_stmt(&f.ident)
            {
                out.push(w);
            }
        }
        out
    }

    fn finish(&mut self, stmts: &mut Vec<Stmt>) {
        let frame = self.pop_frame();
        let pro = self.prologue(&frame, stmts);
        if !pro.is_empty() {
            let at = directive_count(stmts);
            stmts.splice(at..at, pro);
        }
    }

    /// A for-in/of loop: member targets in the head get temporaries and write logs at the
    /// start of the body, and so do shared loop variables; a head with captured
    /// `let`/`const` bindings gets a scope id per iteration (first in the body).
    fn for_in_of(
        &mut self,
        span: Span,
        left: &mut ForHead,
        right: &mut Box<Expr>,
        body: &mut Box<Stmt>,
    ) {
        let d = self.depth;
        let mut tg = Targets::default();
        match &mut *left {
            ForHead::Pat(p) => self.visit_target_pat(p, &mut tg),
            other => other.visit_mut_with(self),
        }
        // The right side is evaluated once, before any head assignment.
        self.depth = d;
        right.visit_mut_with(self);
        let key = fn_key(span, TAG_FOR_IN);
        let own = self.caps.owners.contains(&key);
        if own {
            self.blocks.push(key);
        }
        body.visit_mut_with(self);
        let mut logs: Vec<Stmt> = tg.members.into_iter().map(void_stmt).collect();
        logs.extend(self.loop_var_log(left, tg.ids));
        if own {
            self.blocks.pop();
            logs.insert(0, block_sid_decl(key, VarDeclKind::Const));
        }
        prepend_body(body, logs);
    }

    /// Logs the loop variables at the start of a for-in/for-of body: those a declaration
    /// binds, or `targets` (the identifiers of an assignment head, grouped ones included).
    fn loop_var_log(&self, head: &ForHead, mut targets: Vec<Ident>) -> Vec<Stmt> {
        if let ForHead::VarDecl(v) = head {
            for d in &v.decls {
                collect_pat_idents(&d.name, &mut targets);
            }
        }
        targets.iter().filter_map(|i| self.write_stmt(i)).collect()
    }
}

enum MemberKey {
    Static(Expr),
    Dynamic,
}

/// Targets of a destructuring assignment or a for-in/of head: identifiers whose new value is
/// logged afterwards, and write logs (`V`) of member targets.
#[derive(Default)]
struct Targets {
    ids: Vec<Ident>,
    members: Vec<Expr>,
}

/// The key of `super.x` / `super["x"]` as a literal; `None` for other computed keys.
fn super_key(sp: &SuperPropExpr) -> Option<Expr> {
    match &sp.prop {
        SuperProp::Ident(n) => Some(name_lit(&n.sym)),
        SuperProp::Computed(c) => match &*c.expr {
            Expr::Lit(Lit::Str(_)) | Expr::Lit(Lit::Num(_)) => Some((*c.expr).clone()),
            _ => None,
        },
    }
}

/// Finds the identifier `eval` (see [`mentions_eval`]).
struct FindEval(bool);

impl swc_core::ecma::visit::Visit for FindEval {
    fn visit_ident(&mut self, i: &Ident) {
        self.0 |= &*i.sym == "eval";
    }
}

/// True when `m` or `rest` contains the identifier `eval`: a direct eval moved into an arrow
/// would declare its `var`s in the arrow instead of the parameter scope.
fn mentions_eval(m: &MemberExpr, rest: Option<&Expr>) -> bool {
    use swc_core::ecma::visit::VisitWith;
    let mut f = FindEval(false);
    m.visit_with(&mut f);
    if let Some(r) = rest {
        r.visit_with(&mut f);
    }
    f.0
}

/// True when an assignment pattern has a member target that needs temporaries (any base but
/// `this`, or a computed key).
fn pattern_needs_temps(p: &AssignTargetPat) -> bool {
    struct Find(bool);
    impl swc_core::ecma::visit::Visit for Find {
        fn visit_pat(&mut self, p: &Pat) {
            if let Pat::Expr(e) = p {
                let mut e = &**e;
                while let Expr::Paren(inner) = e {
                    e = &inner.expr;
                }
                if let Expr::Member(m) = e {
                    self.0 |= !matches!(*m.obj, Expr::This(_))
                        || matches!(m.prop, MemberProp::Computed(_));
                }
                return;
            }
            swc_core::ecma::visit::VisitWith::visit_children_with(p, self);
        }
    }
    let mut f = Find(false);
    swc_core::ecma::visit::VisitWith::visit_with(p, &mut f);
    f.0
}

impl VisitMut for Pass<'_> {
    fn visit_mut_expr(&mut self, e: &mut Expr) {
        // In place where nothing is rewritten (most expressions, and identifiers of locals):
        // taking the node out and putting it back costs two moves and a drop per node.
        match e {
            Expr::Ident(id) if self.classify(id) == Class::Local => return,
            Expr::Ident(_)
            | Expr::Member(_)
            | Expr::SuperProp(_)
            | Expr::Assign(_)
            | Expr::Update(_)
            | Expr::Unary(_)
            | Expr::Call(_)
            | Expr::OptChain(_)
            | Expr::TaggedTpl(_)
            | Expr::New(_)
            | Expr::Await(_) => {}
            other => {
                other.visit_mut_children_with(self);
                return;
            }
        }
        let span = e.span();
        let taken = std::mem::replace(e, Expr::Invalid(Invalid { span }));
        *e = match taken {
            Expr::Ident(id) => self.read_ident(id),
            Expr::Member(mut m) => {
                if matches!(*m.obj, Expr::OptChain(_)) {
                    self.visit_member_parts(&mut m);
                    Expr::Member(m)
                } else if matches!(m.prop, MemberProp::PrivateName(_)) {
                    self.read_private(m)
                } else {
                    self.visit_member_parts(&mut m);
                    self.read_member(m)
                }
            }
            Expr::SuperProp(mut sp) => {
                // Logged as a read of the property on `this` (the receiver of the lookup);
                // the home object's prototype cannot be named from here.
                let key = super_key(&sp);
                self.visit_super_parts(&mut sp);
                match key {
                    Some(k) => self.acall(span, "pr", [this_expr(), k, Expr::SuperProp(sp)]),
                    None => Expr::SuperProp(sp),
                }
            }
            Expr::Assign(a) => self.rewrite_assign(a),
            Expr::Update(u) => self.rewrite_update(u),
            Expr::Unary(u) => self.rewrite_unary(u),
            Expr::Call(c) => self.rewrite_call(c),
            Expr::OptChain(o) => self.rewrite_opt_chain(o),
            Expr::TaggedTpl(mut t) => {
                strip_reference_parens(&mut t.tag);
                if let Expr::Member(m) = &mut *t.tag {
                    self.visit_member_parts(m);
                    self.receiver(m, false);
                } else if let Expr::SuperProp(sp) = &mut *t.tag {
                    self.visit_super_parts(sp);
                } else {
                    t.tag.visit_mut_with(self);
                }
                t.tpl.visit_mut_with(self);
                Expr::TaggedTpl(t)
            }
            Expr::New(mut n) => {
                n.visit_mut_children_with(self);
                // `new f()(…)` would call the result, and `new f()`x`` would construct
                // `new f()` and tag with it: keep a callee whose head became a call
                // parenthesised (`new tag`x`` constructs what the tag returns).
                if head_is_call(&n.callee) {
                    let callee = std::mem::replace(
                        &mut n.callee,
                        Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })),
                    );
                    n.callee = Box::new(Expr::Paren(ParenExpr {
                        span: DUMMY_SP,
                        expr: callee,
                    }));
                }
                Expr::New(n)
            }
            Expr::Await(mut a) => {
                a.arg.visit_mut_with(self);
                // The token is taken before suspending; `aw` runs when the continuation
                // resumes and attributes it to the action that resumed it.
                api_call(
                    span,
                    "aw",
                    vec![api_call(DUMMY_SP, "as", vec![]), Expr::Await(a)],
                )
            }
            mut other => {
                other.visit_mut_children_with(self);
                other
            }
        };
    }

    fn visit_mut_prop(&mut self, p: &mut Prop) {
        if let Prop::Shorthand(id) = p {
            let v = self.read_ident(id.clone());
            if !matches!(v, Expr::Ident(_)) {
                // `{__proto__}` defines an own property; `{__proto__: v}` would set the
                // prototype instead, `{["__proto__"]: v}` does not.
                let key = if &*id.sym == "__proto__" {
                    PropName::Computed(ComputedPropName {
                        span: DUMMY_SP,
                        expr: Box::new(self.name_lit(&id.sym)),
                    })
                } else {
                    PropName::Ident(IdentName::new(id.sym.clone(), id.span))
                };
                *p = Prop::KeyValue(KeyValueProp {
                    key,
                    value: Box::new(v),
                });
            }
            return;
        }
        p.visit_mut_children_with(self);
    }

    fn visit_mut_pat(&mut self, p: &mut Pat) {
        // Declaration patterns: only defaults and computed keys are expressions to visit;
        // `Pat::Expr` (assignment targets in for-in/of heads) is a target, not a read.
        if let Pat::Expr(e) = p {
            // Only reached for targets outside for-in/of heads and assignment patterns
            // (none in valid code); visited, not logged.
            self.visit_target_expr(e, &mut Targets::default());
            return;
        }
        p.visit_mut_children_with(self);
    }

    fn visit_mut_var_declarator(&mut self, d: &mut VarDeclarator) {
        d.name.visit_mut_with(self);
        let Some(init) = &mut d.init else { return };
        init.visit_mut_with(self);
        let Pat::Ident(b) = &d.name else { return };
        let id = b.id.clone();
        if matches!(self.classify(&id), Class::Local) {
            return;
        }
        let taken = std::mem::replace(init, Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })));
        // Keep the function name an anonymous function/class would get from the binding.
        let value = if is_anonymous_fn(&taken) {
            name_preserving(&id.sym, taken)
        } else {
            *taken
        };
        **init = self.log_ident_write(&id, value, false, id.span);
    }

    fn visit_mut_stmts(&mut self, stmts: &mut Vec<Stmt>) {
        let mut i = 0;
        while i < stmts.len() {
            stmts[i].visit_mut_with(self);
            // Class declarations of shared names become `let C = <log>(class C {…})`.
            if let Stmt::Decl(Decl::Class(c)) = &stmts[i]
                && !matches!(self.classify(&c.ident), Class::Local)
                && let Stmt::Decl(Decl::Class(c)) =
                    std::mem::replace(&mut stmts[i], Stmt::Empty(EmptyStmt { span: DUMMY_SP }))
            {
                stmts[i] = self.class_to_let(c);
            }
            i += 1;
        }
    }

    fn visit_mut_module_items(&mut self, items: &mut Vec<ModuleItem>) {
        for item in items.iter_mut() {
            item.visit_mut_with(self);
            if let ModuleItem::Stmt(Stmt::Decl(Decl::Class(c))) = item
                && !matches!(self.classify(&c.ident), Class::Local)
            {
                let c = c.clone();
                *item = ModuleItem::Stmt(self.class_to_let(c));
            }
        }
    }

    fn visit_mut_for_in_stmt(&mut self, s: &mut ForInStmt) {
        self.for_in_of(s.span, &mut s.left, &mut s.right, &mut s.body);
    }

    fn visit_mut_for_of_stmt(&mut self, s: &mut ForOfStmt) {
        self.for_in_of(s.span, &mut s.left, &mut s.right, &mut s.body);
    }

    fn visit_mut_for_stmt(&mut self, s: &mut ForStmt) {
        let key = fn_key(s.span, TAG_FOR);
        if !self.caps.owners.contains(&key) {
            s.visit_mut_children_with(self);
            return;
        }
        // `for (let …)` copies its bindings into a fresh scope before every iteration's
        // update expression: the scope id is one more binding of the head, renewed by the
        // update, so each iteration (and the closures it creates) has its own `Scope[S]`.
        self.blocks.push(key);
        s.visit_mut_children_with(self);
        self.blocks.pop();
        let Some(VarDeclOrExpr::VarDecl(v)) = &mut s.init else {
            return;
        };
        v.decls.insert(0, block_sid_declarator(key));
        if v.kind == VarDeclKind::Let {
            let fresh = Expr::Assign(AssignExpr {
                span: DUMMY_SP,
                op: AssignOp::Assign,
                left: AssignTarget::Simple(SimpleAssignTarget::Ident(block_sid(key).into())),
                right: Box::new(api_call(DUMMY_SP, "s", vec![])),
            });
            s.update = Some(Box::new(match s.update.take() {
                Some(u) => Expr::Seq(SeqExpr {
                    span: DUMMY_SP,
                    exprs: vec![Box::new(fresh), u],
                }),
                None => fresh,
            }));
        }
    }

    fn visit_mut_stmt(&mut self, s: &mut Stmt) {
        let Stmt::Switch(sw) = s else {
            s.visit_mut_children_with(self);
            return;
        };
        let key = fn_key(sw.span, TAG_SWITCH);
        if !self.caps.owners.contains(&key) {
            sw.visit_mut_children_with(self);
            return;
        }
        // The cases share one scope, entered after the discriminant: the scope id goes in a
        // block around the switch (same completion value; a label on the switch now labels
        // the block, which `break label` still leaves).
        sw.discriminant.visit_mut_with(self);
        self.blocks.push(key);
        sw.cases.visit_mut_with(self);
        self.blocks.pop();
        let span = sw.span;
        let switch = std::mem::replace(s, Stmt::Empty(EmptyStmt { span: DUMMY_SP }));
        *s = Stmt::Block(BlockStmt {
            span,
            ctxt: SyntaxContext::empty(),
            stmts: vec![block_sid_decl(key, VarDeclKind::Const), switch],
        });
    }

    fn visit_mut_block_stmt(&mut self, b: &mut BlockStmt) {
        // Function bodies are visited through their statements, never here.
        let key = fn_key(b.span, TAG_BLOCK);
        if !self.caps.owners.contains(&key) {
            b.stmts.visit_mut_with(self);
            return;
        }
        self.blocks.push(key);
        b.stmts.visit_mut_with(self);
        self.blocks.pop();
        b.stmts.insert(0, block_sid_decl(key, VarDeclKind::Const));
    }

    fn visit_mut_catch_clause(&mut self, c: &mut CatchClause) {
        // The parameter pattern is evaluated before the body, where the scope id is made.
        c.param.visit_mut_with(self);
        let key = fn_key(c.span, TAG_CATCH);
        let own = self.caps.owners.contains(&key);
        if own {
            self.blocks.push(key);
        }
        c.body.stmts.visit_mut_with(self);
        if own {
            self.blocks.pop();
            c.body
                .stmts
                .insert(0, block_sid_decl(key, VarDeclKind::Const));
        }
    }

    fn visit_mut_class(&mut self, c: &mut swc_core::ecma::ast::Class) {
        let names = c
            .body
            .iter()
            .filter_map(|m| match m {
                ClassMember::PrivateMethod(pm) => Some((pm.key.name.clone(), true)),
                ClassMember::PrivateProp(pp) => Some((pp.key.name.clone(), false)),
                _ => None,
            })
            .collect();
        // `extends` is evaluated outside the class's private environment.
        c.super_class.visit_mut_with(self);
        self.privates.push(names);
        c.decorators.visit_mut_with(self);
        c.body.visit_mut_with(self);
        self.privates.pop();
    }

    fn visit_mut_with_stmt(&mut self, s: &mut WithStmt) {
        s.obj.visit_mut_with(self);
        self.dynamic += 1;
        s.body.visit_mut_with(self);
        self.dynamic -= 1;
        alias_runtime(&mut s.body);
    }

    // ---- scopes -------------------------------------------------------------------------

    fn visit_mut_script(&mut self, s: &mut Script) {
        let kind = if self.script_like() {
            FrameKind::TopScript
        } else {
            FrameKind::TopVar
        };
        self.push_frame(TOP, kind);
        s.body.visit_mut_with(self);
        let before = s.body.len();
        self.finish(&mut s.body);
        let at = directive_count(&s.body);
        let src = self.src_registration(false);
        s.body.insert(at, src);
        // The completion value of a script (eval, `javascript:` URLs) whose only value comes
        // from its directives (`'hello'`, `'use strict'; function f(){}`) would now be our
        // `void …`: repeat the last directive, as a plain expression statement, after ours.
        if at > 0 {
            let inserted = s.body.len() - before;
            let last = s.body[at - 1].clone();
            s.body.insert(at + inserted, last);
        }
    }

    fn visit_mut_module(&mut self, m: &mut Module) {
        self.push_frame(TOP, FrameKind::TopVar);
        m.body.visit_mut_with(self);
        let frame = self.pop_frame();
        let stmts: Vec<Stmt> = m
            .body
            .iter()
            .filter_map(|i| match i {
                ModuleItem::Stmt(s) => Some(s.clone()),
                ModuleItem::ModuleDecl(ModuleDecl::ExportDecl(e)) => {
                    Some(Stmt::Decl(e.decl.clone()))
                }
                _ => None,
            })
            .collect();
        let pro = self.prologue(&frame, &stmts);
        if !pro.is_empty() {
            m.body.splice(0..0, pro.into_iter().map(ModuleItem::Stmt));
        }
        m.body
            .insert(0, ModuleItem::Stmt(self.src_registration(true)));
    }

    fn visit_mut_function(&mut self, f: &mut Function) {
        f.decorators.visit_mut_with(self);
        self.push_frame(fn_key(f.span, TAG_FN), FrameKind::Function);
        self.set_in_params(true);
        f.params.visit_mut_with(self);
        self.set_in_params(false);
        if let Some(body) = &mut f.body {
            body.stmts.visit_mut_with(self);
            self.finish(&mut body.stmts);
        } else {
            self.pop_frame();
        }
    }

    fn visit_mut_arrow_expr(&mut self, a: &mut ArrowExpr) {
        self.push_frame(fn_key(a.span, TAG_ARROW), FrameKind::Function);
        self.set_in_params(true);
        a.params.visit_mut_with(self);
        self.set_in_params(false);
        match &mut *a.body {
            ArrowFunctionBody::FunctionBody(b) => {
                b.stmts.visit_mut_with(self);
                self.finish(&mut b.stmts);
            }
            ArrowFunctionBody::Expr(e) => {
                e.visit_mut_with(self);
                let frame = self.pop_frame();
                let pro = self.prologue(&frame, &[]);
                if !pro.is_empty() {
                    let e =
                        std::mem::replace(e, Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })));
                    let span = e.span();
                    let mut stmts = pro;
                    stmts.push(Stmt::Return(ReturnStmt { span, arg: Some(e) }));
                    *a.body = ArrowFunctionBody::FunctionBody(FunctionBody { span, stmts });
                }
            }
        }
    }

    fn visit_mut_constructor(&mut self, c: &mut Constructor) {
        c.key.visit_mut_with(self);
        self.push_frame(fn_key(c.span, TAG_CTOR), FrameKind::Function);
        self.set_in_params(true);
        c.params.visit_mut_with(self);
        self.set_in_params(false);
        if let Some(body) = &mut c.body {
            body.stmts.visit_mut_with(self);
            // In derived constructors `this` is only usable after super(); our prologue does
            // not touch `this`, so it can go first.
            self.finish(&mut body.stmts);
        } else {
            self.pop_frame();
        }
    }

    fn visit_mut_class_prop(&mut self, p: &mut ClassProp) {
        p.key.visit_mut_with(self);
        if let Some(v) = &mut p.value {
            self.push_frame(fn_key(p.span, TAG_FIELD), FrameKind::Field);
            v.visit_mut_with(self);
            self.pop_frame();
        }
    }

    fn visit_mut_private_prop(&mut self, p: &mut PrivateProp) {
        if let Some(v) = &mut p.value {
            self.push_frame(fn_key(p.span, TAG_FIELD), FrameKind::Field);
            v.visit_mut_with(self);
            self.pop_frame();
        }
    }

    fn visit_mut_static_block(&mut self, b: &mut StaticBlock) {
        self.push_frame(fn_key(b.span, TAG_STATIC), FrameKind::Function);
        b.body.stmts.visit_mut_with(self);
        self.finish(&mut b.body.stmts);
    }

    // Labels are not variables.
    fn visit_mut_labeled_stmt(&mut self, s: &mut LabeledStmt) {
        s.body.visit_mut_with(self);
    }
    fn visit_mut_break_stmt(&mut self, _: &mut BreakStmt) {}
    fn visit_mut_continue_stmt(&mut self, _: &mut ContinueStmt) {}
    fn visit_mut_export_named_specifier(&mut self, _: &mut ExportNamedSpecifier) {}
    fn visit_mut_import_decl(&mut self, _: &mut ImportDecl) {}
}

impl Pass<'_> {
    /// `void __shepherd.src(K, F)` (modules: `…, import.meta.url)`): names this script for
    /// the positions of its accesses. `void` keeps the completion value (`javascript:` URLs,
    /// eval) what it was.
    fn src_registration(&self, module: bool) -> Stmt {
        let flag = u64::from(self.inline || matches!(self.kind, Kind::Handler | Kind::JsUrl));
        let mut args = vec![int_lit(u64::from(self.pos.key())), int_lit(flag)];
        if module {
            args.push(import_meta_url());
        }
        void_stmt(api_call(DUMMY_SP, "src", args))
    }

    fn set_in_params(&mut self, on: bool) {
        if let Some(f) = self.frames.last_mut() {
            f.in_params = on;
        }
    }

    fn class_to_let(&self, c: ClassDecl) -> Stmt {
        let id = c.ident.clone();
        let expr = Expr::Class(ClassExpr {
            ident: Some(c.ident),
            class: c.class,
        });
        let init = self.log_ident_write(&id, expr, false, id.span);
        Stmt::Decl(Decl::Var(Box::new(VarDecl {
            span: DUMMY_SP,
            ctxt: SyntaxContext::empty(),
            kind: VarDeclKind::Let,
            declare: false,
            decls: vec![VarDeclarator {
                span: DUMMY_SP,
                name: Pat::Ident(id.into()),
                init: Some(Box::new(init)),
                definite: false,
            }],
        })))
    }
}
