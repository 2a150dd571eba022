//! Made-up frames for the tests and the figures: a page (white, coloured blocks, lines of
//! antialiased glyph-like runs) and a photo (gradients and noise). Deterministic.

use super::Frame;

/// A small deterministic random source (a linear congruential generator).
struct Dice(u64);

impl Dice {
    /// The next number below `below`.
    fn below(&mut self, below: u32) -> u32 {
        self.0 = self.0.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) % below.max(1) as u64) as u32
    }
}

/// Paints a rectangle, clipped to the frame.
fn fill(frame: &mut Frame, x: u32, y: u32, width: u32, height: u32, rgba: [u8; 4]) {
    for row in y..(y + height).min(frame.height) {
        for column in x..(x + width).min(frame.width) {
            frame.set_pixel(column, row, rgba);
        }
    }
}

/// `ink` over `paper` at `coverage` (0 to 255), as antialiased text is drawn.
fn blend(ink: [u8; 4], paper: [u8; 4], coverage: u32) -> [u8; 4] {
    let mix = |a: u8, b: u8| ((a as u32 * coverage + b as u32 * (255 - coverage)) / 255) as u8;
    [mix(ink[0], paper[0]), mix(ink[1], paper[1]), mix(ink[2], paper[2]), 255]
}

/// A line of glyph-like runs at (x, y), 12 px high, `width` long: strokes with
/// intermediate coverage at their edges, words apart.
fn text(frame: &mut Frame, dice: &mut Dice, x: u32, y: u32, width: u32, ink: [u8; 4]) {
    let mut column = x;
    while column + 8 < (x + width).min(frame.width) {
        let word = 2 + dice.below(8);
        for _ in 0..word {
            let glyph_width = 5 + dice.below(3);
            for stroke in 0..2 + dice.below(3) {
                let vertical = dice.below(2) == 0;
                let (sx, sy) = (column + dice.below(glyph_width), y + 2 + dice.below(8));
                let length = 3 + dice.below(7);
                for step in 0..length {
                    let (px, py) = if vertical { (sx, sy + step) } else { (sx + step.min(glyph_width), sy) };
                    let edge = step == 0 || step + 1 == length || stroke % 2 == 1;
                    let coverage = if edge { 40 + dice.below(180) } else { 230 + dice.below(26) };
                    if px < frame.width && py < frame.height && py < y + 12 {
                        let paper = frame.pixel(px, py);
                        frame.set_pixel(px, py, blend(ink, paper, coverage));
                    }
                }
            }
            column += glyph_width + 1;
        }
        column += 5;
    }
}

/// A made-up page: white, a grey header, coloured blocks (buttons, fields, a picture
/// strip), paragraphs of dark text and blue links, `width` x `height`.
pub(super) fn page(width: u32, height: u32) -> Frame {
    let white = [255, 255, 255, 255];
    let mut frame = Frame::filled(width, height, white);
    let mut dice = Dice(7);
    fill(&mut frame, 0, 0, width, 56, [238, 238, 238, 255]);
    text(&mut frame, &mut dice, 16, 20, width.saturating_sub(200), [30, 30, 30, 255]);
    let mut y = 80;
    while y + 40 < height {
        match dice.below(6) {
            0 => {
                fill(&mut frame, 16, y, 120, 32, [26, 115, 232, 255]);
                text(&mut frame, &mut dice, 28, y + 10, 96, white);
                fill(&mut frame, 150, y, 300, 32, [118, 118, 118, 255]);
                fill(&mut frame, 151, y + 1, 298, 30, white);
                y += 48;
            }
            1 => {
                let colours = [[220, 53, 69, 255], [40, 167, 69, 255], [255, 193, 7, 255], [23, 162, 184, 255]];
                for (index, colour) in colours.iter().enumerate() {
                    fill(&mut frame, 16 + index as u32 * 180, y, 160, 90, *colour);
                }
                y += 106;
            }
            _ => {
                for _ in 0..3 + dice.below(5) {
                    let ink = if dice.below(5) == 0 { [0, 0, 238, 255] } else { [34, 34, 34, 255] };
                    text(&mut frame, &mut dice, 16, y, width.saturating_sub(40), ink);
                    y += 18;
                }
                y += 14;
            }
        }
    }
    frame
}

/// A made-up photo: smooth colour gradients under fine noise, `width` x `height`.
pub(super) fn photo(width: u32, height: u32) -> Frame {
    let mut frame = Frame::filled(width, height, [0, 0, 0, 255]);
    let mut dice = Dice(11);
    for y in 0..height {
        for x in 0..width {
            let noise = dice.below(24) as i32 - 12;
            let channel = |value: u32| (value as i32 + noise).clamp(0, 255) as u8;
            let red = x * 255 / width.max(1);
            let green = y * 255 / height.max(1);
            let blue = ((x + y) * 128 / (width + height).max(1)) + 64;
            frame.set_pixel(x, y, [channel(red), channel(green), channel(blue), 255]);
        }
    }
    frame
}
