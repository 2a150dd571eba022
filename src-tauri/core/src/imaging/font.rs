//! A tiny built-in bitmap font (5 x 7 cells, drawn at a whole-number scale) for the labels
//! of marks: the digits, the lowercase letters (uppercase is drawn as lowercase), `-`,
//! `_` and `:`; any other character is a hollow box. Our own glyphs, no font files.

use super::{Frame, PixelRect};

/// Columns of a glyph cell.
pub(super) const GLYPH_WIDTH: u32 = 5;
/// Rows of a glyph cell.
pub(super) const GLYPH_HEIGHT: u32 = 7;

/// One glyph: seven rows top to bottom, each row's five low bits its pixels, the
/// leftmost pixel in bit 4.
type Glyph = [u8; 7];

/// What a character is drawn as.
pub(super) fn glyph(character: char) -> Glyph {
    match character.to_ascii_lowercase() {
        '0' => [0b01110, 0b10001, 0b10011, 0b10101, 0b11001, 0b10001, 0b01110],
        '1' => [0b00100, 0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        '2' => [0b01110, 0b10001, 0b00001, 0b00010, 0b00100, 0b01000, 0b11111],
        '3' => [0b11111, 0b00010, 0b00100, 0b00010, 0b00001, 0b10001, 0b01110],
        '4' => [0b00010, 0b00110, 0b01010, 0b10010, 0b11111, 0b00010, 0b00010],
        '5' => [0b11111, 0b10000, 0b11110, 0b00001, 0b00001, 0b10001, 0b01110],
        '6' => [0b00110, 0b01000, 0b10000, 0b11110, 0b10001, 0b10001, 0b01110],
        '7' => [0b11111, 0b00001, 0b00010, 0b00100, 0b01000, 0b01000, 0b01000],
        '8' => [0b01110, 0b10001, 0b10001, 0b01110, 0b10001, 0b10001, 0b01110],
        '9' => [0b01110, 0b10001, 0b10001, 0b01111, 0b00001, 0b00010, 0b01100],
        'a' => [0b00000, 0b00000, 0b01110, 0b00001, 0b01111, 0b10001, 0b01111],
        'b' => [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b11110],
        'c' => [0b00000, 0b00000, 0b01110, 0b10000, 0b10000, 0b10001, 0b01110],
        'd' => [0b00001, 0b00001, 0b01101, 0b10011, 0b10001, 0b10001, 0b01111],
        'e' => [0b00000, 0b00000, 0b01110, 0b10001, 0b11111, 0b10000, 0b01110],
        'f' => [0b00110, 0b01001, 0b01000, 0b11100, 0b01000, 0b01000, 0b01000],
        'g' => [0b00000, 0b01111, 0b10001, 0b10001, 0b01111, 0b00001, 0b01110],
        'h' => [0b10000, 0b10000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001],
        'i' => [0b00100, 0b00000, 0b01100, 0b00100, 0b00100, 0b00100, 0b01110],
        'j' => [0b00010, 0b00000, 0b00110, 0b00010, 0b00010, 0b10010, 0b01100],
        'k' => [0b10000, 0b10000, 0b10010, 0b10100, 0b11000, 0b10100, 0b10010],
        'l' => [0b01100, 0b00100, 0b00100, 0b00100, 0b00100, 0b00100, 0b01110],
        'm' => [0b00000, 0b00000, 0b11010, 0b10101, 0b10101, 0b10001, 0b10001],
        'n' => [0b00000, 0b00000, 0b10110, 0b11001, 0b10001, 0b10001, 0b10001],
        'o' => [0b00000, 0b00000, 0b01110, 0b10001, 0b10001, 0b10001, 0b01110],
        'p' => [0b00000, 0b11110, 0b10001, 0b10001, 0b11110, 0b10000, 0b10000],
        'q' => [0b00000, 0b01111, 0b10001, 0b10001, 0b01111, 0b00001, 0b00001],
        'r' => [0b00000, 0b00000, 0b10110, 0b11001, 0b10000, 0b10000, 0b10000],
        's' => [0b00000, 0b00000, 0b01111, 0b10000, 0b01110, 0b00001, 0b11110],
        't' => [0b01000, 0b01000, 0b11100, 0b01000, 0b01000, 0b01001, 0b00110],
        'u' => [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b10011, 0b01101],
        'v' => [0b00000, 0b00000, 0b10001, 0b10001, 0b10001, 0b01010, 0b00100],
        'w' => [0b00000, 0b00000, 0b10001, 0b10001, 0b10101, 0b10101, 0b01010],
        'x' => [0b00000, 0b00000, 0b10001, 0b01010, 0b00100, 0b01010, 0b10001],
        'y' => [0b00000, 0b10001, 0b10001, 0b01111, 0b00001, 0b10001, 0b01110],
        'z' => [0b00000, 0b00000, 0b11111, 0b00010, 0b00100, 0b01000, 0b11111],
        '-' => [0b00000, 0b00000, 0b00000, 0b11111, 0b00000, 0b00000, 0b00000],
        '_' => [0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b00000, 0b11111],
        ':' => [0b00000, 0b01100, 0b01100, 0b00000, 0b01100, 0b01100, 0b00000],
        _ => [0b11111, 0b10001, 0b10001, 0b10001, 0b10001, 0b10001, 0b11111],
    }
}

/// How wide `text` is drawn at `scale`: its glyphs with one scaled column between them.
pub(super) fn text_width(text: &str, scale: u32) -> u32 {
    let count = text.chars().count() as u32;
    if count == 0 {
        return 0;
    }
    count * GLYPH_WIDTH * scale + (count - 1) * scale
}

/// How high text is drawn at `scale`.
pub(super) fn text_height(scale: u32) -> u32 {
    GLYPH_HEIGHT * scale
}

/// Draws `text` with its top-left corner at (x, y), each glyph pixel a `scale` x `scale`
/// square of `colour`, leaving out whatever falls outside `clip` (and the frame).
pub(super) fn draw_text(frame: &mut Frame, text: &str, x: u32, y: u32, scale: u32, colour: [u8; 4], clip: PixelRect) {
    let clip = clip.intersection(&PixelRect { x: 0, y: 0, width: frame.width, height: frame.height });
    let mut left = x;
    for character in text.chars() {
        for (row, bits) in glyph(character).iter().enumerate() {
            for column in 0..GLYPH_WIDTH {
                if bits & (1 << (GLYPH_WIDTH - 1 - column)) == 0 {
                    continue;
                }
                let square = PixelRect { x: left + column * scale, y: y + row as u32 * scale, width: scale, height: scale };
                let visible = square.intersection(&clip);
                for py in visible.y..visible.bottom() {
                    for px in visible.x..visible.right() {
                        frame.set_pixel(px, py, colour);
                    }
                }
            }
        }
        left += (GLYPH_WIDTH + 1) * scale;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_glyph_of_a_ref_has_ink_and_they_differ() {
        let characters: Vec<char> = ('0'..='9').chain('a'..='z').chain(['-', '_', ':']).collect();
        let mut seen = std::collections::HashSet::new();
        for character in &characters {
            let glyph = glyph(*character);
            assert!(glyph.iter().any(|row| *row != 0), "{character} has pixels");
            assert!(glyph.iter().all(|row| *row < 32), "{character} fits five columns");
            assert!(seen.insert(glyph), "{character} looks like another character");
        }
        assert_eq!(glyph('E'), glyph('e'), "uppercase is drawn as lowercase");
        assert!(!seen.contains(&glyph('%')), "an unknown character is a box of its own");
    }

    #[test]
    fn text_is_drawn_at_its_scale_and_clipped() {
        assert_eq!(text_width("e12", 2), 3 * 10 + 2 * 2);
        assert_eq!(text_width("", 2), 0);
        let mut frame = Frame::filled(40, 20, [255, 255, 255, 255]);
        let whole = PixelRect { x: 0, y: 0, width: 40, height: 20 };
        draw_text(&mut frame, "1", 0, 0, 2, [0, 0, 0, 255], whole);
        // '1' has its top pixel in column 2: a 2x2 square at (4, 0).
        assert_eq!(frame.pixel(4, 0), [0, 0, 0, 255]);
        assert_eq!(frame.pixel(5, 1), [0, 0, 0, 255]);
        assert_eq!(frame.pixel(0, 0), [255, 255, 255, 255]);
        let mut clipped = Frame::filled(40, 20, [255, 255, 255, 255]);
        draw_text(&mut clipped, "8888", 0, 0, 2, [0, 0, 0, 255], PixelRect { x: 0, y: 0, width: 6, height: 20 });
        assert!((6..40).all(|x| (0..20).all(|y| clipped.pixel(x, y) == [255, 255, 255, 255])), "nothing past the clip");
        assert_eq!(clipped.pixel(2, 0), [0, 0, 0, 255]);
    }
}
