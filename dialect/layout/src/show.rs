//! Pictures of layouts: a grid of indices (text for the terminal, SVG on
//! request), and for a TV layout the tile's grid of `T{t}V{v}` cells
//! coloured by thread, like CuTe's print_layout / print_latex pictures.

use crate::error::{Error, Result};
use crate::expr::Value;
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::swizzle::ComposedLayout;
use std::fmt::Write;

/// Cells above this count are refused: a picture that large is no picture.
const MAX_CELLS: i64 = 1 << 16;

/// One picture: a title, a grid of labels and, per cell, a colour key.
pub struct Grid {
    pub title: String,
    pub rows: usize,
    pub cols: usize,
    /// Row-major, `rows * cols` cells; `None` is a cell nothing maps to.
    pub cells: Vec<Option<(String, i64)>>,
}

fn static_size(x: Result<Int>, what: &str) -> Result<usize> {
    match x? {
        Int::S(v) if (0..=MAX_CELLS).contains(&v) => Ok(v as usize),
        Int::S(v) => Err(Error::new("show", format!("{what} has {v} elements; pictures are limited to {MAX_CELLS}"))),
        Int::D(_) => Err(Error::new("show", format!("{what} has a dynamic size; only static layouts can be drawn"))),
    }
}

fn static_value(x: Int) -> Result<i64> {
    x.as_static().ok_or_else(|| Error::new("show", "the layout has dynamic strides; only static layouts can be drawn"))
}

/// The label and colour key of a cell: an index, or (for identity layouts
/// and counting tensors) the coordinate it holds, coloured by its first
/// component.
fn cell_of(v: IntTuple) -> Result<(String, i64)> {
    let first = v.leaves().into_iter().next().unwrap_or(Int::ZERO);
    let key = static_value(first)?;
    if !v.is_static() {
        return Err(Error::new("show", "the layout has dynamic strides; only static layouts can be drawn"));
    }
    Ok((v.to_string(), key))
}

/// The grid of a layout of rank 1 (one row) or 2 (rows = mode 0).
fn layout_grid(title: String, l: &Layout, f: &dyn Fn(&IntTuple) -> Result<IntTuple>) -> Result<Grid> {
    let (rows, cols, two_d) = match l.rank() {
        1 => (1, static_size(l.size(), "the layout")?, false),
        2 => (static_size(l.mode(0)?.size(), "mode 0")?, static_size(l.mode(1)?.size(), "mode 1")?, true),
        r => return Err(Error::new("show", format!("cannot draw a rank-{r} layout; group its modes to rank 2 first (group_modes)"))),
    };
    if rows.saturating_mul(cols) as i64 > MAX_CELLS {
        return Err(Error::new("show", format!("{rows}x{cols} cells exceed the limit of {MAX_CELLS}")));
    }
    let mut cells = Vec::with_capacity(rows * cols);
    for m in 0..rows {
        for n in 0..cols {
            let crd = if two_d { crate::tup![m as i64, n as i64] } else { IntTuple::from(n as i64) };
            cells.push(Some(cell_of(f(&crd)?)?));
        }
    }
    Ok(Grid { title, rows, cols, cells })
}

/// The tile (M,N) with each cell labelled by the (thread, value) pairs the
/// TV layout sends there.
pub fn tv_grid(tiler: &IntTuple, tv: &Layout) -> Result<Grid> {
    let dims: Vec<usize> = match tiler.rank() {
        1 => vec![1, static_size(tiler.product(), "the tile")?],
        2 => tiler.modes().iter().map(|m| static_size(m.product(), "the tile")).collect::<Result<_>>()?,
        r => return Err(Error::new("show", format!("cannot draw a rank-{r} tile"))),
    };
    let (rows, cols) = (dims[0], dims[1]);
    if tv.rank() != 2 {
        return Err(Error::new("show", format!("a TV layout has two modes (thread, value); {tv} has {}", tv.rank())));
    }
    let nt = static_size(tv.mode(0)?.size(), "the thread mode")?;
    let nv = static_size(tv.mode(1)?.size(), "the value mode")?;
    if rows.saturating_mul(cols) as i64 > MAX_CELLS || nt.saturating_mul(nv) as i64 > MAX_CELLS {
        return Err(Error::new("show", "the picture exceeds the cell limit"));
    }
    let mut cells: Vec<Option<(String, i64)>> = vec![None; rows * cols];
    for t in 0..nt {
        for v in 0..nv {
            let idx = static_value(tv.eval(&crate::tup![t as i64, v as i64])?)?;
            // The tile coordinate of a tile index is colexicographic: m fastest.
            if idx < 0 || idx as usize >= rows * cols {
                return Err(Error::new("show", format!("T{t}V{v} maps to {idx}, outside the {rows}x{cols} tile")));
            }
            let (m, n) = (idx as usize % rows, idx as usize / rows);
            let label = format!("T{t}V{v}");
            let cell = &mut cells[m * cols + n];
            *cell = Some(match cell.take() {
                // Broadcast TV layouts send several pairs to one cell; show all.
                Some((old, key)) => (format!("{old}|{label}"), key),
                None => (label, t as i64),
            });
        }
    }
    Ok(Grid { title: format!("tile {tiler}, TV {tv}"), rows, cols, cells })
}

