//! What a file's first bytes say it is: the signatures artifacts are checked against (PNG,
//! JPEG, GIF, WebP, PDF, mp4/mov `ftyp`, WebM EBML, an SVG sniff) and the pixel size of the
//! raster images, read from their headers without decoding.

/// A format recognised by its signature.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Png,
    Jpeg,
    Gif,
    Webp,
    Svg,
    Pdf,
    Mp4,
    Webm,
}

impl Format {
    pub fn mime(self) -> &'static str {
        match self {
            Format::Png => "image/png",
            Format::Jpeg => "image/jpeg",
            Format::Gif => "image/gif",
            Format::Webp => "image/webp",
            Format::Svg => "image/svg+xml",
            Format::Pdf => "application/pdf",
            Format::Mp4 => "video/mp4",
            Format::Webm => "video/webm",
        }
    }

    pub fn ext(self) -> &'static str {
        match self {
            Format::Png => "png",
            Format::Jpeg => "jpg",
            Format::Gif => "gif",
            Format::Webp => "webp",
            Format::Svg => "svg",
            Format::Pdf => "pdf",
            Format::Mp4 => "mp4",
            Format::Webm => "webm",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Format::Png => "PNG",
            Format::Jpeg => "JPEG",
            Format::Gif => "GIF",
            Format::Webp => "WebP",
            Format::Svg => "SVG",
            Format::Pdf => "PDF",
            Format::Mp4 => "MP4",
            Format::Webm => "WebM",
        }
    }

    /// The format a MIME type claims (parameters ignored), if it is one that is checked.
    pub fn from_mime(mime: &str) -> Option<Format> {
        let m = mime
            .split(';')
            .next()
            .unwrap_or("")
            .trim()
            .to_ascii_lowercase();
        Some(match m.as_str() {
            "image/png" => Format::Png,
            "image/jpeg" | "image/jpg" => Format::Jpeg,
            "image/gif" => Format::Gif,
            "image/webp" => Format::Webp,
            "image/svg+xml" => Format::Svg,
            "application/pdf" => Format::Pdf,
            "video/mp4" | "video/quicktime" => Format::Mp4,
            "video/webm" => Format::Webm,
            _ => return None,
        })
    }
}

/// The MIME type an extension suggests (lower case, no dot).
pub fn mime_of_ext(ext: &str) -> Option<&'static str> {
    Some(match ext.to_ascii_lowercase().as_str() {
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "gif" => "image/gif",
        "webp" => "image/webp",
        "svg" => "image/svg+xml",
        "pdf" => "application/pdf",
        "mp4" | "m4v" => "video/mp4",
        "mov" => "video/quicktime",
        "webm" => "video/webm",
        "md" | "markdown" => "text/markdown",
        "txt" => "text/plain",
        "html" | "htm" => "text/html",
        "json" => "application/json",
        "mp3" => "audio/mpeg",
        "wav" => "audio/wav",
        "ogg" => "audio/ogg",
        _ => return None,
    })
}

/// The format `bytes` start with, if any.
pub fn sniff(bytes: &[u8]) -> Option<Format> {
    let b = bytes;
    if b.starts_with(b"\x89PNG\r\n\x1a\n") {
        return Some(Format::Png);
    }
    if b.starts_with(&[0xFF, 0xD8, 0xFF]) {
        return Some(Format::Jpeg);
    }
    if b.starts_with(b"GIF87a") || b.starts_with(b"GIF89a") {
        return Some(Format::Gif);
    }
    if b.len() >= 12 && &b[0..4] == b"RIFF" && &b[8..12] == b"WEBP" {
        return Some(Format::Webp);
    }
    if b.starts_with(b"%PDF-") {
        return Some(Format::Pdf);
    }
    if b.len() >= 8 && &b[4..8] == b"ftyp" {
        return Some(Format::Mp4);
    }
    if b.starts_with(&[0x1A, 0x45, 0xDF, 0xA3]) {
        return Some(Format::Webm);
    }
    let head = String::from_utf8_lossy(&b[..b.len().min(1024)]).to_ascii_lowercase();
    let head = head.trim_start_matches('\u{feff}').trim_start();
    if (head.starts_with("<?xml") || head.starts_with("<svg") || head.starts_with("<!--"))
        && head.contains("<svg")
    {
        return Some(Format::Svg);
    }
    None
}

/// Width and height of a PNG, GIF, JPEG or WebP from its header.
pub fn dimensions(bytes: &[u8]) -> Option<(u32, u32)> {
    let b = bytes;
    let be32 =
        |i: usize| -> Option<u32> { Some(u32::from_be_bytes(b.get(i..i + 4)?.try_into().ok()?)) };
    let le16 = |i: usize| -> Option<u32> {
        Some(u16::from_le_bytes(b.get(i..i + 2)?.try_into().ok()?) as u32)
    };
    let be16 = |i: usize| -> Option<u32> {
        Some(u16::from_be_bytes(b.get(i..i + 2)?.try_into().ok()?) as u32)
    };
    let le24 = |i: usize| -> Option<u32> {
        let s = b.get(i..i + 3)?;
        Some(s[0] as u32 | (s[1] as u32) << 8 | (s[2] as u32) << 16)
    };
    match sniff(b)? {
        Format::Png => Some((be32(16)?, be32(20)?)),
        Format::Gif => Some((le16(6)?, le16(8)?)),
        Format::Jpeg => {
            let mut i = 2;
            while i + 9 < b.len() {
                if b[i] != 0xFF {
                    i += 1;
                    continue;
                }
                let marker = b[i + 1];
                let len = be16(i + 2)? as usize;
                // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC).
                if (0xC0..=0xCF).contains(&marker) && ![0xC4, 0xC8, 0xCC].contains(&marker) {
                    return Some((be16(i + 7)?, be16(i + 5)?));
                }
                i += 2 + len;
            }
            None
        }
        Format::Webp => match b.get(12..16)? {
            b"VP8X" => Some((le24(24)? + 1, le24(27)? + 1)),
            b"VP8 " => Some((le16(26)? & 0x3FFF, le16(28)? & 0x3FFF)),
            b"VP8L" => {
                let v = u32::from_le_bytes(b.get(21..25)?.try_into().ok()?);
                Some(((v & 0x3FFF) + 1, ((v >> 14) & 0x3FFF) + 1))
            }
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signatures_and_sizes() {
        let mut png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR".to_vec();
        png.extend_from_slice(&640u32.to_be_bytes());
        png.extend_from_slice(&480u32.to_be_bytes());
        assert_eq!(sniff(&png), Some(Format::Png));
        assert_eq!(dimensions(&png), Some((640, 480)));
        let gif = b"GIF89a\x20\x00\x10\x00".to_vec();
        assert_eq!(dimensions(&gif), Some((32, 16)));
        assert_eq!(sniff(b"%PDF-1.7\n"), Some(Format::Pdf));
        assert_eq!(sniff(b"\0\0\0\x18ftypmp42"), Some(Format::Mp4));
        assert_eq!(sniff(&[0x1A, 0x45, 0xDF, 0xA3, 1]), Some(Format::Webm));
        assert_eq!(
            sniff(b"<?xml version='1.0'?><svg xmlns='x'/>"),
            Some(Format::Svg)
        );
        assert_eq!(sniff(b"hello"), None);
        assert_eq!(Format::from_mime("image/PNG; q=1"), Some(Format::Png));
    }
}
