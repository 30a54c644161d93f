//! Byte offsets (the front end's spans) to LSP positions and back.
//!
//! An LSP position is a line and a column counted in the encoding the client and server agreed
//! on: UTF-16 code units unless the client offers UTF-8. Sources are UTF-8, so the two differ on
//! any non-ASCII character (in a comment or a string). Every conversion clamps: a position past
//! the end of a line or of the file means its end, never a panic.

use lsp_types::{Position, Range};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    Utf8,
    Utf16,
}

pub struct LineIndex {
    /// The byte offset where each line starts.
    line_starts: Vec<usize>,
    encoding: Encoding,
}

impl LineIndex {
    pub fn new(text: &str, encoding: Encoding) -> Self {
        let line_starts = std::iter::once(0).chain(text.match_indices('\n').map(|(i, _)| i + 1)).collect();
        LineIndex { line_starts, encoding }
    }

    fn line_text<'t>(&self, text: &'t str, line: usize) -> &'t str {
        let start = self.line_starts[line].min(text.len());
        let end = self.line_starts.get(line + 1).map_or(text.len(), |next| next - 1).clamp(start, text.len());
        &text[start..end]
    }

    pub fn position(&self, text: &str, offset: usize) -> Position {
        let mut offset = offset.min(text.len());
        while !text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let before = &text[self.line_starts[line]..offset];
        let column = match self.encoding {
            Encoding::Utf8 => before.len(),
            Encoding::Utf16 => before.encode_utf16().count(),
        };
        Position::new(line as u32, column as u32)
    }

    pub fn range(&self, text: &str, start: usize, end: usize) -> Range {
        Range::new(self.position(text, start), self.position(text, end.max(start)))
    }

    pub fn offset(&self, text: &str, position: Position) -> usize {
        let Some(&start) = self.line_starts.get(position.line as usize) else { return text.len() };
        let line = self.line_text(text, position.line as usize);
        let mut units = 0;
        for (i, c) in line.char_indices() {
            if units >= position.character as usize {
                return start + i;
            }
            units += match self.encoding {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
        }
        start + line.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_columns_count_code_units() {
        // `é` is 2 bytes and 1 UTF-16 unit; `𝄞` is 4 bytes and 2 units.
        let text = "ab\n// é𝄞 x\nlast";
        let index = LineIndex::new(text, Encoding::Utf16);
        let x = text.find('x').unwrap();
        assert_eq!(index.position(text, x), Position::new(1, 7));
        assert_eq!(index.offset(text, Position::new(1, 7)), x);
        let utf8 = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(utf8.position(text, x), Position::new(1, 10));
        assert_eq!(utf8.offset(text, Position::new(1, 10)), x);
    }

    #[test]
    fn out_of_range_positions_clamp() {
        let text = "ab\ncd";
        let index = LineIndex::new(text, Encoding::Utf16);
        assert_eq!(index.offset(text, Position::new(0, 99)), 2);
        assert_eq!(index.offset(text, Position::new(9, 0)), text.len());
        assert_eq!(index.position(text, 99), Position::new(1, 2));
        // Inside a multi-byte character: the character's start.
        assert_eq!(LineIndex::new("é", Encoding::Utf16).position("é", 1), Position::new(0, 0));
    }
}