/// The picture of an evaluated expression: a layout, a composed layout, or a
/// `(tiler, tv_layout)` pair such as `make_layout_tv(...)` returns.
pub fn grid_of(v: &Value) -> Result<Grid> {
    match v {
        Value::Layout(l) => layout_grid(l.to_string(), l, &|c| l.eval_coord(c, None)),
        Value::Sliced(l, off) => layout_grid(v.to_string(), l, &|c| l.eval_coord(c, Some(off))),
        Value::Composed(c) => {
            let c: ComposedLayout = c.clone();
            layout_grid(c.to_string(), &c.layout, &|x| c.eval(x).map(IntTuple::Int))
        }
        Value::Tuple(p) if p.len() == 2 => match (&p[0].to_int_tuple(), &p[1]) {
            (Some(tiler), Value::Layout(tv)) => tv_grid(tiler, tv),
            _ => Err(Error::new("show", "expected a layout or a (tiler, TV layout) pair")),
        },
        other => v
            .to_layout()
            .map(|l| layout_grid(l.to_string(), &l, &|c| l.eval_coord(c, None)))
            .unwrap_or_else(|| Err(Error::new("show", format!("cannot draw {other}")))),
    }
}

/// Terminal picture, in the style of CuTe's print_layout.
pub fn to_text(g: &Grid) -> String {
    let w = g.cells.iter().flatten().map(|c| c.0.len()).max().unwrap_or(1).max(g.cols.saturating_sub(1).to_string().len()).max(1) + 2;
    let rw = g.rows.saturating_sub(1).to_string().len();
    let mut s = String::new();
    let _ = writeln!(s, "{}", g.title);
    let _ = write!(s, "{:rw$}  ", "");
    for n in 0..g.cols {
        let _ = write!(s, " {n:^w$}");
    }
    s.push('\n');
    let rule = {
        let mut r = format!("{:rw$}  +", "");
        for _ in 0..g.cols {
            r.push_str(&"-".repeat(w));
            r.push('+');
        }
        r
    };
    let _ = writeln!(s, "{rule}");
    for m in 0..g.rows {
        let _ = write!(s, "{m:>rw$}  |");
        for n in 0..g.cols {
            let label = g.cells[m * g.cols + n].as_ref().map_or("", |c| c.0.as_str());
            let _ = write!(s, "{label:^w$}|");
        }
        s.push('\n');
        let _ = writeln!(s, "{rule}");
    }
    s
}

fn xml_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// A colour per key: eight well-separated hues, lighter for keys >= 8.
fn colour(key: i64) -> String {
    const HUES: [u32; 8] = [0, 210, 120, 45, 280, 170, 330, 90];
    let k = key.rem_euclid(64) as usize;
    let hue = HUES[k % 8];
    let light = 70 + 5 * ((k / 8) % 4) as u32;
    format!("hsl({hue},70%,{light}%)")
}

/// SVG picture: one `<rect class="cell">` per element of the grid, labelled.
pub fn to_svg(g: &Grid) -> String {
    let label_w = g.cells.iter().flatten().map(|c| c.0.len()).max().unwrap_or(1);
    let cw = (label_w * 8 + 12).max(28);
    let ch = 24;
    let (x0, y0) = (36usize, 44usize);
    let width = x0 + g.cols * cw + 12;
    let height = y0 + g.rows * ch + 12;
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"#
    );
    let _ = writeln!(s, r#"<title>{}</title>"#, xml_escape(&g.title));
    let _ = writeln!(s, r#"<text x="4" y="14">{}</text>"#, xml_escape(&g.title));
    for n in 0..g.cols {
        let _ = writeln!(s, r#"<text class="col" x="{}" y="{}" text-anchor="middle">{n}</text>"#, x0 + n * cw + cw / 2, y0 - 6);
    }
    for m in 0..g.rows {
        let _ = writeln!(s, r#"<text class="row" x="{}" y="{}" text-anchor="end">{m}</text>"#, x0 - 6, y0 + m * ch + ch / 2 + 4);
        for n in 0..g.cols {
            let (x, y) = (x0 + n * cw, y0 + m * ch);
            match &g.cells[m * g.cols + n] {
                Some((label, key)) => {
                    let _ = writeln!(
                        s,
                        r#"<rect class="cell" x="{x}" y="{y}" width="{cw}" height="{ch}" fill="{}" stroke="black"/><text x="{}" y="{}" text-anchor="middle">{}</text>"#,
                        colour(*key),
                        x + cw / 2,
                        y + ch / 2 + 4,
                        xml_escape(label)
                    );
                }
                None => {
                    let _ = writeln!(s, r#"<rect class="cell" x="{x}" y="{y}" width="{cw}" height="{ch}" fill="white" stroke="black"/>"#);
                }
            }
        }
    }
    s.push_str("</svg>\n");
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::expr::eval_str;

    #[test]
    fn text_grid_of_a_row_major_layout() {
        let g = grid_of(&eval_str("(2,3):(3,1)").unwrap()).unwrap();
        let t = to_text(&g);
        assert!(t.starts_with("(2,3):(3,1)\n"), "{t}");
        assert!(t.contains("|  0  |  1  |  2  |") || t.contains("| 0 | 1 | 2 |"), "{t}");
        assert!(t.contains("3") && t.contains("5"));
    }

    #[test]
    fn tv_grid_labels_every_cell() {
        let g = grid_of(&eval_str("make_layout_tv((4,8):(8,1), (1,2):(2,1))").unwrap()).unwrap();
        assert_eq!(g.rows * g.cols, 64);
        assert!(g.cells.iter().all(|c| c.is_some()));
        assert!(to_text(&g).contains("T0V0"));
    }

    #[test]
    fn refuses_what_it_cannot_draw() {
        assert!(grid_of(&eval_str("(2,3,4):(1,2,6)").unwrap()).is_err());
        assert!(grid_of(&eval_str("(?,4):(1,?)").unwrap()).is_err());
        assert!(grid_of(&eval_str("(65536,2):(1,65536)").unwrap()).is_err());
    }
}
