//! Counting the pages of a PDF as WebKit's printing writes it (Skia's PDF backend: PDF
//! 1.4, every object plain in the file, content streams compressed): its page objects,
//! dictionaries of `/Type /Page`, read outside streams. Should a writer pack its objects
//! into compressed object streams, the page tree's `/Count` (the root's is the largest)
//! is read instead.

/// PDF's white-space characters.
const WHITESPACE: &[u8] = b"\0\t\n\x0c\r ";
/// PDF's delimiter characters, which end a name.
const DELIMITERS: &[u8] = b"()<>[]{}/%";

/// The number of pages of `pdf`; `None` when it has neither page objects nor a page count.
pub(super) fn page_count(pdf: &[u8]) -> Option<u32> {
    let mut leaves: u32 = 0;
    let mut largest_count: Option<u32> = None;
    let mut at = 0;
    while at < pdf.len() {
        let rest = &pdf[at..];
        if rest.starts_with(b"stream") && opens_stream(pdf, at) {
            // A stream's bytes are data, not objects: jump past it.
            match find(&pdf[at..], b"endstream") {
                Some(offset) => at += offset + b"endstream".len(),
                None => break,
            }
            continue;
        }
        if let Some(after_key) = rest.strip_prefix(b"/Type") {
            let value = skip_whitespace(after_key);
            if name_is(value, b"/Page") {
                leaves = leaves.saturating_add(1);
            }
            at += b"/Type".len();
            continue;
        }
        if let Some(after_key) = rest.strip_prefix(b"/Count") {
            if let Some(count) = leading_number(skip_whitespace(after_key)) {
                largest_count = Some(largest_count.map_or(count, |largest| largest.max(count)));
            }
            at += b"/Count".len();
            continue;
        }
        at += 1;
    }
    if leaves > 0 {
        Some(leaves)
    } else {
        largest_count
    }
}

/// Whether the keyword `stream` at `at` opens a stream: it follows a dictionary's `>>`
/// (white space between) and ends its line.
fn opens_stream(pdf: &[u8], at: usize) -> bool {
    let before = pdf[..at].iter().rev().skip_while(|byte| WHITESPACE.contains(byte)).take(2).collect::<Vec<_>>();
    let after = &pdf[at + b"stream".len()..];
    before == [&b'>', &b'>'] && (after.starts_with(b"\n") || after.starts_with(b"\r\n"))
}

/// Whether `text` starts with exactly the name `name` (not a longer name).
fn name_is(text: &[u8], name: &[u8]) -> bool {
    text.strip_prefix(name).is_some_and(|after| after.first().is_none_or(|next| WHITESPACE.contains(next) || DELIMITERS.contains(next)))
}

fn skip_whitespace(text: &[u8]) -> &[u8] {
    let start = text.iter().position(|byte| !WHITESPACE.contains(byte)).unwrap_or(text.len());
    &text[start..]
}

/// The unsigned integer `text` starts with, if any.
fn leading_number(text: &[u8]) -> Option<u32> {
    let digits = text.iter().take_while(|byte| byte.is_ascii_digit()).count();
    std::str::from_utf8(&text[..digits]).ok()?.parse().ok()
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

#[cfg(test)]
mod tests {
    use super::page_count;

    /// A PDF laid out as Skia writes one, with `pages` page objects and a content stream
    /// whose (uncompressed) bytes happen to spell a page dictionary.
    fn skia_like(pages: u32) -> Vec<u8> {
        let mut pdf = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<</Producer (Skia/PDF m139)>>\nendobj\n".to_vec();
        pdf.extend_from_slice(b"2 0 obj\n<</Length 22>> stream\n/Type /Page /Count 99\nendstream\nendobj\n");
        for page in 0..pages {
            pdf.extend_from_slice(format!("{} 0 obj\n<</Type /Page\n/Resources <<>>\n/Parent 9 0 R>>\nendobj\n", page + 3).as_bytes());
        }
        pdf.extend_from_slice(format!("9 0 obj\n<</Type /Pages\n/Count {pages}\n/Kids [3 0 R]>>\nendobj\n").as_bytes());
        pdf.extend_from_slice(b"10 0 obj\n<</Type /Catalog\n/Pages 9 0 R>>\nendobj\ntrailer\n<</Root 10 0 R>>\n%%EOF\n");
        pdf
    }

    #[test]
    fn counts_the_page_objects_and_not_what_a_stream_holds() {
        assert_eq!(page_count(&skia_like(3)), Some(3));
        assert_eq!(page_count(&skia_like(1)), Some(1));
        assert_eq!(page_count(&skia_like(12)), Some(12));
    }

    #[test]
    fn a_page_tree_node_is_not_a_page_and_names_may_touch() {
        let pdf = b"%PDF-1.7\n1 0 obj<</Type/Pages/Kids[2 0 R 3 0 R]/Count 2>>endobj\n\
                    2 0 obj<</Type/Page/Parent 1 0 R>>endobj\n3 0 obj<</Type/Page>>endobj\n4 0 obj<</Type/PageLabel>>endobj\n";
        assert_eq!(page_count(pdf), Some(2));
    }

    #[test]
    fn without_page_objects_the_root_count_is_read() {
        // Pages packed into a compressed object stream: only the tree's counts are readable.
        let pdf = b"%PDF-1.7\n5 0 obj\n<</Type /ObjStm /N 4 /Length 3>>stream\nxyz\nendstream\nendobj\n\
                    6 0 obj<</Type /Pages /Count 7 /Kids [7 0 R 8 0 R]>>endobj\n7 0 obj<</Type /Pages /Count 4>>endobj\n";
        assert_eq!(page_count(pdf), Some(7));
    }

    #[test]
    fn what_is_not_a_pdf_has_no_count() {
        assert_eq!(page_count(b""), None);
        assert_eq!(page_count(b"<html>not a pdf</html>"), None);
        // A stream that never ends is not read as objects.
        assert_eq!(page_count(b"1 0 obj\n<</Length 9>> stream\n/Type /Page"), None);
    }
}
