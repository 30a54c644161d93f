//! A minimal, bounds-checked ELF64 little-endian reader: just enough to find
//! a symbol in a cubin's symbol table and read the bytes of its initializer.
//! Used to read the `__cutec_manifest` global on the host, with no GPU and no
//! driver. Every offset is checked; malformed input gives `Err`, never a panic.

use crate::error::{Result, RuntimeError};

const SHT_SYMTAB: u32 = 2;
const SHT_NOBITS: u32 = 8;

fn bad(why: impl Into<String>) -> RuntimeError {
    RuntimeError::InvalidImage(format!("malformed ELF: {}", why.into()))
}

fn slice<'a>(bytes: &'a [u8], off: u64, len: u64, what: &str) -> Result<&'a [u8]> {
    let end = off.checked_add(len).ok_or_else(|| bad(format!("{what}: offset overflow")))?;
    if end > bytes.len() as u64 {
        return Err(bad(format!(
            "{what} at offset {off}..{end} is outside the {} byte file",
            bytes.len()
        )));
    }
    Ok(&bytes[off as usize..end as usize])
}

fn u16_at(b: &[u8], off: usize) -> u16 {
    u16::from_le_bytes([b[off], b[off + 1]])
}
fn u32_at(b: &[u8], off: usize) -> u32 {
    u32::from_le_bytes([b[off], b[off + 1], b[off + 2], b[off + 3]])
}
fn u64_at(b: &[u8], off: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[off..off + 8]);
    u64::from_le_bytes(a)
}

