//! Small builders and shape tests of syntax trees shared by the record pass (`pass.rs`) and
//! the other walks: runtime calls (`__shepherd.<name>(…)`), literals printed verbatim, scope-id
//! declarations, grouping parentheses.

use swc_core::atoms::Atom;
use swc_core::common::{DUMMY_SP, Span, SyntaxContext};
use swc_core::ecma::ast::*;

use crate::analysis::FnKey;

/// Name of the runtime object.
pub(crate) const API: &str = "__shepherd";
/// Prefix of every identifier the pass introduces.
pub(crate) const RESERVED: &str = "__sh$";

/// An identifier with no syntax context (one the pass introduces).
pub(crate) fn ident(s: &str) -> Ident {
    Ident::new_no_ctxt(Atom::from(s), DUMMY_SP)
}

thread_local! {
    /// Interned names of the runtime object and its members (built once per worker thread).
    static ATOMS: std::cell::RefCell<Vec<(&'static str, Atom)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The interned atom of a fixed name (short names inline, longer ones cached per thread).
pub(crate) fn atom(name: &'static str) -> Atom {
    if name.len() <= 7 {
        // Short atoms are stored inline (no interning table): building one is cheaper than
        // finding it.
        return Atom::from(name);
    }
    ATOMS.with(|a| {
        let mut a = a.borrow_mut();
        if let Some((_, at)) = a.iter().find(|(n, _)| std::ptr::eq(*n, name) || *n == name) {
            return at.clone();
        }
        let at = Atom::from(name);
        a.push((name, at.clone()));
        at
    })
}

/// `__shepherd.<name>`
pub(crate) fn api_expr(name: &'static str) -> Box<Expr> {
    Box::new(Expr::Member(MemberExpr {
        span: DUMMY_SP,
        obj: Box::new(Expr::Ident(Ident::new_no_ctxt(atom(API), DUMMY_SP))),
        prop: MemberProp::Ident(IdentName::new(atom(name), DUMMY_SP)),
    }))
}

/// `__shepherd.<name>(args…)`
/// `import.meta.url`.
pub(crate) fn import_meta_url() -> Expr {
    Expr::Member(MemberExpr {
        span: DUMMY_SP,
        obj: Box::new(Expr::MetaProp(MetaPropExpr {
            span: DUMMY_SP,
            kind: MetaPropKind::ImportMeta,
        })),
        prop: MemberProp::Ident(IdentName::new(atom("url"), DUMMY_SP)),
    })
}

thread_local! {
    /// Interned callee texts `__shepherd.<name>` (built once per worker thread).
    static CALLEES: std::cell::RefCell<Vec<(&'static str, Atom)>> = const { std::cell::RefCell::new(Vec::new()) };
}

/// The prefix of every callee [`api_call`] builds.
pub(crate) const API_DOT: &str = "__shepherd.";

/// `__shepherd.<name>` as a callee: one identifier node whose text is the whole member
/// expression (printed verbatim, like [`int_lit`]), instead of a member node over two
/// identifiers: the calls are the most numerous nodes the pass adds, and each was three
/// allocations to build, walk, print and free. The printed text is the same.
fn api_callee(name: &'static str) -> Box<Expr> {
    let sym = CALLEES.with(|c| {
        let mut c = c.borrow_mut();
        if let Some((_, at)) = c.iter().find(|(n, _)| std::ptr::eq(*n, name) || *n == name) {
            return at.clone();
        }
        let at = Atom::from(format!("{API_DOT}{name}"));
        c.push((name, at.clone()));
        at
    });
    Box::new(Expr::Ident(Ident::new_no_ctxt(sym, DUMMY_SP)))
}

pub(crate) fn api_call(span: Span, name: &'static str, args: Vec<Expr>) -> Expr {
    api_call_then(span, name, args, None)
}

/// `api_call` with one more argument at the end (the argument list is allocated once; an
/// array of arguments needs no list of its own before it).
pub(crate) fn api_call_then<A>(span: Span, name: &'static str, args: A, last: Option<Expr>) -> Expr
where
    A: IntoIterator<Item = Expr>,
    A::IntoIter: ExactSizeIterator,
{
    let args = args.into_iter();
    let mut list = Vec::with_capacity(args.len() + usize::from(last.is_some()));
    list.extend(args.into_iter().chain(last).map(|e| ExprOrSpread {
        spread: None,
        expr: Box::new(e),
    }));
    Expr::Call(CallExpr {
        span,
        ctxt: SyntaxContext::empty(),
        callee: Callee::Expr(api_callee(name)),
        args: list,
        type_args: None,
    })
}

/// An integer as a decimal literal (minified codegen would print large numbers in hex; an
/// identifier node is printed verbatim).
pub(crate) fn int_lit(n: u64) -> Expr {
    // Digits written into a stack buffer, two at a time: one per access call, no heap string.
    const PAIRS: &[u8; 200] = b"0001020304050607080910111213141516171819\
        2021222324252627282930313233343536373839\
        4041424344454647484950515253545556575859\
        6061626364656667686970717273747576777879\
        8081828384858687888990919293949596979899";
    let mut buf = [0u8; 20];
    let mut at = buf.len();
    let mut v = n;
    while v >= 10 {
        let pair = (v % 100) as usize * 2;
        v /= 100;
        at -= 2;
        buf[at..at + 2].copy_from_slice(&PAIRS[pair..pair + 2]);
    }
    if v > 0 || at == buf.len() {
        at -= 1;
        buf[at] = b'0' + v as u8;
    }
    let digits = std::str::from_utf8(&buf[at..]).unwrap_or("0");
    Expr::Ident(Ident::new_no_ctxt(Atom::from(digits), DUMMY_SP))
}

/// Name of the scope id of a block-like scope.
pub(crate) fn block_sid(key: FnKey) -> Ident {
    ident(&block_sid_name(key))
}

/// The text of [`block_sid`].
pub(crate) fn block_sid_name(key: FnKey) -> String {
    format!("{RESERVED}b{}_{}_{}", key.0, key.1, key.2)
}

/// `const|let <block sid> = __shepherd.s()`
pub(crate) fn block_sid_decl(key: FnKey, kind: VarDeclKind) -> Stmt {
    Stmt::Decl(Decl::Var(Box::new(VarDecl {
        span: DUMMY_SP,
        ctxt: SyntaxContext::empty(),
        kind,
        declare: false,
        decls: vec![block_sid_declarator(key)],
    })))
}

/// `<block sid> = __shepherd.s()`
pub(crate) fn block_sid_declarator(key: FnKey) -> VarDeclarator {
    VarDeclarator {
        span: DUMMY_SP,
        name: Pat::Ident(block_sid(key).into()),
        init: Some(Box::new(api_call(DUMMY_SP, "s", vec![]))),
        definite: false,
    }
}

/// A string literal.
pub(crate) fn str_lit(s: &str) -> Expr {
    Expr::Lit(Lit::Str(Str {
        span: DUMMY_SP,
        value: s.into(),
        raw: None,
    }))
}

/// A string literal from an identifier name (no re-interning).
pub(crate) fn name_lit(a: &Atom) -> Expr {
    Expr::Lit(Lit::Str(Str::from(a.clone())))
}

/// The text of [`name_lit`] as an identifier printed verbatim (`"name"`, quotes included):
/// the minifying emitter quotes a string literal anew each time (scanning it for the best
/// quote and escapes into a fresh buffer), while an identifier name never needs escaping in
/// double quotes (no quote, backslash or line terminator is an identifier character; the
/// ASCII-only emitter escapes other characters alike in both). The pass interns one per
/// name and job.
pub(crate) fn quoted_name(a: &Atom) -> Atom {
    let mut s = String::with_capacity(a.len() + 2);
    s.push('"');
    s.push_str(a);
    s.push('"');
    Atom::from(s)
}

/// A number literal.
pub(crate) fn num_lit(n: f64) -> Expr {
    Expr::Lit(Lit::Num(Number {
        span: DUMMY_SP,
        value: n,
        raw: None,
    }))
}

/// `l op r`
pub(crate) fn bin(op: BinaryOp, l: Expr, r: Expr) -> Expr {
    Expr::Bin(BinExpr {
        span: DUMMY_SP,
        op,
        left: Box::new(l),
        right: Box::new(r),
    })
}

/// `void e;` (keeps the completion value of the statement list unchanged).
pub(crate) fn void_stmt(e: Expr) -> Stmt {
    Stmt::Expr(ExprStmt {
        span: DUMMY_SP,
        expr: Box::new(Expr::Unary(UnaryExpr {
            span: DUMMY_SP,
            op: UnaryOp::Void,
            arg: Box::new(e),
        })),
    })
}

/// Number of leading directive statements (`"use strict"` …).
pub(crate) fn directive_count(stmts: &[Stmt]) -> usize {
    stmts
        .iter()
        .take_while(|s| matches!(s, Stmt::Expr(ExprStmt { expr, .. }) if matches!(**expr, Expr::Lit(Lit::Str(_)))))
        .count()
}

/// Puts `logs` first in a loop body, making the body a block when it is not one.
pub(crate) fn prepend_body(body: &mut Box<Stmt>, logs: Vec<Stmt>) {
    if logs.is_empty() {
        return;
    }
    match &mut **body {
        Stmt::Block(b) => {
            b.stmts.splice(0..0, logs);
        }
        _ => {
            let old = std::mem::replace(&mut **body, Stmt::Empty(EmptyStmt { span: DUMMY_SP }));
            let mut stmts = logs;
            stmts.push(old);
            **body = Stmt::Block(BlockStmt {
                span: DUMMY_SP,
                ctxt: SyntaxContext::empty(),
                stmts,
            });
        }
    }
}

/// `e` without its grouping parentheses.
pub(crate) fn unparen(mut e: &Expr) -> &Expr {
    while let Expr::Paren(p) = e {
        e = &p.expr;
    }
    e
}

/// [`unparen`] for an owned expression.
pub(crate) fn unparen_owned(mut e: Box<Expr>) -> Box<Expr> {
    while let Expr::Paren(p) = *e {
        e = p.expr;
    }
    e
}

/// Drops the parentheses around a callee or tag that is a reference (`(o.m)()`, `((f))()`,
/// `(super.m)()`, `(eval)(s)`): the grouped reference is called with the same `this` and
/// the same directness of `eval`, so the bare form is rewritten like the original. `(let)`
/// keeps them: a statement must not start with the `let` token.
pub(crate) fn strip_reference_parens(e: &mut Box<Expr>) {
    if !matches!(**e, Expr::Paren(_)) {
        return;
    }
    let keep = match unparen(e) {
        Expr::Member(_) | Expr::SuperProp(_) => false,
        Expr::Ident(i) => &*i.sym == "let",
        _ => true,
    };
    if !keep {
        let inner = std::mem::replace(e, Box::new(Expr::Invalid(Invalid { span: DUMMY_SP })));
        *e = unparen_owned(inner);
    }
}

/// True when the leftmost operand of a `new` callee is a call (or an optional chain):
/// printed without parentheses, `new` would take that call's arguments as its own.
pub(crate) fn head_is_call(e: &Expr) -> bool {
    match e {
        Expr::Call(_) | Expr::OptChain(_) => true,
        Expr::Member(m) => head_is_call(&m.obj),
        Expr::TaggedTpl(t) => head_is_call(&t.tag),
        _ => false,
    }
}

/// `__shepherd.<name>(…)`: built by the pass ([`api_callee`]) or parsed from instrumented code.
pub(crate) fn is_api_call(c: &CallExpr) -> bool {
    let Callee::Expr(e) = &c.callee else {
        return false;
    };
    match &**e {
        Expr::Ident(i) => i.sym.starts_with(API_DOT),
        Expr::Member(m) => matches!(&*m.obj, Expr::Ident(i) if &*i.sym == API),
        _ => false,
    }
}

/// An anonymous function, arrow or class (through parentheses): a binding names it.
pub(crate) fn is_anonymous_fn(e: &Expr) -> bool {
    match e {
        Expr::Fn(f) => f.ident.is_none(),
        Expr::Class(c) => c.ident.is_none(),
        Expr::Arrow(_) => true,
        Expr::Paren(p) => is_anonymous_fn(&p.expr),
        _ => false,
    }
}

/// `({name: e}).name`: the property definition gives an anonymous function the same `name`
/// the binding would have given it.
pub(crate) fn name_preserving(name: &Atom, e: Box<Expr>) -> Expr {
    let key = if &**name == "__proto__" {
        PropName::Computed(ComputedPropName {
            span: DUMMY_SP,
            expr: Box::new(str_lit(name)),
        })
    } else {
        PropName::Ident(IdentName::new(name.clone(), DUMMY_SP))
    };
    let obj = Expr::Object(ObjectLit {
        span: DUMMY_SP,
        props: vec![PropOrSpread::Prop(Box::new(Prop::KeyValue(KeyValueProp {
            key,
            value: e,
        })))],
    });
    Expr::Member(MemberExpr {
        span: DUMMY_SP,
        obj: Box::new(Expr::Paren(ParenExpr {
            span: DUMMY_SP,
            expr: Box::new(obj),
        })),
        prop: MemberProp::Computed(ComputedPropName {
            span: DUMMY_SP,
            expr: Box::new(str_lit(name)),
        }),
    })
}

/// `this`
pub(crate) fn this_expr() -> Expr {
    Expr::This(ThisExpr { span: DUMMY_SP })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn int_lit_prints_decimal() {
        for n in [
            0,
            5,
            9,
            10,
            42,
            99,
            100,
            101,
            1000,
            5_212_750_284_849_165,
            u64::MAX,
        ] {
            let Expr::Ident(i) = int_lit(n) else {
                panic!("an identifier printed verbatim");
            };
            assert_eq!(&*i.sym, n.to_string());
        }
    }
}
