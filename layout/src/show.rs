//! Pictures of layouts: a grid of indices (text for the terminal, SVG on
//! request), and for a TV layout the tile's grid of `T{t}V{v}` cells
//! coloured by thread, like CuTe's print_layout / print_latex pictures; for an
//! MMA atom or a tiled MMA, CuTe's `print_latex(tiled_mma)` picture of its A, B
//! and C operands ([`mma_picture`]).

use crate::error::{Error, Result};
use crate::expr::Value;
use crate::int::Int;
use crate::int_tuple::IntTuple;
use crate::layout::Layout;
use crate::mma::{MmaOperand, TiledMma};
use crate::swizzle::ComposedLayout;
use std::fmt::Write;

/// Cells above this count are refused: a picture that large is no picture.
const MAX_CELLS: i64 = 1 << 16;
/// The most (thread, value) pairs an MMA operand's picture evaluates: more than its cells, since a
/// wgmma atom's shared-memory operands are held whole by each of the warpgroup's 128 threads.
const MAX_TV_EVALS: i64 = 1 << 21;

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
        r => {
            return Err(Error::new(
                "show",
                format!("cannot draw a rank-{r} layout; group its modes to rank 2 first (group_modes)"),
            ))
        }
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
        Value::MmaAtom(_) | Value::TiledMma(_) => {
            Err(Error::new("show", "an MMA is drawn as three panels: use picture_of"))
        }
        other => v
            .to_layout()
            .map(|l| layout_grid(l.to_string(), &l, &|c| l.eval_coord(c, None)))
            .unwrap_or_else(|| Err(Error::new("show", format!("cannot draw {other}")))),
    }
}

/// CuTe's `print_latex(tiled_mma)` picture: the C tile (M x N) with A (M x K) on its left and B
/// above it, drawn K x N (transposed from B's (N,K) storage, so K runs down and B's columns line up
/// with C's). Every cell is labelled `T{thread}V{value}` and keyed (coloured) by its thread.
pub struct MmaPicture {
    /// The tiled MMA, without its TV layouts (those are in the legend).
    pub title: String,
    /// One line per operand: its tile and TV layout, and how the cells are chosen.
    pub legend: Vec<String>,
    /// A (M x K), B drawn (K x N), C (M x N); each grid's title is the operand's letter.
    pub a: Grid,
    pub b: Grid,
    pub c: Grid,
}

/// The cells of one operand of a tiled MMA, from its TV layout: the cell of a coordinate holds
/// the (thread, value) that maps to it. For A and B several threads can hold the same element
/// (the warps of the atom layout along N share A's rows, those along M share B's columns); like
/// CuTe's picture (which draws through the TV layout's right inverse) the cell shows the first:
/// the lowest thread, and its lowest value.
fn operand_grid(t: &TiledMma, op: MmaOperand) -> Result<Grid> {
    let tv = t.layout_tv(op)?;
    let [p, q] = t.tile_of(op);
    let (p, q) = (static_size(Ok(Int::S(p)), "the tile")?, static_size(Ok(Int::S(q)), "the tile")?);
    let nt = static_size(tv.mode(0)?.size(), "the thread mode")?;
    let nv = static_size(tv.mode(1)?.size(), "the value mode")?;
    if p.saturating_mul(q) as i64 > MAX_CELLS || nt.saturating_mul(nv) as i64 > MAX_TV_EVALS {
        return Err(Error::new("show", "the picture exceeds the cell limit"));
    }
    // B is stored (N,K) but drawn (K,N).
    let transpose = op == MmaOperand::B;
    let (rows, cols) = if transpose { (q, p) } else { (p, q) };
    let mut cells: Vec<Option<(String, i64)>> = vec![None; rows * cols];
    for th in 0..nt {
        for v in 0..nv {
            let idx = static_value(tv.eval(&crate::tup![th as i64, v as i64])?)?;
            if idx < 0 || idx as usize >= p * q {
                return Err(Error::new(
                    "show",
                    format!("{} T{th}V{v} maps to {idx}, outside the {p}x{q} tile", op.name()),
                ));
            }
            // Column-major in the operand's (p,q) tile.
            let (r, c) = (idx as usize % p, idx as usize / p);
            let (row, col) = if transpose { (c, r) } else { (r, c) };
            let cell = &mut cells[row * cols + col];
            if cell.is_none() {
                *cell = Some((format!("T{th}V{v}"), th as i64));
            }
        }
    }
    if let Some(k) = cells.iter().position(Option::is_none) {
        return Err(Error::new(
            "show",
            format!("no thread holds element ({},{}) of {}", k / cols, k % cols, op.name()),
        ));
    }
    Ok(Grid { title: op.name().to_string(), rows, cols, cells })
}