#[derive(Clone, Copy, Debug)]
struct Section {
    kind: u32,
    addr: u64,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

/// True when `bytes` starts with the ELF magic.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

fn sections(bytes: &[u8]) -> Result<Vec<Section>> {
    let header = slice(bytes, 0, 64, "the ELF header")?;
    if !is_elf(header) {
        return Err(bad("no ELF magic"));
    }
    if header[4] != 2 {
        return Err(bad("not a 64-bit ELF (cubins are ELF64)"));
    }
    if header[5] != 1 {
        return Err(bad("not little-endian"));
    }
    let shoff = u64_at(header, 0x28);
    let shentsize = u16_at(header, 0x3a) as u64;
    let shnum = u16_at(header, 0x3c) as u64;
    if shnum == 0 {
        return Ok(Vec::new());
    }
    if shentsize < 64 {
        return Err(bad(format!("section header size {shentsize} < 64")));
    }
    let table = slice(bytes, shoff, shentsize * shnum, "the section header table")?;
    Ok((0..shnum as usize)
        .map(|i| {
            let s = &table[i * shentsize as usize..];
            Section {
                kind: u32_at(s, 4),
                addr: u64_at(s, 0x10),
                offset: u64_at(s, 0x18),
                size: u64_at(s, 0x20),
                link: u32_at(s, 0x28),
                entsize: u64_at(s, 0x38),
            }
        })
        .collect())
}

/// The initializer bytes of the symbol `name` (an object with a size, in a
/// section with file contents), or `None` when the file has no such symbol.
pub fn symbol_bytes<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>> {
    let secs = sections(bytes)?;
    for symtab in secs.iter().filter(|s| s.kind == SHT_SYMTAB) {
        let entsize = if symtab.entsize == 0 { 24 } else { symtab.entsize };
        if entsize < 24 {
            return Err(bad(format!("symbol entry size {entsize} < 24")));
        }
        let strtab = secs
            .get(symtab.link as usize)
            .ok_or_else(|| bad(format!("symbol table links to missing section {}", symtab.link)))?;
        let strings = slice(bytes, strtab.offset, strtab.size, "the symbol string table")?;
        let table = slice(bytes, symtab.offset, symtab.size, "the symbol table")?;
        for sym in table.chunks_exact(entsize as usize) {
            let name_off = u32_at(sym, 0) as usize;
            let Some(rest) = strings.get(name_off..) else { continue };
            let end = rest.iter().position(|&c| c == 0).unwrap_or(rest.len());
            if &rest[..end] != name.as_bytes() {
                continue;
            }
            let shndx = u16_at(sym, 6) as usize;
            let value = u64_at(sym, 8);
            let size = u64_at(sym, 16);
            let sec = secs.get(shndx).ok_or_else(|| {
                bad(format!("symbol `{name}` is in section {shndx}, which does not exist"))
            })?;
            if sec.kind == SHT_NOBITS {
                return Err(bad(format!("symbol `{name}` has no initializer (it is in a NOBITS section)")));
            }
            // In a cubin st_value is the offset inside the section (its
            // sh_addr is 0); allow for a section with a load address too.
            let rel = value.checked_sub(sec.addr).unwrap_or(value);
            if rel.checked_add(size).is_none_or(|e| e > sec.size) {
                return Err(bad(format!(
                    "symbol `{name}` ({size} bytes at {rel}) runs past its section ({} bytes)",
                    sec.size
                )));
            }
            return slice(bytes, sec.offset + rel, size, &format!("symbol `{name}`")).map(Some);
        }
    }
    Ok(None)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Builds a tiny ELF64 with one data section holding `data` at offset 3
    /// and a symbol `sym` naming it (the layout ptxas produces for a global
    /// with an initializer).
    pub(crate) fn tiny_elf(sym: &str, data: &[u8]) -> Vec<u8> {
        let mut f = vec![0u8; 64];
        f[..4].copy_from_slice(b"\x7fELF");
        f[4] = 2;
        f[5] = 1;
        // .data contents
        let data_off = f.len() as u64;
        f.extend_from_slice(b"pad");
        f.extend_from_slice(data);
        // strtab
        let str_off = f.len() as u64;
        let mut strtab = vec![0u8];
        strtab.extend_from_slice(b"other\0");
        let name_off = strtab.len() as u32;
        strtab.extend_from_slice(sym.as_bytes());
        strtab.push(0);
        f.extend_from_slice(&strtab);
        // symtab: null symbol, "other" (undefined), sym
        let sym_off = f.len() as u64;
        let mut symtab = vec![0u8; 24];
        let mut other = vec![0u8; 24];
        other[0..4].copy_from_slice(&1u32.to_le_bytes());
        symtab.extend_from_slice(&other);
        let mut s = vec![0u8; 24];
        s[0..4].copy_from_slice(&name_off.to_le_bytes());
        s[6..8].copy_from_slice(&1u16.to_le_bytes());
        s[8..16].copy_from_slice(&3u64.to_le_bytes());
        s[16..24].copy_from_slice(&(data.len() as u64).to_le_bytes());
        symtab.extend_from_slice(&s);
        f.extend_from_slice(&symtab);
        while f.len() % 8 != 0 {
            f.push(0);
        }
        let shoff = f.len() as u64;
        let sh = |kind: u32, off: u64, size: u64, link: u32, entsize: u64| {
            let mut h = vec![0u8; 64];
            h[4..8].copy_from_slice(&kind.to_le_bytes());
            h[0x18..0x20].copy_from_slice(&off.to_le_bytes());
            h[0x20..0x28].copy_from_slice(&size.to_le_bytes());
            h[0x28..0x2c].copy_from_slice(&link.to_le_bytes());
            h[0x38..0x40].copy_from_slice(&entsize.to_le_bytes());
            h
        };
        f.extend(sh(0, 0, 0, 0, 0));
        f.extend(sh(1, data_off, 3 + data.len() as u64, 0, 0));
        f.extend(sh(3, str_off, strtab.len() as u64, 0, 0));
        f.extend(sh(SHT_SYMTAB, sym_off, symtab.len() as u64, 2, 24));
        f[0x28..0x30].copy_from_slice(&shoff.to_le_bytes());
        f[0x3a..0x3c].copy_from_slice(&64u16.to_le_bytes());
        f[0x3c..0x3e].copy_from_slice(&4u16.to_le_bytes());
        f
    }

    #[test]
    fn finds_symbol_bytes() {
        let elf = tiny_elf("__cutec_manifest", b"hello\nworld");
        assert_eq!(symbol_bytes(&elf, "__cutec_manifest").unwrap(), Some(&b"hello\nworld"[..]));
        assert_eq!(symbol_bytes(&elf, "other_missing").unwrap(), None);
        assert_eq!(symbol_bytes(&elf, "__cutec").unwrap(), None);
    }

    #[test]
    fn malformed_input_is_an_error_not_a_panic() {
        let elf = tiny_elf("__cutec_manifest", b"hello");
        // Every truncation is an error or a clean miss, never a panic.
        for n in 0..elf.len() {
            let _ = symbol_bytes(&elf[..n], "__cutec_manifest");
        }
        assert!(symbol_bytes(b"not an elf at all, but long enough to hold a header ........", "x").is_err());
        // Flip every byte after the header in turn: never a panic.
        let mut bad = elf.clone();
        for i in 0..bad.len() {
            bad[i] ^= 0xff;
            let _ = symbol_bytes(&bad, "__cutec_manifest");
            bad[i] ^= 0xff;
        }
    }
}
