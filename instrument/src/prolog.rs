//! Finds where the runtime bootstrap goes by following the HTML tokenizer over the document's
//! first tokens, so injection needs no element handler on every tag (that would make lol_html
//! lex every tag of the page, which repair mode does not otherwise need).
//!
//! Rule: after the doctype and comments, skipping a first `<html>` start tag: right after a
//! `<head>` start tag, or right before any other start tag. Positions are absolute byte offsets
//! of the stream given to [`Prolog::scan`]. Works on any ASCII-compatible encoding: `<` and `>`
//! never occur inside multi-byte characters of web encodings.

/// Tokenizer states, as in the HTML spec (only those reachable before the first element).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum S {
    Data,
    TagOpen,
    EndTagOpen,
    TagName,
    BeforeAttrName,
    AttrName,
    AfterAttrName,
    BeforeAttrValue,
    ValueDq,
    ValueSq,
    ValueUnq,
    AfterValueQuoted,
    SelfClosing,
    MarkupDecl,
    CommentStart,
    CommentStartDash,
    Comment,
    CommentEndDash,
    CommentEnd,
    CommentEndBang,
    Doctype,
    BogusComment,
}

/// What a scan found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Scan {
    /// No decision yet; bytes before `hold_from` (absolute) may be forwarded.
    Pending { hold_from: u64 },
    /// Inject at this absolute offset; scanning is over.
    InjectAt(u64),
}

/// Incremental scanner state.
#[derive(Debug)]
pub(crate) struct Prolog {
    state: S,
    pos: u64,
    tag_start: u64,
    end_tag: bool,
    name: [u8; 4],
    name_len: usize,
    /// The current start tag is `<head>`: inject after its `>`.
    in_head_tag: bool,
    seen_html: bool,
    decl: [u8; 7],
    decl_len: usize,
}

fn ws(b: u8) -> bool {
    matches!(b, b'\t' | b'\n' | 0x0C | b' ')
}

impl Prolog {
    pub(crate) fn new() -> Self {
        Prolog {
            state: S::Data,
            pos: 0,
            tag_start: 0,
            end_tag: false,
            name: [0; 4],
            name_len: 0,
            in_head_tag: false,
            seen_html: false,
            decl: [0; 7],
            decl_len: 0,
        }
    }

    /// Scans the next bytes of the stream.
    pub(crate) fn scan(&mut self, chunk: &[u8]) -> Scan {
        for &b in chunk {
            if let Some(at) = self.step(b) {
                return Scan::InjectAt(at);
            }
            self.pos += 1;
        }
        let holding =
            matches!(self.state, S::TagOpen) || (self.state == S::TagName && !self.end_tag);
        Scan::Pending {
            hold_from: if holding { self.tag_start } else { self.pos },
        }
    }

    /// Called at the end of a start tag's name (or when it can no longer be html/head).
    fn tag_named(&mut self) -> Option<u64> {
        if self.end_tag {
            return None;
        }
        let name = &self.name[..self.name_len];
        if name == b"html" && !self.seen_html {
            self.seen_html = true;
            None
        } else if name == b"head" {
            self.in_head_tag = true;
            None
        } else {
            Some(self.tag_start)
        }
    }

    fn tag_end(&mut self) -> Option<u64> {
        self.state = S::Data;
        self.in_head_tag.then_some(self.pos + 1)
    }

