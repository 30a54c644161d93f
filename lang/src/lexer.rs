//! The hand-written lexer that feeds the lalrpop parser.
//!
//! Hand-written rather than lalrpop's regex lexer so that every lexical error (an unterminated block
//! comment, a stray byte, an integer literal too large for 64 bits) gets its own span and message
//! instead of a generic "invalid token".

use crate::span::Span;
use std::fmt;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Int(i64),
    Float(f64),
    Str(String),
    // Keywords.
    Kernel,
    Fn,
    Host,
    Let,
    If,
    Else,
    For,
    In,
    Return,
    While,
    Break,
    Continue,
    Const,
    Import,
    Launch,
    Mut,
    Tune,
    PlusAssign,
    MinusAssign,
    StarAssign,
    SlashAssign,
    True,
    False,
    // Punctuation.
    LParen,
    RParen,
    LBrace,
    RBrace,
    LBracket,
    RBracket,
    LAngle,
    RAngle,
    Comma,
    Colon,
    Semi,
    Dot,
    DotDot,
    Arrow,
    Question,
    Underscore,
    Assign,
    Plus,
    Minus,
    Star,
    Slash,
    Percent,
    Bang,
    Amp,
    Pipe,
    Caret,
    AmpAmp,
    PipePipe,
    EqEq,
    NotEq,
    Le,
    Ge,
    Shl,
    Shr,
}

impl fmt::Display for Tok {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let s = match self {
            Tok::Ident(name) => return write!(f, "identifier `{name}`"),
            Tok::Int(v) => return write!(f, "integer `{v}`"),
            Tok::Float(v) => return write!(f, "number `{v}`"),
            Tok::Str(_) => "string literal",
            Tok::Kernel => "`kernel`",
            Tok::Fn => "`fn`",
            Tok::Host => "`host`",
            Tok::Let => "`let`",
            Tok::If => "`if`",
            Tok::Else => "`else`",
            Tok::For => "`for`",
            Tok::In => "`in`",
            Tok::Return => "`return`",
            Tok::While => "`while`",
            Tok::Break => "`break`",
            Tok::Continue => "`continue`",
            Tok::Const => "`const`",
            Tok::Import => "`import`",
            Tok::Launch => "`launch`",
            Tok::Tune => "`tune`",
            Tok::Mut => "`mut`",
            Tok::PlusAssign => "`+=`",
            Tok::MinusAssign => "`-=`",
            Tok::StarAssign => "`*=`",
            Tok::SlashAssign => "`/=`",
            Tok::True => "`true`",
            Tok::False => "`false`",
            Tok::LParen => "`(`",
            Tok::RParen => "`)`",
            Tok::LBrace => "`{`",
            Tok::RBrace => "`}`",
            Tok::LBracket => "`[`",
            Tok::RBracket => "`]`",
            Tok::LAngle => "`<`",
            Tok::RAngle => "`>`",
            Tok::Comma => "`,`",
            Tok::Colon => "`:`",
            Tok::Semi => "`;`",
            Tok::Dot => "`.`",
            Tok::DotDot => "`..`",
            Tok::Arrow => "`->`",
            Tok::Question => "`?`",
            Tok::Underscore => "`_`",
            Tok::Assign => "`=`",
            Tok::Plus => "`+`",
            Tok::Minus => "`-`",
            Tok::Star => "`*`",
            Tok::Slash => "`/`",
            Tok::Percent => "`%`",
            Tok::Bang => "`!`",
            Tok::Amp => "`&`",
            Tok::Pipe => "`|`",
            Tok::Caret => "`^`",
            Tok::AmpAmp => "`&&`",
            Tok::PipePipe => "`||`",
            Tok::EqEq => "`==`",
            Tok::NotEq => "`!=`",
            Tok::Le => "`<=`",
            Tok::Ge => "`>=`",
            Tok::Shl => "`<<`",
            Tok::Shr => "`>>`",
        };
        f.write_str(s)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct LexError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

pub type Spanned = (usize, Tok, usize);

/// Iterator over `(start, token, end)` triples, the shape lalrpop's external lexers produce.
pub struct Lexer<'s> {
    src: &'s str,
    pos: usize,
}

impl<'s> Lexer<'s> {
    pub fn new(src: &'s str) -> Self {
        Lexer { src, pos: 0 }
    }

    fn peek_byte(&self, offset: usize) -> Option<u8> {
        self.src.as_bytes().get(self.pos + offset).copied()
    }

    fn error(&self, start: usize, end: usize, message: impl Into<String>, help: Option<&str>) -> LexError {
        LexError { span: Span::new(start, end), message: message.into(), help: help.map(str::to_string) }
    }

