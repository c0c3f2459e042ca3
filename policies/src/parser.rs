//! Parses the lines of a policy file into its syntax tree. Every error names its line and
//! column; a line with an error is skipped and parsing goes on, so one run reports them all.
//!
//! ```text
//! line     := option | scope | let | template | rule
//! option   := "option" NAME (on | off | DURATION)
//! scope    := "scope" STRING {"," STRING}
//! let      := "let" NAME "=" pred
//! template := "template" NAME "(" [NAME {"," NAME}] ")" ":"     (then indented rules)
//! rule     := ("postpone" | "discard" | "dispatch") pred tail
//!           | "on" ("begin" | "fork") pred tail                 (an observer: dispatch)
//! tail     := ["as" NAME] ["until" expiry {"or" expiry}] ["once"] ["then" call {"," call}]
//! pred     := term {"," term}
//! term     := (NAME | STRING) {["not"] filter}
//! filter   := "on" STRING | "url" STRING | "state" NUM | "from" term | "delay" CMP DURATION
//!           | "blocking" | "async" | "defer" | "inserted"
//! expiry   := "parsed" | "loaded" | "never" | "arrived" "(" pred ")" | "after" DURATION | "js" STRING
//! call     := NAME "(" [NAME {"," NAME}] ")"
//! ```

use crate::ast::*;
use crate::diag::{Diagnostic, Span};
use crate::lexer::{Line, Tok, Token, lex};

/// Parses `source`; diagnostics go to `diags` (the tree holds what parsed).
pub fn parse(source: &str, diags: &mut Vec<Diagnostic>) -> File {
    let lines = lex(source, diags);
    let mut file = File::default();
    let mut i = 0;
    while i < lines.len() {
        let line = &lines[i];
        i += 1;
        if line.indent > 0 {
            diags.push(Diagnostic::error(
                line.tokens[0].span,
                "unexpected indentation: only the rules of a template are indented",
            ));
            continue;
        }
        let mut p = Parser::new(line);
        let result = match p.peek_name() {
            Some("option") => p.option().map(|o| file.options.push(o)),
            Some("scope") => p.scope().map(|s| file.scopes.extend(s)),
            Some("let") => p.let_().map(|l| file.lets.push(l)),
            Some("template") => match p.template_head() {
                Ok((name, params)) => {
                    let mut rules = Vec::new();
                    while i < lines.len() && lines[i].indent > 0 {
                        let mut rp = Parser::new(&lines[i]);
                        match rp.rule() {
                            Ok(r) => rules.push(r),
                            Err(d) => diags.push(d),
                        }
                        i += 1;
                    }
                    if rules.is_empty() {
                        diags.push(Diagnostic::error(
                            name.span,
                            format!(
                                "template `{}` has no rules (indent them under its head)",
                                name.name
                            ),
                        ));
                    }
                    file.templates.push(Template {
                        name,
                        params,
                        rules,
                    });
                    Ok(())
                }
                Err(d) => {
                    // Skip the body too: its rules would be reported as unexpected indentation.
                    while i < lines.len() && lines[i].indent > 0 {
                        i += 1;
                    }
                    Err(d)
                }
            },
            _ => p.rule().map(|r| file.rules.push(r)),
        };
        if let Err(d) = result {
            diags.push(d);
        }
    }
    file
}

const ACTION_WORDS: [&str; 3] = ["postpone", "discard", "dispatch"];

/// Words that end a term (they start the next part of a rule).
const TAIL_WORDS: [&str; 5] = ["as", "until", "once", "then", "or"];

struct Parser<'a> {
    line: &'a Line,
    pos: usize,
}

type R<T> = Result<T, Diagnostic>;

impl<'a> Parser<'a> {
    fn new(line: &'a Line) -> Self {
        Parser { line, pos: 0 }
    }