/// The picture of a tiled MMA (an atom is the tiled MMA of one warp, layout (1,1,1)).
pub fn mma_picture(t: &TiledMma) -> Result<MmaPicture> {
    let [m, n, k] = t.tile;
    let [lm, ln, lk] = t.atom_layout;
    let title =
        format!("TiledMMA({}, atom layout ({lm},{ln},{lk}), tile ({m},{n},{k}), {} threads)", t.atom.name, t.threads());
    if (m * k + k * n + m * n) > MAX_CELLS {
        return Err(Error::new(
            "show",
            format!("the {m}x{n}x{k} tile's {} cells exceed the limit of {MAX_CELLS}", m * k + k * n + m * n),
        ));
    }
    // One warp over the atom's own tile: the atom's TV layouts (the same functions, without the
    // tiled layout's unit warp modes).
    let single = t.atom_layout == [1, 1, 1] && t.tile == t.atom.shape_mnk;
    let tv = |op| if single { Ok(t.atom.layout_tv(op).to_string()) } else { t.layout_tv(op).map(|l| l.to_string()) };
    let legend = vec![
        format!("A (M,K) = ({m},{k}), left of C: TV {}", tv(MmaOperand::A)?),
        format!("B (N,K) = ({n},{k}), drawn K x N above C: TV {}", tv(MmaOperand::B)?),
        format!("C (M,N) = ({m},{n}): TV {}", tv(MmaOperand::C)?),
        "a cell is T<thread>V<value>; an element several threads hold shows the lowest thread".to_string(),
    ];
    Ok(MmaPicture {
        title,
        legend,
        a: operand_grid(t, MmaOperand::A)?,
        b: operand_grid(t, MmaOperand::B)?,
        c: operand_grid(t, MmaOperand::C)?,
    })
}

/// Any picture `show` draws: a grid, or an MMA's three panels.
pub enum Picture {
    Grid(Grid),
    Mma(MmaPicture),
}

/// The picture of an evaluated expression: [`grid_of`], or for an MMA atom or a tiled MMA the
/// [`mma_picture`].
pub fn picture_of(v: &Value) -> Result<Picture> {
    match v {
        Value::TiledMma(t) => mma_picture(t).map(Picture::Mma),
        Value::MmaAtom(a) => mma_picture(&TiledMma::new(a, [1, 1, 1], None)?).map(Picture::Mma),
        _ => grid_of(v).map(Picture::Grid),
    }
}

impl Picture {
    pub fn to_text(&self) -> String {
        match self {
            Picture::Grid(g) => to_text(g),
            Picture::Mma(p) => mma_to_text(p),
        }
    }

    pub fn to_svg(&self) -> String {
        match self {
            Picture::Grid(g) => to_svg(g),
            Picture::Mma(p) => mma_to_svg(p),
        }
    }

    /// What `show --svg` reports: `4x8 cells`, or `A 16x16, B 16x8, C 16x8 cells`.
    pub fn summary(&self) -> String {
        match self {
            Picture::Grid(g) => format!("{}x{} cells", g.rows, g.cols),
            Picture::Mma(p) => {
                format!("A {}x{}, B {}x{}, C {}x{} cells", p.a.rows, p.a.cols, p.b.rows, p.b.cols, p.c.rows, p.c.cols)
            }
        }
    }
}