    /// Skips whitespace and comments; block comments nest, as in Rust.
    fn skip_trivia(&mut self) -> Result<(), LexError> {
        loop {
            match (self.peek_byte(0), self.peek_byte(1)) {
                (Some(b), _) if b.is_ascii_whitespace() => self.pos += 1,
                (Some(b'/'), Some(b'/')) => {
                    while let Some(b) = self.peek_byte(0) {
                        if b == b'\n' {
                            break;
                        }
                        self.pos += 1;
                    }
                }
                (Some(b'/'), Some(b'*')) => {
                    let start = self.pos;
                    self.pos += 2;
                    let mut depth = 1usize;
                    while depth > 0 {
                        match (self.peek_byte(0), self.peek_byte(1)) {
                            (None, _) => {
                                return Err(self.error(
                                    start,
                                    start + 2,
                                    "unterminated block comment",
                                    Some("close the comment with `*/`"),
                                ))
                            }
                            (Some(b'*'), Some(b'/')) => {
                                depth -= 1;
                                self.pos += 2;
                            }
                            (Some(b'/'), Some(b'*')) => {
                                depth += 1;
                                self.pos += 2;
                            }
                            _ => self.pos += 1,
                        }
                    }
                }
                _ => return Ok(()),
            }
        }
    }

    fn number(&mut self) -> Result<Spanned, LexError> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let is_hex = bytes[start] == b'0' && matches!(self.peek_byte(1), Some(b'x' | b'X'));
        if is_hex {
            self.pos += 2;
            while self.peek_byte(0).is_some_and(|b| b.is_ascii_hexdigit() || b == b'_') {
                self.pos += 1;
            }
            let digits: String = self.src[start + 2..self.pos].chars().filter(|c| *c != '_').collect();
            return match i64::from_str_radix(&digits, 16) {
                Ok(v) => Ok((start, Tok::Int(v), self.pos)),
                Err(_) if digits.is_empty() => Err(self.error(
                    start,
                    self.pos,
                    "hexadecimal literal without digits",
                    Some("write digits after `0x`, e.g. `0xFF`"),
                )),
                Err(_) => Err(self.error(
                    start,
                    self.pos,
                    "hexadecimal literal too large",
                    Some("integers must fit in a signed 64-bit integer (at most 0x7FFF_FFFF_FFFF_FFFF)"),
                )),
            };
        }
        while self.peek_byte(0).is_some_and(|b| b.is_ascii_digit() || b == b'_') {
            self.pos += 1;
        }
        let mut is_float = false;
        // `1..n` is a range, not the float `1.`: only a digit after the dot makes a float.
        if self.peek_byte(0) == Some(b'.') && self.peek_byte(1).is_some_and(|b| b.is_ascii_digit()) {
            is_float = true;
            self.pos += 1;
            while self.peek_byte(0).is_some_and(|b| b.is_ascii_digit() || b == b'_') {
                self.pos += 1;
            }
        }
        if matches!(self.peek_byte(0), Some(b'e' | b'E'))
            && (self.peek_byte(1).is_some_and(|b| b.is_ascii_digit())
                || (matches!(self.peek_byte(1), Some(b'+' | b'-'))
                    && self.peek_byte(2).is_some_and(|b| b.is_ascii_digit())))
        {
            is_float = true;
            self.pos += 2;
            while self.peek_byte(0).is_some_and(|b| b.is_ascii_digit()) {
                self.pos += 1;
            }
        }
        let text: String = self.src[start..self.pos].chars().filter(|c| *c != '_').collect();
        if is_float {
            match text.parse::<f64>() {
                Ok(v) if v.is_finite() => Ok((start, Tok::Float(v), self.pos)),
                _ => Err(self.error(start, self.pos, "floating-point literal out of range", None)),
            }
        } else {
            match text.parse::<i64>() {
                Ok(v) => Ok((start, Tok::Int(v), self.pos)),
                Err(_) => Err(self.error(
                    start,
                    self.pos,
                    "integer literal too large",
                    Some("integer literals must fit in a signed 64-bit integer (at most 9223372036854775807)"),
                )),
            }
        }
    }

    fn string(&mut self) -> Result<Spanned, LexError> {
        let start = self.pos;
        self.pos += 1;
        let mut value = String::new();
        loop {
            let Some(c) = self.src[self.pos..].chars().next() else {
                return Err(self.error(
                    start,
                    start + 1,
                    "unterminated string literal",
                    Some("close the string with `\"`"),
                ));
            };
            self.pos += c.len_utf8();
            match c {
                '"' => return Ok((start, Tok::Str(value), self.pos)),
                '\n' => {
                    return Err(self.error(
                        start,
                        start + 1,
                        "unterminated string literal",
                        Some("close the string with `\"` before the end of the line"),
                    ))
                }
                '\\' => {
                    let esc_start = self.pos - 1;
                    let Some(e) = self.src[self.pos..].chars().next() else { continue };
                    self.pos += e.len_utf8();
                    value.push(match e {
                        'n' => '\n',
                        't' => '\t',
                        '\\' => '\\',
                        '"' => '"',
                        '0' => '\0',
                        _ => {
                            return Err(self.error(
                                esc_start,
                                self.pos,
                                format!("unknown escape `\\{e}`"),
                                Some("the escapes are \\n \\t \\\\ \\\" \\0"),
                            ))
                        }
                    });
                }
                c => value.push(c),
            }
        }
    }
}