    fn peek(&self) -> Option<&'a Token> {
        self.line.tokens.get(self.pos)
    }

    fn peek_name(&self) -> Option<&'a str> {
        match self.peek() {
            Some(Token {
                tok: Tok::Name(n), ..
            }) => Some(n.as_str()),
            _ => None,
        }
    }

    fn here(&self) -> Span {
        self.peek().map_or(self.line.end, |t| t.span)
    }

    fn unexpected(&self, wanted: &str) -> Diagnostic {
        match self.peek() {
            Some(t) => Diagnostic::error(
                t.span,
                format!("expected {wanted}, found {}", t.tok.describe()),
            ),
            None => Diagnostic::error(
                self.line.end,
                format!("expected {wanted} before the end of the line"),
            ),
        }
    }

    fn bump(&mut self) -> Option<&'a Token> {
        let t = self.line.tokens.get(self.pos);
        if t.is_some() {
            self.pos += 1;
        }
        t
    }

    fn eat_name(&mut self, word: &str) -> bool {
        if self.peek_name() == Some(word) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn eat_punct(&mut self, p: &str) -> bool {
        if matches!(self.peek(), Some(Token { tok: Tok::Punct(q), .. }) if *q == p) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect_punct(&mut self, p: &str) -> R<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.unexpected(&format!("`{p}`")))
        }
    }

    fn ident(&mut self, what: &str) -> R<Ident> {
        match self.peek() {
            Some(Token {
                tok: Tok::Name(n),
                span,
            }) => {
                self.pos += 1;
                Ok(Ident {
                    name: n.clone(),
                    span: *span,
                })
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn string(&mut self, what: &str) -> R<(String, Span)> {
        match self.peek() {
            Some(Token {
                tok: Tok::Str(s),
                span,
            }) => {
                self.pos += 1;
                Ok((s.clone(), *span))
            }
            _ => Err(self.unexpected(what)),
        }
    }

    fn duration(&mut self) -> R<u64> {
        match self.peek() {
            Some(Token {
                tok: Tok::Duration(ms),
                ..
            }) => {
                self.pos += 1;
                Ok(*ms)
            }
            Some(Token {
                tok: Tok::Num(_),
                span,
            }) => Err(Diagnostic::error(
                *span,
                "a duration needs a unit: 500ms, 10s or 2m",
            )),
            _ => Err(self.unexpected("a duration such as 500ms or 10s")),
        }
    }

    fn end(&self) -> R<()> {
        match self.peek() {
            None => Ok(()),
            Some(_) => Err(self.unexpected("the end of the line")),
        }
    }

    fn option(&mut self) -> R<OptionLine> {
        self.bump();
        let name = self.ident("an option name (spinner, max-delay)")?;
        let value = match self.peek() {
            Some(Token {
                tok: Tok::Name(n), ..
            }) if n == "on" => OptionValue::Switch(true),
            Some(Token {
                tok: Tok::Name(n), ..
            }) if n == "off" => OptionValue::Switch(false),
            Some(Token {
                tok: Tok::Duration(ms),
                ..
            }) => OptionValue::Duration(*ms),
            _ => return Err(self.unexpected("`on`, `off` or a duration")),
        };
        self.pos += 1;
        self.end()?;
        Ok(OptionLine { name, value })
    }

    fn scope(&mut self) -> R<Vec<(String, Span)>> {
        self.bump();
        let mut out =
            vec![self.string("a quoted URL pattern such as \"https://staging.example/*\"")?];
        while self.eat_punct(",") {
            out.push(self.string("a quoted URL pattern")?);
        }
        self.end()?;
        Ok(out)
    }

    fn let_(&mut self) -> R<Let> {
        self.bump();
        let name = self.ident("a name")?;
        self.expect_punct("=")?;
        let pred = self.pred()?;
        self.end()?;
        Ok(Let { name, pred })
    }

    fn template_head(&mut self) -> R<(Ident, Vec<Ident>)> {
        self.bump();
        let name = self.ident("a template name")?;
        self.expect_punct("(")?;
        let mut params = Vec::new();
        if !self.eat_punct(")") {
            loop {
                params.push(self.ident("a parameter name")?);
                if self.eat_punct(")") {
                    break;
                }
                self.expect_punct(",")?;
            }
        }
        self.expect_punct(":")?;
        self.end()?;
        Ok((name, params))
    }

    fn rule(&mut self) -> R<Rule> {
        let span = self.here();
        let first = self.ident("a rule (postpone, discard, dispatch or on)")?;
        let (op, action, observer) = match first.name.as_str() {
            "on" => {
                let which = self.ident("`begin` or `fork` after `on`")?;
                match which.name.as_str() {
                    "begin" => (Op::Begin, Action::Dispatch, true),
                    "fork" => (Op::Fork, Action::Dispatch, true),
                    _ => {
                        return Err(Diagnostic::error(
                            which.span,
                            format!(
                                "expected `begin` or `fork` after `on`, found `{}`",
                                which.name
                            ),
                        ));
                    }
                }
            }
            "postpone" => (Op::Begin, Action::Postpone, false),
            "discard" => (Op::Begin, Action::Discard, false),
            "dispatch" => (Op::Begin, Action::Dispatch, false),
            other => {
                let hint = crate::diag::suggest(
                    other,
                    ACTION_WORDS
                        .into_iter()
                        .chain(["on", "option", "scope", "let", "template"]),
                )
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
                return Err(Diagnostic::error(
                    first.span,
                    format!(
                        "a line starts with postpone, discard, dispatch, on, option, scope, let or template, not `{other}`{hint}"
                    ),
                ));
            }
        };
        let pred = self.pred()?;
        let bind = if self.eat_name("as") {
            Some(self.ident("a name for the event")?)
        } else {
            None
        };
        let mut until = Vec::new();
        if self.eat_name("until") {
            until.push(self.expiry()?);
            while self.eat_name("or") {
                until.push(self.expiry()?);
            }
        }
        let once = self.eat_name("once");
        let mut then = Vec::new();
        if self.eat_name("then") {
            then.push(self.call()?);
            while self.eat_punct(",") {
                then.push(self.call()?);
            }
        }
        if self.peek().is_some() {
            return Err(self.unexpected("`as`, `until`, `once`, `then` or the end of the line"));
        }
        Ok(Rule {
            span,
            text: self.line.text.clone(),
            op,
            action,
            pred,
            bind,
            until,
            once,
            then,
            observer,
        })
    }

    fn pred(&mut self) -> R<Pred> {
        let span = self.here();
        let mut terms = vec![self.term()?];
        while self.eat_punct(",") {
            terms.push(self.term()?);
        }
        Ok(Pred { terms, span })
    }

    fn term(&mut self) -> R<Term> {
        let span = self.here();
        let base = match self.peek() {
            Some(Token {
                tok: Tok::Name(n),
                span,
            }) if !TAIL_WORDS.contains(&n.as_str()) => {
                self.pos += 1;
                Base::Name(Ident {
                    name: n.clone(),
                    span: *span,
                })
            }
            Some(Token {
                tok: Tok::Str(s),
                span,
            }) => {
                self.pos += 1;
                Base::Custom(s.clone(), *span)
            }
            _ => return Err(self.unexpected("an event kind or type (user, click, timer, xhr, …)")),
        };
        let mut filters = Vec::new();
        loop {
            let fspan = self.here();
            let negated = self.eat_name("not");
            let kind = match self.peek_name() {
                Some("on") => {
                    self.pos += 1;
                    FilterKind::On(self.string("a quoted CSS selector after `on`")?.0)
                }
                Some("url") => {
                    self.pos += 1;
                    FilterKind::Url(self.string("a quoted URL pattern after `url`")?.0)
                }
                Some("state") => {
                    self.pos += 1;
                    match self.bump() {
                        Some(Token {
                            tok: Tok::Num(n), ..
                        }) => FilterKind::State(*n),
                        _ => {
                            self.pos = self.pos.saturating_sub(1);
                            return Err(self.unexpected("a readyState number (0-4) after `state`"));
                        }
                    }
                }
                Some("from") => {
                    self.pos += 1;
                    FilterKind::From(Box::new(self.term()?))
                }
                Some("delay") => {
                    self.pos += 1;
                    let cmp = match self.peek() {
                        Some(Token {
                            tok: Tok::Punct(p), ..
                        }) => match *p {
                            "<" => Cmp::Lt,
                            "<=" => Cmp::Le,
                            ">" => Cmp::Gt,
                            ">=" => Cmp::Ge,
                            "=" => Cmp::Eq,
                            _ => {
                                return Err(
                                    self.unexpected("a comparison (<, <=, >, >=, =) after `delay`")
                                );
                            }
                        },
                        _ => {
                            return Err(
                                self.unexpected("a comparison (<, <=, >, >=, =) after `delay`")
                            );
                        }
                    };
                    self.pos += 1;
                    FilterKind::Delay(cmp, self.duration()?)
                }
                Some(w) if crate::kinds::Loading::parse(w).is_some() => {
                    self.pos += 1;
                    match crate::kinds::Loading::parse(w) {
                        Some(l) => FilterKind::Loading(l),
                        None => break,
                    }
                }
                _ => {
                    if negated {
                        return Err(self.unexpected(
                            "a filter (on, url, state, from, delay, blocking, async, defer, inserted) after `not`",
                        ));
                    }
                    break;
                }
            };
            filters.push(Filter {
                negated,
                kind,
                span: fspan,
            });
        }
        Ok(Term {
            base,
            filters,
            span,
        })
    }

    fn expiry(&mut self) -> R<Expiry> {
        let word =
            self.ident("an expiration (parsed, loaded, arrived(…), after …, js \"…\", never)")?;
        Ok(match word.name.as_str() {
            "parsed" => Expiry::Parsed(word.span),
            "loaded" => Expiry::Loaded(word.span),
            "never" => Expiry::Never(word.span),
            "arrived" => {
                self.expect_punct("(")?;
                let p = self.pred()?;
                self.expect_punct(")")?;
                Expiry::Arrived(p)
            }
            "after" => Expiry::After(self.duration()?, word.span),
            "js" => {
                let (s, span) = self.string("a quoted JavaScript expression after `js`")?;
                Expiry::Js(s, span)
            }
            other => {
                let hint = crate::diag::suggest(
                    other,
                    ["parsed", "loaded", "arrived", "after", "js", "never"].into_iter(),
                )
                .map(|s| format!(" (did you mean `{s}`?)"))
                .unwrap_or_default();
                return Err(Diagnostic::error(
                    word.span,
                    format!(
                        "unknown expiration `{other}`{hint}: use parsed, loaded, arrived(…), after DURATION, js \"…\" or never"
                    ),
                ));
            }
        })
    }

    fn call(&mut self) -> R<Call> {
        let name = self.ident("a template call such as waitfor(v)")?;
        self.expect_punct("(")?;
        let mut args = Vec::new();
        if !self.eat_punct(")") {
            loop {
                args.push(self.ident("an event name")?);
                if self.eat_punct(")") {
                    break;
                }
                self.expect_punct(",")?;
            }
        }
        Ok(Call { name, args })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(src: &str) -> File {
        let mut d = Vec::new();
        let f = parse(src, &mut d);
        assert!(d.is_empty(), "{d:?}");
        f
    }

    #[test]
    fn parses_the_paper_policies() {
        let f = ok(
            "postpone user until parsed\non fork async as v until parsed then waitfor(v), waitrec(v)\n",
        );
        assert_eq!(f.rules.len(), 2);
        let r = &f.rules[1];
        assert_eq!(
            (r.op, r.action, r.observer),
            (Op::Fork, Action::Dispatch, true)
        );
        assert_eq!(r.bind.as_ref().map(|b| b.name.as_str()), Some("v"));
        assert_eq!(r.then.len(), 2);
        assert_eq!(r.then[1].name.name, "waitrec");
    }

    #[test]
    fn filters_bind_to_their_term() {
        let f = ok("postpone timer, load on \"iframe, img\" until parsed");
        let p = &f.rules[0].pred;
        assert_eq!(p.terms.len(), 2);
        assert!(p.terms[0].filters.is_empty());
        assert_eq!(
            p.terms[1].filters[0].kind,
            FilterKind::On("iframe, img".into())
        );
    }

    #[test]
    fn templates_take_indented_rules() {
        let f = ok(
            "template ordernext(u):\n  on fork async as w until arrived(u) once then order(u, w)\n\npostpone user\n",
        );
        assert_eq!(f.templates.len(), 1);
        assert_eq!(f.templates[0].rules.len(), 1);
        assert!(f.templates[0].rules[0].once);
        assert_eq!(f.rules.len(), 1);
    }

    #[test]
    fn errors_carry_line_and_column_and_parsing_goes_on() {
        let mut d = Vec::new();
        parse(
            "postpone user untl parsed\nwait user\n  discard user\npostpone timer delay < 10\n",
            &mut d,
        );
        let at: Vec<(u32, u32)> = d.iter().map(|x| (x.span.line, x.span.col)).collect();
        assert_eq!(at, vec![(1, 15), (2, 1), (3, 3), (4, 24)], "{d:?}");
        assert!(d[1].message.contains("`wait`"), "{}", d[1].message);
    }
}