/// The text of an MMA picture: B above C, A left of C, each panel with its column numbers above
/// and row numbers on its left (one text line per row, no rules between rows):
///
/// ```text
///         B      0     1   ...
///             +-----+-----+
///          0  |T0V0 |T4V0 |          k = 0.. down, n across
///             ...
///   A   0     1   ...      C      0     1   ...
///     +-----+-----+             +-----+-----+
///   0 |T0V0 |T0V1 |...|     0   |T0V0 |T0V1 |
/// ```
fn mma_to_text(p: &MmaPicture) -> String {
    let (a, b, c) = (&p.a, &p.b, &p.c);
    let w = [a, b, c]
        .iter()
        .flat_map(|g| g.cells.iter().flatten())
        .map(|c| c.0.len())
        .max()
        .unwrap_or(1)
        .max(a.cols.max(c.cols).saturating_sub(1).to_string().len())
        + 2;
    // Row numbers: A's m on the far left; B's k and C's m in the gap between A and C.
    let rl = a.rows.max(b.rows).saturating_sub(1).to_string().len().max(1);
    let a_width = 1 + a.cols * (w + 1);
    // Between A and C: `gap` spaces, then B's k and C's m right-aligned; B's columns are C's.
    let gap = 3;
    let header = |g: &Grid| {
        let mut s = String::new();
        for n in 0..g.cols {
            let _ = write!(s, " {n:^w$}");
        }
        s
    };
    let rule = |cols: usize| {
        let mut r = String::from("+");
        for _ in 0..cols {
            r.push_str(&"-".repeat(w));
            r.push('+');
        }
        r
    };
    let row = |g: &Grid, m: usize| {
        let mut s = String::from("|");
        for n in 0..g.cols {
            let label = g.cells[m * g.cols + n].as_ref().map_or("", |c| c.0.as_str());
            let _ = write!(s, "{label:^w$}|");
        }
        s
    };
    // The left part of a B line: blank up to the gap's row-number column.
    let b_left = |label: &str| format!("{:w1$}{label:>rl$}  ", "", w1 = rl + 2 + a_width + gap);
    let mut s = String::new();
    let _ = writeln!(s, "{}", p.title);
    for l in &p.legend {
        let _ = writeln!(s, "{l}");
    }
    s.push('\n');
    let _ = writeln!(s, "{}{}", b_left("B"), header(b));
    let _ = writeln!(s, "{}{}", b_left(""), rule(b.cols));
    for k in 0..b.rows {
        let _ = writeln!(s, "{}{}", b_left(&k.to_string()), row(b, k));
    }
    let _ = writeln!(s, "{}{}", b_left(""), rule(b.cols));
    s.push('\n');
    let _ = writeln!(s, "{:>rl$}  {:<a_width$}{:gap$}{:>rl$}  {}", "A", header(a), "", "C", header(c));
    let _ = writeln!(s, "{:rl$}  {}{:gap$}{:rl$}  {}", "", rule(a.cols), "", "", rule(c.cols));
    for m in 0..a.rows {
        let _ = writeln!(s, "{m:>rl$}  {}{:gap$}{m:>rl$}  {}", row(a, m), "", row(c, m));
    }
    let _ = writeln!(s, "{:rl$}  {}{:gap$}{:rl$}  {}", "", rule(a.cols), "", "", rule(c.cols));
    s
}

