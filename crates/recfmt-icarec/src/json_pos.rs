//! Byte offsets inside JSON text, so errors about `schema.json` say where to look.

/// Byte offset of the 1-based `line` and `column` that `serde_json` reports.
pub(crate) fn offset_of(text: &[u8], line: usize, column: usize) -> u64 {
    let mut current = 1usize;
    let mut start = 0usize;
    if line > 1 {
        for (i, b) in text.iter().enumerate() {
            if *b == b'\n' {
                current += 1;
                if current == line {
                    start = i + 1;
                    break;
                }
            }
        }
    }
    (start + column.saturating_sub(1)).min(text.len()) as u64
}

/// Offsets of the members of the top-level object: `(key, offset of the key's opening quote)`,
/// and for the member named `array_key` holding an array, the offsets of its elements.
///
/// The text is assumed to be valid JSON (it was parsed before); on anything odd the scan stops
/// and returns what it found.
#[derive(Debug, Default)]
pub(crate) struct Positions {
    /// Top-level keys with the offsets of their opening quotes.
    pub keys: Vec<(String, u64)>,
    /// Offsets of the elements of the array member asked for.
    pub elements: Vec<u64>,
}

impl Positions {
    /// The offset of top-level member `key`, or 0.
    pub fn key(&self, key: &str) -> u64 {
        self.keys
            .iter()
            .find(|(k, _)| k == key)
            .map_or(0, |(_, o)| *o)
    }

    /// The offset of element `i` of the array member, or 0.
    pub fn element(&self, i: usize) -> u64 {
        self.elements.get(i).copied().unwrap_or(0)
    }
}

/// Scans `text` for the positions described in [`Positions`].
pub(crate) fn scan(text: &[u8], array_key: &str) -> Positions {
    let mut out = Positions::default();
    let mut depth = 0usize;
    let mut i = 0usize;
    let mut last_key: Option<String> = None;
    let mut in_target = false;
    let mut expect_element = false;
    let skip_ws = |mut j: usize| {
        while j < text.len() && text[j].is_ascii_whitespace() {
            j += 1;
        }
        j
    };
    while i < text.len() {
        let b = text[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        if expect_element && b != b']' {
            out.elements.push(i as u64);
            expect_element = false;
        }
        match b {
            b'"' => {
                let start = i;
                i += 1;
                while i < text.len() && text[i] != b'"' {
                    if text[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                let end = i.min(text.len());
                i += 1;
                if depth == 1 && text.get(skip_ws(i)) == Some(&b':') {
                    let key = String::from_utf8_lossy(&text[start + 1..end]).into_owned();
                    out.keys.push((key.clone(), start as u64));
                    last_key = Some(key);
                }
                continue;
            }
            b'{' | b'[' => {
                depth += 1;
                if b == b'[' && depth == 2 && last_key.as_deref() == Some(array_key) {
                    in_target = true;
                    expect_element = true;
                }
            }
            b'}' | b']' => {
                if depth == 2 && in_target {
                    in_target = false;
                }
                depth = depth.saturating_sub(1);
            }
            b',' if depth == 2 && in_target => expect_element = true,
            _ => {}
        }
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_keys_and_array_elements() {
        let text = br#"{"a": 1, "signals": [ {"x": "]"}, {"y": [1, 2]} ], "checksum": "s"}"#;
        let p = scan(text, "signals");
        assert_eq!(p.key("a"), 1);
        assert_eq!(&text[p.key("checksum") as usize..][..10], b"\"checksum\"");
        assert_eq!(p.elements.len(), 2);
        assert_eq!(text[p.element(0) as usize], b'{');
        assert_eq!(&text[p.element(1) as usize..][..4], br#"{"y""#);
    }

    #[test]
    fn line_and_column_map_to_bytes() {
        let text = b"{\n  \"a\": x\n}";
        assert_eq!(offset_of(text, 2, 8), 9);
        assert_eq!(text[9], b'x');
        assert_eq!(offset_of(text, 1, 1), 0);
    }
}
