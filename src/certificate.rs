//! Certificates: the format is the kernel's ([`attncheck_kernel::certificate`]);
//! this module re-exports it so that `crate::certificate::…` keeps resolving, and adds
//! what only error messages need: the line of a field in the file ([`line_of_field`],
//! which left the kernel in issue #38, since soundness never needs it).

pub use attncheck_kernel::certificate::*;
use std::path::Path;

/// Parses a certificate from JSON text with the kernel's reader
/// ([`attncheck_kernel::certificate::parse`]); errors name the field and the line.
pub fn parse(path: &Path, text: &str) -> Result<Certificate, CertificateError> {
    attncheck_kernel::certificate::parse(path, text).map_err(|e| CertificateError {
        line: e.line.or_else(|| line_of_field(text, &e.field)),
        ..e
    })
}

/// The 1-based line at which the value of `field` (a path as errors name it:
/// `data.B.rows[3][1]`, `obligations[2].formula`, `precision`) begins in the JSON
/// `text`; when the path does not resolve to the end, the line of its deepest part
/// that does (`None` when not even the first does, or the text is not JSON).
pub fn line_of_field(text: &str, field: &str) -> Option<usize> {
    let mut segs = Vec::new();
    for part in field.split('.') {
        let (key, mut rest) = match part.find('[') {
            Some(i) => (&part[..i], &part[i..]),
            None => (part, ""),
        };
        if !key.is_empty() {
            segs.push(Seg::Key(key));
        }
        while let Some(r) = rest.strip_prefix('[') {
            let (i, after) = r.split_once(']')?;
            segs.push(Seg::Index(i.parse().ok()?));
            rest = after;
        }
    }
    let mut sc = Scan {
        b: text.as_bytes(),
        pos: 0,
        line: 1,
    };
    sc.ws();
    let mut found = None;
    sc.find(&segs, &mut found, true);
    found
}

enum Seg<'a> {
    Key(&'a str),
    Index(usize),
}

/// A minimal JSON scanner that counts lines (the text has already been parsed by
/// serde, so it only needs to find its way, not to validate).
struct Scan<'t> {
    b: &'t [u8],
    pos: usize,
    line: usize,
}

impl<'t> Scan<'t> {
    fn ws(&mut self) {
        while let Some(&c) = self.b.get(self.pos) {
            if !c.is_ascii_whitespace() {
                break;
            }
            if c == b'\n' {
                self.line += 1;
            }
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.ws();
        if self.b.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// A string's raw text (escapes kept), after its closing quote.
    fn string(&mut self) -> Option<&'t [u8]> {
        self.ws();
        if self.b.get(self.pos) != Some(&b'"') {
            return None;
        }
        let start = self.pos + 1;
        let mut i = start;
        loop {
            match self.b.get(i)? {
                b'\\' => i += 2,
                b'"' => break,
                _ => i += 1,
            }
        }
        self.pos = i + 1;
        let b: &'t [u8] = self.b;
        Some(&b[start..i])
    }

    fn skip_value(&mut self) -> Option<()> {
        self.ws();
        match *self.b.get(self.pos)? {
            b'"' => self.string().map(drop),
            open @ (b'{' | b'[') => {
                self.pos += 1;
                let close = if open == b'{' { b'}' } else { b']' };
                if self.eat(close) {
                    return Some(());
                }
                loop {
                    if open == b'{' {
                        self.string()?;
                        if !self.eat(b':') {
                            return None;
                        }
                    }
                    self.skip_value()?;
                    if self.eat(close) {
                        return Some(());
                    }
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            _ => {
                while let Some(&c) = self.b.get(self.pos) {
                    if matches!(c, b',' | b'}' | b']') || c.is_ascii_whitespace() {
                        break;
                    }
                    self.pos += 1;
                }
                Some(())
            }
        }
    }

    /// At the start of a value: records its line in `found` (unless it is the
    /// document itself) and descends along `segs`.
    fn find(&mut self, segs: &[Seg<'_>], found: &mut Option<usize>, top: bool) -> Option<()> {
        self.ws();
        if !top {
            *found = Some(self.line);
        }
        let (seg, rest) = segs.split_first()?;
        match (seg, *self.b.get(self.pos)?) {
            (Seg::Key(k), b'{') => {
                self.pos += 1;
                if self.eat(b'}') {
                    return None;
                }
                loop {
                    let key = self.string()?;
                    if !self.eat(b':') {
                        return None;
                    }
                    if key == k.as_bytes() {
                        return self.find(rest, found, false);
                    }
                    self.skip_value()?;
                    if !self.eat(b',') {
                        return None;
                    }
                }
            }
            (Seg::Index(i), b'[') => {
                self.pos += 1;
                if self.eat(b']') {
                    return None;
                }
                for _ in 0..*i {
                    self.skip_value()?;
                    if !self.eat(b',') {
                        return None;
                    }
                }
                self.find(rest, found, false)
            }
            _ => None,
        }
    }
}
