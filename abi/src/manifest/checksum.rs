//! The manifest's integrity check: its last line is `checksum HEX`, the FNV-1a 64 hash of every
//! byte before that line (every record, the kernels' parameter ABI included), as 16 lowercase hex
//! digits. The writer ends every manifest with it ([`seal`]) and the reader refuses a manifest
//! whose bytes do not match it, or that has none, before reading any record: a cubin damaged on
//! disk or edited by hand must not launch with checks that no longer describe its kernels.
//!
//! Why FNV-1a 64: a few lines of std-only code, and every single-byte change is caught with
//! certainty — each step (`xor` a byte, multiply by an odd prime modulo 2^64) is a bijection of
//! the 64-bit state, so two texts of one length that first differ at some byte keep different
//! states to the end. Other damage (inserted or deleted bytes) goes unnoticed with probability
//! 2^-64. It is a check against damage, not a signature: whoever can edit a cubin can also
//! recompute the hash.

use super::ManifestError;

/// The record that ends every manifest.
const KEYWORD: &str = "checksum";

/// The refusal of a manifest whose bytes do not match its checksum line.
const MISMATCH: &str =
    "manifest checksum mismatch: the cubin's manifest was altered or damaged; rebuild it with cutec build";

/// FNV-1a, 64-bit (offset basis and prime from the FNV specification).
fn fnv1a64(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3))
}

/// `body` (manifest records, a newline added if its last line has none) followed by its
/// `checksum` line: the writer's last step. Hand-written manifests (tests, tools) are sealed
/// through it too, so that there is one way to make a manifest the reader accepts.
pub fn seal(body: &str) -> String {
    let mut text = String::with_capacity(body.len() + KEYWORD.len() + 19);
    text.push_str(body);
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    let sum = fnv1a64(text.as_bytes());
    text.push_str(&format!("{KEYWORD} {sum:016x}\n"));
    text
}

/// The records of `text` (everything before its checksum line) once the line matches them.
/// Refused: a text without the line as its last line ("rebuild"), or whose bytes do not match it.
pub(super) fn verify(text: &str) -> Result<&str, ManifestError> {
    // The line the refusal names: the last (counted only for a refusal).
    let lines = || text.lines().count();
    let unterminated = text.strip_suffix('\n').unwrap_or(text);
    let (body, last) = match unterminated.rfind('\n') {
        Some(at) => (&text[..=at], &unterminated[at + 1..]),
        None => ("", unterminated),
    };
    let Some(hex) = last.strip_prefix(KEYWORD).and_then(|r| r.strip_prefix(' ')) else {
        return Err(ManifestError {
            line: lines(),
            message: "the manifest has no `checksum` line (it ends cut short, or was written by a cutec \
                      older than the checksum); rebuild the cubin with cutec build"
                .into(),
        });
    };
    // Exactly as the writer puts it: 16 lowercase hex digits, then the final newline.
    let written = hex.len() == 16 && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    let matches = written
        && text.ends_with('\n')
        && u64::from_str_radix(hex, 16).is_ok_and(|sum| sum == fnv1a64(body.as_bytes()));
    if matches {
        Ok(body)
    } else {
        Err(ManifestError { line: lines(), message: MISMATCH.into() })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fnv1a64_matches_the_specification_vectors() {
        assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
        assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    }

    #[test]
    fn a_sealed_text_verifies_to_its_body() {
        let body = "cutec-manifest 1\narch sm_90\n";
        assert_eq!(verify(&seal(body)), Ok(body));
        // A last line without its newline gets one before the checksum.
        assert_eq!(verify(&seal("cutec-manifest 1")), Ok("cutec-manifest 1\n"));
    }

    #[test]
    fn a_missing_or_malformed_checksum_line_is_refused() {
        let sealed = seal("cutec-manifest 1\narch sm_90\n");
        let no_line = verify("cutec-manifest 1\narch sm_90\n").unwrap_err();
        assert_eq!(no_line.line, 2);
        assert!(no_line.message.contains("no `checksum` line"), "{}", no_line.message);
        for bad in [
            sealed.trim_end().to_string(),
            sealed.replace("checksum ", "checksum 0"),
            sealed.replace("checksum ", "checksum 0x"),
            format!("{sealed}\n"),
            sealed.replace("checksum ", "checksum  "),
        ] {
            let e = verify(&bad).unwrap_err();
            assert!(e.message == MISMATCH || e.message.contains("no `checksum` line"), "{bad:?}: {}", e.message);
        }
    }
}
