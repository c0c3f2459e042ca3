//! `with` bodies reach the runtime without a scope lookup (see [`alias_runtime`]).

use swc_core::common::{DUMMY_SP, SyntaxContext};
use swc_core::ecma::ast::*;
use swc_core::ecma::visit::{VisitMut, VisitMutWith};

use swc_core::atoms::Atom;

use crate::ast::{API, API_DOT, atom, ident};

/// Name of the block-scoped alias of the runtime object inside `with` bodies.
const WITH_ALIAS: &str = "__sh$a";

/// Makes a `with` body reach the runtime without looking `__shepherd` up: every identifier
/// inside `with (o)` is first looked up on `o`, and a Proxy's `has` trap (page code) would
/// see each lookup. The body references `__sh$a` instead, a `const` declared first in the
/// body (a block env inside the object env, so the lookup ends there), initialised from
/// `false.__shepherd`, the runtime's own property of `Boolean.prototype`: a property read on
/// a literal, not a scope lookup. A body that was not a block becomes one (same completion
/// value; `with` cannot have a declaration as its body).
pub(crate) fn alias_runtime(body: &mut Box<Stmt>) {
    struct Rename(bool);
    impl VisitMut for Rename {
        fn visit_mut_ident(&mut self, i: &mut Ident) {
            if &*i.sym == API {
                i.sym = atom(WITH_ALIAS);
                self.0 = true;
            } else if let Some(name) = i.sym.strip_prefix(API_DOT) {
                // A runtime callee the pass built (`ast::api_callee`).
                i.sym = Atom::from(format!("{WITH_ALIAS}.{name}"));
                self.0 = true;
            }
        }
    }
    let mut r = Rename(false);
    body.visit_mut_with(&mut r);
    if !r.0 {
        return;
    }
    let decl = Stmt::Decl(Decl::Var(Box::new(VarDecl {
        span: DUMMY_SP,
        ctxt: SyntaxContext::empty(),
        kind: VarDeclKind::Const,
        declare: false,
        decls: vec![VarDeclarator {
            span: DUMMY_SP,
            name: Pat::Ident(ident(WITH_ALIAS).into()),
            init: Some(Box::new(Expr::Member(MemberExpr {
                span: DUMMY_SP,
                obj: Box::new(Expr::Lit(Lit::Bool(Bool {
                    span: DUMMY_SP,
                    value: false,
                }))),
                prop: MemberProp::Ident(IdentName::new(atom(API), DUMMY_SP)),
            }))),
            definite: false,
        }],
    })));
    match &mut **body {
        Stmt::Block(b) => b.stmts.insert(0, decl),
        other => {
            let old = std::mem::replace(other, Stmt::Empty(EmptyStmt { span: DUMMY_SP }));
            *other = Stmt::Block(BlockStmt {
                span: DUMMY_SP,
                ctxt: SyntaxContext::empty(),
                stmts: vec![decl, old],
            });
        }
    }
}
