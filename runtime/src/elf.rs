//! Finds a symbol in a cubin's ELF64 symbol table and reads the bytes of its initializer,
//! with the `object` crate's ELF reader (bounds-checked; built with its `unaligned`
//! feature, so the bytes need no particular alignment). Used to read the
//! `__cutec_manifest` global on the host, with no GPU and no driver. Malformed input
//! gives `Err`, never a panic.

use object::elf::{FileHeader64, SHT_NOBITS, SHT_SYMTAB};
use object::read::elf::{FileHeader, SectionHeader, SectionTable, Sym};
use object::{LittleEndian, StringTable};

use crate::error::{Result, RuntimeError};

fn bad(why: impl std::fmt::Display) -> RuntimeError {
    RuntimeError::InvalidImage(format!("malformed ELF: {why}"))
}

/// True when `bytes` starts with the ELF magic.
pub fn is_elf(bytes: &[u8]) -> bool {
    bytes.starts_with(b"\x7fELF")
}

/// The first bytes of `bytes` in hex (`7f 45 4c 46 ...`), for messages about an image of an
/// unknown kind.
pub(crate) fn leading_bytes(bytes: &[u8]) -> String {
    let head: Vec<String> = bytes.iter().take(8).map(|b| format!("{b:02x}")).collect();
    head.join(" ")
}

/// The initializer bytes of the symbol `name` (an object with a size, in a
/// section with file contents), or `None` when the file has no such symbol.
pub fn symbol_bytes<'a>(bytes: &'a [u8], name: &str) -> Result<Option<&'a [u8]>> {
    if !is_elf(bytes) {
        return Err(bad("no ELF magic"));
    }
    let header = FileHeader64::<LittleEndian>::parse(bytes).map_err(bad)?;
    if !header.is_class_64() {
        return Err(bad("not a 64-bit ELF (cubins are ELF64)"));
    }
    if !header.is_little_endian() {
        return Err(bad("not little-endian"));
    }
    let endian = LittleEndian;
    // Only the section headers are needed (not their names), so a missing or broken
    // section name table is no error here.
    let sections: SectionTable<FileHeader64<LittleEndian>> =
        SectionTable::new(header.section_headers(endian, bytes).map_err(bad)?, StringTable::default());
    let symbols = sections.symbols(endian, bytes, SHT_SYMTAB).map_err(bad)?;
    for (index, sym) in symbols.enumerate() {
        if symbols.symbol_name(endian, sym).ok() != Some(name.as_bytes()) {
            continue;
        }
        // An undefined (or absolute/common) symbol of this name is no definition: look on.
        let Some(shndx) = symbols.symbol_section(endian, sym, index).map_err(bad)? else {
            continue;
        };
        let sec = sections
            .section(shndx)
            .map_err(|_| bad(format!("symbol `{name}` is in section {}, which does not exist", shndx.0)))?;
        if sec.sh_type(endian) == SHT_NOBITS {
            return Err(bad(format!("symbol `{name}` has no initializer (it is in a NOBITS section)")));
        }
        let data = sec.data(endian, bytes).map_err(bad)?;
        // In a cubin st_value is the offset inside the section (its sh_addr is 0);
        // allow for a section with a load address too.
        let value = sym.st_value(endian);
        let size = sym.st_size(endian);
        let rel = value.checked_sub(sec.sh_addr(endian)).unwrap_or(value);
        let range = usize::try_from(rel)
            .ok()
            .zip(usize::try_from(size).ok())
            .and_then(|(start, len)| Some(start..start.checked_add(len)?));
        return match range.and_then(|r| data.get(r)) {
            Some(b) => Ok(Some(b)),
            None => Err(bad(format!(
                "symbol `{name}` ({size} bytes at {rel}) runs past its section ({} bytes)",
                data.len()
            ))),
        };
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
        f[4] = 2; // ELFCLASS64
        f[5] = 1; // little-endian
        f[6] = 1; // EV_CURRENT
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
        while !f.len().is_multiple_of(8) {
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
        // A 32-bit or big-endian ELF is refused.
        let mut e = elf.clone();
        e[4] = 1;
        assert!(symbol_bytes(&e, "__cutec_manifest").is_err());
        let mut e = elf.clone();
        e[5] = 2;
        assert!(symbol_bytes(&e, "__cutec_manifest").is_err());
    }

    const CUBIN: &[u8] = include_bytes!("../testdata/vector_add.sm_90.elf");

    #[test]
    fn reads_a_real_cubin_at_any_alignment() {
        let manifest = symbol_bytes(CUBIN, "__cutec_manifest").unwrap().unwrap();
        assert_eq!(manifest.len(), 277);
        assert_eq!(symbol_bytes(CUBIN, "no_such_symbol").unwrap(), None);
        // The bytes need no alignment (the reader is built with `unaligned`).
        for shift in 1..8 {
            let mut v = vec![0u8; shift];
            v.extend_from_slice(CUBIN);
            assert_eq!(symbol_bytes(&v[shift..], "__cutec_manifest").unwrap(), Some(manifest));
        }
    }

    #[test]
    fn corrupt_cubin_never_panics() {
        for n in (0..CUBIN.len()).step_by(7) {
            let _ = symbol_bytes(&CUBIN[..n], "__cutec_manifest");
        }
        let mut bad = CUBIN.to_vec();
        for i in 0..bad.len() {
            for flip in [0xff, 0x80, 0x01] {
                bad[i] ^= flip;
                let _ = symbol_bytes(&bad, "__cutec_manifest");
                bad[i] ^= flip;
            }
        }
    }
}