/// One panel of an MMA's SVG: a `<g id="A|B|C">` of `<rect class="cell">`s with column numbers
/// above and row numbers to the left.
fn svg_panel(
    s: &mut String,
    g: &Grid,
    (x0, y0): (usize, usize),
    (cw, ch): (usize, usize),
    (row_axis, col_axis): (&str, &str),
) {
    let _ = writeln!(s, r#"<g id="{}">"#, g.title);
    let _ = writeln!(
        s,
        r#"<text class="panel" x="{}" y="{}" font-size="16" font-weight="bold" text-anchor="end">{}</text>"#,
        x0 - 6,
        y0 - 8,
        g.title
    );
    let _ = writeln!(s, r#"<text class="axis" x="{}" y="{}">{col_axis}</text>"#, x0 + g.cols * cw + 4, y0 - 6);
    let _ = writeln!(
        s,
        r#"<text class="axis" x="{}" y="{}" text-anchor="end">{row_axis}</text>"#,
        x0 - 6,
        y0 + g.rows * ch + 14
    );
    svg_cells(s, g, (x0, y0), (cw, ch));
    s.push_str(
        "</g>
",
    );
}

/// SVG of an MMA picture: the legend on top, then B above C and A left of C, cells coloured by
/// thread as in [`to_svg`].
fn mma_to_svg(p: &MmaPicture) -> String {
    let (a, b, c) = (&p.a, &p.b, &p.c);
    let label_w = [a, b, c].iter().flat_map(|g| g.cells.iter().flatten()).map(|c| c.0.len()).max().unwrap_or(1);
    let cw = (label_w * 8 + 12).max(28);
    let ch = 24;
    let line = 16;
    let top = 8 + line * (1 + p.legend.len()) + 28;
    let (xa, gap) = (44usize, 56usize);
    let xc = xa + a.cols * cw + gap;
    let yb = top;
    let yc = yb + b.rows * ch + 44;
    let text_w = std::iter::once(&p.title).chain(&p.legend).map(|l| l.len() * 7 + 16).max().unwrap_or(0);
    let width = (xc + c.cols * cw + 24).max(text_w);
    let height = yc + c.rows.max(a.rows) * ch + 24;
    let mut s = String::new();
    let _ = writeln!(s, r#"<?xml version="1.0" encoding="UTF-8"?>"#);
    let _ = writeln!(
        s,
        r#"<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" viewBox="0 0 {width} {height}" font-family="monospace" font-size="12">"#
    );
    let _ = writeln!(s, r#"<title>{}</title>"#, xml_escape(&p.title));
    for (i, l) in std::iter::once(&p.title).chain(&p.legend).enumerate() {
        let _ = writeln!(s, r#"<text class="legend" x="4" y="{}">{}</text>"#, 8 + line * (i + 1) - 4, xml_escape(l));
    }
    svg_panel(&mut s, b, (xc, yb), (cw, ch), ("k", "n"));
    svg_panel(&mut s, a, (xa, yc), (cw, ch), ("m", "k"));
    svg_panel(&mut s, c, (xc, yc), (cw, ch), ("m", "n"));
    s.push_str(
        "</svg>
",
    );
    s
}

/// Terminal picture, in the style of CuTe's print_layout.
pub fn to_text(g: &Grid) -> String {
    let w = g
        .cells
        .iter()
        .flatten()
        .map(|c| c.0.len())
        .max()
        .unwrap_or(1)
        .max(g.cols.saturating_sub(1).to_string().len())
        .max(1)
        + 2;
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

/// The numbered columns and rows of a grid and one labelled `<rect class="cell">` per element,
/// coloured by key, with the top-left cell at (x0, y0).
fn svg_cells(s: &mut String, g: &Grid, (x0, y0): (usize, usize), (cw, ch): (usize, usize)) {
    for n in 0..g.cols {
        let _ = writeln!(
            s,
            r#"<text class="col" x="{}" y="{}" text-anchor="middle">{n}</text>"#,
            x0 + n * cw + cw / 2,
            y0 - 6
        );
    }
    for m in 0..g.rows {
        let _ = writeln!(
            s,
            r#"<text class="row" x="{}" y="{}" text-anchor="end">{m}</text>"#,
            x0 - 6,
            y0 + m * ch + ch / 2 + 4
        );
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
                    let _ = writeln!(
                        s,
                        r#"<rect class="cell" x="{x}" y="{y}" width="{cw}" height="{ch}" fill="white" stroke="black"/>"#
                    );
                }
            }
        }
    }
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
    svg_cells(&mut s, g, (x0, y0), (cw, ch));
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