fn keyword(word: &str) -> Option<Tok> {
    Some(match word {
        "kernel" => Tok::Kernel,
        "fn" => Tok::Fn,
        "host" => Tok::Host,
        "let" => Tok::Let,
        "if" => Tok::If,
        "else" => Tok::Else,
        "for" => Tok::For,
        "in" => Tok::In,
        "return" => Tok::Return,
        "while" => Tok::While,
        "break" => Tok::Break,
        "continue" => Tok::Continue,
        "import" => Tok::Import,
        "const" => Tok::Const,
        "launch" => Tok::Launch,
        "mut" => Tok::Mut,
        "tune" => Tok::Tune,
        "true" => Tok::True,
        "false" => Tok::False,
        "_" => Tok::Underscore,
        _ => return None,
    })
}

impl Iterator for Lexer<'_> {
    type Item = Result<Spanned, LexError>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Err(e) = self.skip_trivia() {
            self.pos = self.src.len();
            return Some(Err(e));
        }
        let start = self.pos;
        let c = self.src[self.pos..].chars().next()?;
        if c.is_ascii_digit() {
            let r = self.number();
            if r.is_err() {
                self.pos = self.src.len();
            }
            return Some(r);
        }
        if c == '"' {
            let r = self.string();
            if r.is_err() {
                self.pos = self.src.len();
            }
            return Some(r);
        }
        if c.is_ascii_alphabetic() || c == '_' {
            while self.peek_byte(0).is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_') {
                self.pos += 1;
            }
            let word = &self.src[start..self.pos];
            let tok = keyword(word).unwrap_or_else(|| Tok::Ident(word.to_string()));
            return Some(Ok((start, tok, self.pos)));
        }
        let two = |a: u8, b: u8| self.peek_byte(0) == Some(a) && self.peek_byte(1) == Some(b);
        let (tok, len) = if two(b'+', b'=') {
            (Tok::PlusAssign, 2)
        } else if two(b'-', b'=') {
            (Tok::MinusAssign, 2)
        } else if two(b'*', b'=') {
            (Tok::StarAssign, 2)
        } else if two(b'/', b'=') {
            (Tok::SlashAssign, 2)
        } else if two(b'.', b'.') {
            (Tok::DotDot, 2)
        } else if two(b'-', b'>') {
            (Tok::Arrow, 2)
        } else if two(b'&', b'&') {
            (Tok::AmpAmp, 2)
        } else if two(b'|', b'|') {
            (Tok::PipePipe, 2)
        } else if two(b'=', b'=') {
            (Tok::EqEq, 2)
        } else if two(b'!', b'=') {
            (Tok::NotEq, 2)
        } else if two(b'<', b'=') {
            (Tok::Le, 2)
        } else if two(b'>', b'=') {
            (Tok::Ge, 2)
        } else if two(b'<', b'<') {
            (Tok::Shl, 2)
        } else if two(b'>', b'>') {
            (Tok::Shr, 2)
        } else {
            let tok = match c {
                '(' => Tok::LParen,
                ')' => Tok::RParen,
                '{' => Tok::LBrace,
                '}' => Tok::RBrace,
                '[' => Tok::LBracket,
                ']' => Tok::RBracket,
                '<' => Tok::LAngle,
                '>' => Tok::RAngle,
                ',' => Tok::Comma,
                ':' => Tok::Colon,
                ';' => Tok::Semi,
                '.' => Tok::Dot,
                '?' => Tok::Question,
                '=' => Tok::Assign,
                '+' => Tok::Plus,
                '-' => Tok::Minus,
                '*' => Tok::Star,
                '/' => Tok::Slash,
                '%' => Tok::Percent,
                '!' => Tok::Bang,
                '&' => Tok::Amp,
                '|' => Tok::Pipe,
                '^' => Tok::Caret,
                other => {
                    let end = start + other.len_utf8();
                    self.pos = end;
                    let shown = if other.is_control() { format!("{:?}", other) } else { format!("`{other}`") };
                    return Some(Err(self.error(start, end, format!("unexpected character {shown}"), None)));
                }
            };
            (tok, 1)
        };
        self.pos += len;
        Some(Ok((start, tok, self.pos)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn toks(src: &str) -> Vec<Tok> {
        Lexer::new(src).map(|r| r.unwrap().1).collect()
    }

    #[test]
    fn ranges_are_not_floats() {
        assert_eq!(toks("0..8"), vec![Tok::Int(0), Tok::DotDot, Tok::Int(8)]);
        assert_eq!(toks("1.5e3"), vec![Tok::Float(1500.0)]);
    }

    #[test]
    fn nested_block_comments() {
        assert_eq!(toks("/* a /* b */ c */ x"), vec![Tok::Ident("x".into())]);
    }

    #[test]
    fn errors_carry_spans() {
        let err = Lexer::new("let x = 99999999999999999999;").find_map(|r| r.err()).unwrap();
        assert_eq!(err.span, Span::new(8, 28));
        let err = Lexer::new("/* open").find_map(|r| r.err()).unwrap();
        assert_eq!(err.message, "unterminated block comment");
    }
}
