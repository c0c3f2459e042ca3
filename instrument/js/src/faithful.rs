//! Source forms the minified emitter would print differently, where the difference changes
//! the program:
//!
//! - legacy octal-like numbers (`010`, `08`) and strings with legacy octal escapes (`'\01'`,
//!   `'\8'`) are printed from their value (`8`, `"8"`). That means the same in sloppy code, but
//!   sloppy-looking code can run as strict code: eval code from a strict caller inherits its
//!   strictness, and there these forms are SyntaxErrors. [`keep_raw`] makes the emitter print
//!   them exactly as written, so the output throws where the original throws;
//! - escaped keywords (`new.t\u0061rget`, `for (\u0061sync of x)`, `l\u0065t`): the emitter
//!   prints the identifier's value, a different token (a keyword where the source had a
//!   plain identifier, or a valid program where the source was none). The early-error walk
//!   (`early.rs`) finds them with [`keyword_like`]; the job refuses such code.
//!
//! The same walk reports whether legacy literals exist, so [`keep_raw`] only runs when they do.

use swc_core::atoms::Atom;
use swc_core::ecma::ast::*;
use swc_core::ecma::visit::{VisitMut, VisitMutWith};

/// True when the raw text of a number is a legacy octal or non-octal decimal integer
/// (`010`, `08`, `08.5`).
pub(crate) fn legacy_number(raw: &str) -> bool {
    let b = raw.as_bytes();
    b.len() >= 2 && b[0] == b'0' && b[1].is_ascii_digit()
}

/// True when the raw text of a string literal holds a legacy octal escape (`\1`…`\7`,
/// `\0` followed by a digit) or `\8`/`\9`.
pub(crate) fn legacy_string(raw: &str) -> bool {
    let b = raw.as_bytes();
    let mut i = 0;
    while i + 1 < b.len() {
        if b[i] == b'\\' {
            let c = b[i + 1];
            if matches!(c, b'1'..=b'9')
                || (c == b'0' && b.get(i + 2).is_some_and(u8::is_ascii_digit))
            {
                return true;
            }
            i += 2;
        } else {
            i += 1;
        }
    }
    false
}

/// Why a raw literal cannot be printed as written.
pub(crate) struct RawRefused;

/// Makes the emitter print legacy numbers and strings as written: they become identifier
/// nodes whose name is the raw text (identifiers are printed verbatim). Refuses a string that
/// would need escaping for the output options (non-ASCII under `ascii_only`, `<` inside a
/// `<script>`): escaping it would need a second, faithful string printer.
pub(crate) fn keep_raw(
    program: &mut Program,
    ascii_only: bool,
    inline_script: bool,
) -> Result<(), RawRefused> {
    let mut k = KeepRaw {
        ascii_only,
        inline_script,
        refused: false,
    };
    program.visit_mut_with(&mut k);
    if k.refused { Err(RawRefused) } else { Ok(()) }
}

struct KeepRaw {
    ascii_only: bool,
    inline_script: bool,
    refused: bool,
}

impl KeepRaw {
    /// The raw text of a legacy literal, when `lit` is one and can be printed as written.
    fn raw(&mut self, raw: Option<&Atom>, string: bool) -> Option<Atom> {
        let raw = raw?;
        let legacy = if string {
            legacy_string(raw)
        } else {
            legacy_number(raw)
        };
        if !legacy {
            return None;
        }
        if (self.ascii_only && !raw.is_ascii()) || (self.inline_script && raw.contains('<')) {
            self.refused = true;
            return None;
        }
        Some(raw.clone())
    }
}

impl VisitMut for KeepRaw {
    fn visit_mut_expr(&mut self, e: &mut Expr) {
        let raw = match e {
            Expr::Lit(Lit::Num(n)) => self.raw(n.raw.as_ref(), false).map(|r| (r, n.span)),
            Expr::Lit(Lit::Str(s)) => self.raw(s.raw.as_ref(), true).map(|r| (r, s.span)),
            _ => None,
        };
        match raw {
            Some((r, span)) => *e = Expr::Ident(Ident::new_no_ctxt(r, span)),
            None => e.visit_mut_children_with(self),
        }
    }

    fn visit_mut_prop_name(&mut self, p: &mut PropName) {
        let raw = match p {
            PropName::Num(n) => self.raw(n.raw.as_ref(), false).map(|r| (r, n.span)),
            PropName::Str(s) => self.raw(s.raw.as_ref(), true).map(|r| (r, s.span)),
            _ => None,
        };
        match raw {
            Some((r, span)) => *p = PropName::Ident(IdentName::new(r, span)),
            None => p.visit_mut_children_with(self),
        }
    }
}

/// Words whose escaped spelling the emitter would turn into the keyword itself: reserved
/// words, strict-mode reserved words and the contextual keywords of the grammar.
pub(crate) fn keyword_like(name: &str) -> bool {
    matches!(
        name,
        "await"
            | "break"
            | "case"
            | "catch"
            | "class"
            | "const"
            | "continue"
            | "debugger"
            | "default"
            | "delete"
            | "do"
            | "else"
            | "enum"
            | "export"
            | "extends"
            | "false"
            | "finally"
            | "for"
            | "function"
            | "if"
            | "import"
            | "in"
            | "instanceof"
            | "new"
            | "null"
            | "return"
            | "super"
            | "switch"
            | "this"
            | "throw"
            | "true"
            | "try"
            | "typeof"
            | "var"
            | "void"
            | "while"
            | "with"
            | "yield"
            | "let"
            | "static"
            | "implements"
            | "interface"
            | "package"
            | "private"
            | "protected"
            | "public"
            | "as"
            | "async"
            | "from"
            | "get"
            | "set"
            | "of"
            | "target"
            | "meta"
            | "accessor"
            | "using"
            | "source"
            | "defer"
            | "eval"
            | "arguments"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn legacy_forms() {
        assert!(legacy_number("010") && legacy_number("08") && legacy_number("08.5"));
        assert!(!legacy_number("0") && !legacy_number("0.5") && !legacy_number("0x1"));
        assert!(legacy_string("'\\8'") && legacy_string("'\\01'") && legacy_string("'\\1'"));
        assert!(!legacy_string("'\\0'") && !legacy_string("'\\\\1'") && !legacy_string("'a'"));
    }
}