    fn step(&mut self, b: u8) -> Option<u64> {
        match self.state {
            S::Data => {
                if b == b'<' {
                    self.state = S::TagOpen;
                    self.tag_start = self.pos;
                }
            }
            S::TagOpen => {
                if b.is_ascii_alphabetic() {
                    self.end_tag = false;
                    self.name_len = 0;
                    return self.name_byte(b);
                }
                match b {
                    b'/' => self.state = S::EndTagOpen,
                    b'!' => {
                        self.decl_len = 0;
                        self.state = S::MarkupDecl;
                    }
                    b'?' => self.state = S::BogusComment,
                    b'<' => self.tag_start = self.pos,
                    _ => self.state = S::Data,
                }
            }
            S::EndTagOpen => {
                if b.is_ascii_alphabetic() {
                    self.end_tag = true;
                    self.state = S::TagName;
                } else if b == b'>' {
                    self.state = S::Data;
                } else {
                    self.state = S::BogusComment;
                }
            }
            S::TagName => match b {
                b if ws(b) => {
                    self.state = S::BeforeAttrName;
                    return self.tag_named();
                }
                b'/' => {
                    self.state = S::SelfClosing;
                    return self.tag_named();
                }
                b'>' => {
                    let at = self.tag_named();
                    return at.or_else(|| self.tag_end());
                }
                b => {
                    if !self.end_tag {
                        return self.name_byte(b);
                    }
                }
            },
            S::BeforeAttrName => match b {
                b if ws(b) => {}
                b'/' => self.state = S::SelfClosing,
                b'>' => return self.tag_end(),
                _ => self.state = S::AttrName,
            },
            S::AttrName => match b {
                b if ws(b) => self.state = S::AfterAttrName,
                b'/' => self.state = S::SelfClosing,
                b'=' => self.state = S::BeforeAttrValue,
                b'>' => return self.tag_end(),
                _ => {}
            },
            S::AfterAttrName => match b {
                b if ws(b) => {}
                b'/' => self.state = S::SelfClosing,
                b'=' => self.state = S::BeforeAttrValue,
                b'>' => return self.tag_end(),
                _ => self.state = S::AttrName,
            },
            S::BeforeAttrValue => match b {
                b if ws(b) => {}
                b'"' => self.state = S::ValueDq,
                b'\'' => self.state = S::ValueSq,
                b'>' => return self.tag_end(),
                _ => self.state = S::ValueUnq,
            },
            S::ValueDq => {
                if b == b'"' {
                    self.state = S::AfterValueQuoted;
                }
            }
            S::ValueSq => {
                if b == b'\'' {
                    self.state = S::AfterValueQuoted;
                }
            }
            S::ValueUnq => match b {
                b if ws(b) => self.state = S::BeforeAttrName,
                b'>' => return self.tag_end(),
                _ => {}
            },
            S::AfterValueQuoted => match b {
                b if ws(b) => self.state = S::BeforeAttrName,
                b'/' => self.state = S::SelfClosing,
                b'>' => return self.tag_end(),
                _ => self.state = S::AttrName,
            },
            S::SelfClosing => match b {
                b'>' => return self.tag_end(),
                b if ws(b) => self.state = S::BeforeAttrName,
                b'/' => {}
                _ => self.state = S::AttrName,
            },
            S::MarkupDecl => {
                self.decl[self.decl_len] = b.to_ascii_lowercase();
                self.decl_len += 1;
                let d = &self.decl[..self.decl_len];
                if d == b"--" {
                    self.state = S::CommentStart;
                } else if d == b"doctype" {
                    self.state = S::Doctype;
                } else if !(b"--".starts_with(d) || b"doctype".starts_with(d)) {
                    self.state = if b == b'>' { S::Data } else { S::BogusComment };
                }
            }
            S::CommentStart => match b {
                b'-' => self.state = S::CommentStartDash,
                b'>' => self.state = S::Data,
                _ => self.state = S::Comment,
            },
            S::CommentStartDash => match b {
                b'-' => self.state = S::CommentEnd,
                b'>' => self.state = S::Data,
                _ => self.state = S::Comment,
            },
            S::Comment => {
                if b == b'-' {
                    self.state = S::CommentEndDash;
                }
            }
            S::CommentEndDash => {
                self.state = if b == b'-' { S::CommentEnd } else { S::Comment };
            }
            S::CommentEnd => match b {
                b'>' => self.state = S::Data,
                b'!' => self.state = S::CommentEndBang,
                b'-' => {}
                _ => self.state = S::Comment,
            },
            S::CommentEndBang => match b {
                b'-' => self.state = S::CommentEndDash,
                b'>' => self.state = S::Data,
                _ => self.state = S::Comment,
            },
            S::Doctype | S::BogusComment => {
                if b == b'>' {
                    self.state = S::Data;
                }
            }
        }
        None
    }

    /// One byte of a start tag's name: decides as soon as it can no longer be `html`/`head`.
    fn name_byte(&mut self, b: u8) -> Option<u64> {
        self.state = S::TagName;
        let b = b.to_ascii_lowercase();
        if self.name_len < 4 {
            self.name[self.name_len] = b;
            self.name_len += 1;
            let n = &self.name[..self.name_len];
            if b"html".starts_with(n) || b"head".starts_with(n) {
                return None;
            }
        }
        // Longer than four letters, or not a prefix of either: some other element.
        self.name_len = 0;
        Some(self.tag_start)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(doc: &str) -> Option<u64> {
        let mut p = Prolog::new();
        match p.scan(doc.as_bytes()) {
            Scan::InjectAt(a) => Some(a),
            Scan::Pending { .. } => None,
        }
    }

    #[test]
    fn injection_points() {
        assert_eq!(at("<!DOCTYPE html><html><head><meta>"), Some(27));
        assert_eq!(at("<!doctype html><p>"), Some(15));
        assert_eq!(at("<!-- <p> --><!-->x<!--->y<p>"), Some(25));
        assert_eq!(at("<!--a--!><b>"), Some(9));
        assert_eq!(at("<?xml x='<p>'?><p>"), Some(15));
        assert_eq!(at("<html lang='<p>'>\n<body>"), Some(18));
        assert_eq!(at("<html><html><p>"), Some(6));
        assert_eq!(at("<head data-x=\"a>b\"><p>"), Some(19));
        assert_eq!(at("</p><hr>"), Some(4));
        assert_eq!(at("</x a='>'><hr>"), Some(10));
        assert_eq!(at("a < b <hea>"), Some(6));
        assert_eq!(at("<HEADER>"), Some(0));
        assert_eq!(at("<h1>"), Some(0));
        assert_eq!(at("<!DOCTYPE html PUBLIC \"a>\"><p>"), Some(27));
        assert_eq!(at("<!><p>"), Some(3));
        assert_eq!(at("text only"), None);
        assert_eq!(at("<!-- unclosed <p>"), None);
    }

    #[test]
    fn holds_back_an_undecided_tag() {
        let mut p = Prolog::new();
        assert_eq!(
            p.scan(b"<!doctype html><he"),
            Scan::Pending { hold_from: 15 }
        );
        assert_eq!(p.scan(b"ad>"), Scan::InjectAt(21));
        let mut p = Prolog::new();
        assert_eq!(p.scan(b"<ht"), Scan::Pending { hold_from: 0 });
        assert_eq!(p.scan(b"ml>x<h"), Scan::Pending { hold_from: 7 });
        assert_eq!(p.scan(b"1>"), Scan::InjectAt(7));
    }
}
