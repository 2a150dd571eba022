//! The measurements behind the module's choices (PNG layout and compression, the
//! resampling filter), printed, not asserted: figures depend on the machine. Run in release:
//! `cargo test -p malo-core --release --lib imaging::figures -- --ignored --nocapture`.
//! Real screenshots are measured too when `MALO_IMAGING_SHOTS` names a folder of PNGs
//! (say, Chromium's `--screenshot` of the benchmark pages; never committed), and the
//! half-size and marked pictures are written into `MALO_IMAGING_OUT` when it names a folder.

use std::time::Instant;

use image::imageops::FilterType;
use png::{DeflateCompression, Filter};

use super::png_writer::{encode_with, Palette, PngSettings};
use super::{draw_marks, encode, fit, samples, Format, Frame, Mark};

/// Runs of each measurement; the fastest is printed (the machine is shared: the fastest run
/// is the one least disturbed).
const RUNS: usize = 5;

/// What a piece of work cost: the shortest CPU time and wall time of `RUNS` runs, in ms.
#[derive(Debug, Clone, Copy)]
struct Cost {
    /// CPU time of the thread (what the work costs, whoever else runs).
    cpu_ms: f64,
    /// Wall time (what a caller waited, on this machine at that moment).
    wall_ms: f64,
}

impl std::fmt::Display for Cost {
    fn fmt(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(formatter, "{:>7.1} ms CPU {:>7.1} ms wall", self.cpu_ms, self.wall_ms)
    }
}

/// The cost of `work` over `RUNS` runs, and its last result.
fn timed<T>(mut work: impl FnMut() -> T) -> (Cost, T) {
    let mut cost = Cost { cpu_ms: f64::MAX, wall_ms: f64::MAX };
    let mut result = None;
    for _ in 0..RUNS {
        let (cpu, wall) = (cpu_time::ThreadTime::now(), Instant::now());
        result = Some(work());
        cost.cpu_ms = cost.cpu_ms.min(cpu.elapsed().as_secs_f64() * 1000.0);
        cost.wall_ms = cost.wall_ms.min(wall.elapsed().as_secs_f64() * 1000.0);
    }
    (cost, result.expect("at least one run"))
}

/// The frames to measure on: made-up pages, then every PNG in `MALO_IMAGING_SHOTS`.
fn frames() -> Vec<(String, Frame)> {
    let mut frames = vec![
        ("made-up page 1280x720".to_string(), samples::page(1280, 720)),
        ("made-up page 1280x4000".to_string(), samples::page(1280, 4000)),
    ];
    let Some(folder) = std::env::var_os("MALO_IMAGING_SHOTS") else { return frames };
    let mut paths: Vec<_> = std::fs::read_dir(folder).into_iter().flatten().flatten().map(|entry| entry.path()).collect();
    paths.sort();
    for path in paths.into_iter().filter(|path| path.extension().is_some_and(|extension| extension == "png")) {
        let Ok(picture) = image::open(&path) else { continue };
        let picture = picture.to_rgba8();
        let name = format!("{} {}x{}", path.file_name().unwrap_or_default().to_string_lossy(), picture.width(), picture.height());
        frames.push((name, Frame { width: picture.width(), height: picture.height(), rgba: picture.into_raw() }));
    }
    frames
}

/// The PNG settings measured, by name.
fn png_candidates() -> Vec<(String, PngSettings)> {
    let before = PngSettings {
        palette: false,
        rgb: false,
        deflate: DeflateCompression::FdeflateUltraFast,
        filter: Filter::Adaptive,
        palette_filter: Filter::Adaptive,
    };
    let mut candidates = vec![("before: RGBA, fdeflate, adaptive".to_string(), before)];
    let rgb = |deflate, filter| PngSettings { palette: true, rgb: true, deflate, filter, palette_filter: Filter::NoFilter };
    let rgba = |deflate, filter| PngSettings { rgb: false, ..rgb(deflate, filter) };
    candidates.push(("RGB, fdeflate, adaptive".into(), rgb(DeflateCompression::FdeflateUltraFast, Filter::Adaptive)));
    for level in [1, 2, 3, 4, 6, 9] {
        candidates.push((format!("RGB, zlib {level}, adaptive"), rgb(DeflateCompression::Level(level), Filter::Adaptive)));
    }
    for level in [1, 2, 4, 6, 9] {
        candidates.push((format!("RGBA, zlib {level}, adaptive"), rgba(DeflateCompression::Level(level), Filter::Adaptive)));
    }
    for (name, filter) in [("sub", Filter::Sub), ("up", Filter::Up), ("paeth", Filter::Paeth), ("min-entropy", Filter::MinEntropy)] {
        candidates.push((format!("RGBA, zlib 2, {name}"), rgba(DeflateCompression::Level(2), filter)));
    }
    candidates
}

#[test]
#[ignore = "prints measurements for the module's choices; run in release with --nocapture"]
fn figures() {
    println!("imaging figures ({} build, fastest of {RUNS})", if cfg!(debug_assertions) { "debug" } else { "release" });
    for (name, frame) in frames() {
        let (count_cost, palette) = timed(|| Palette::of(&frame).map(|palette| palette.len()));
        let colours = palette.map_or("more than 256 colours".to_string(), |count| format!("{count} colours"));
        println!("\n{name}: {colours} (counted in {:.1} ms CPU), opaque: {}", count_cost.cpu_ms, frame.is_opaque());
        for (label, settings) in png_candidates() {
            let (cost, png) = timed(|| encode_with(&frame, settings).expect("PNG encodes"));
            println!("  PNG {label:<34} {:>9} B {:>7.1} KiB {cost}", png.len(), png.len() as f64 / 1024.0);
        }
        let (cost, png) = timed(|| super::split_png::encode(&frame, super::split_png::THOROUGH).expect("PNG encodes"));
        println!("  PNG {:<34} {:>9} B {:>7.1} KiB {cost}", "thorough on two cores", png.len(), png.len() as f64 / 1024.0);
        let (cost, png) = timed(|| super::split_png::encode(&frame, super::split_png::FAST).expect("PNG encodes"));
        println!("  PNG {:<34} {:>9} B {:>7.1} KiB {cost}", "fast on two cores", png.len(), png.len() as f64 / 1024.0);
        let (cost, png) = timed(|| super::split_png::encode(&frame, super::split_png::FAST).expect("PNG encodes"));
        println!("  PNG {:<34} {:>9} B {:>7.1} KiB {cost}", "fast on two cores", png.len(), png.len() as f64 / 1024.0);
        let (cost, png) = timed(|| encode(&frame, Format::Png, 100).expect("PNG encodes"));
        println!("  PNG {:<34} {:>9} B {:>7.1} KiB {cost}", "chosen", png.len(), png.len() as f64 / 1024.0);
        for (format, quality) in [(Format::Jpeg, 80), (Format::Webp, 80), (Format::Webp, 50)] {
            let (cost, bytes) = timed(|| encode(&frame, format, quality).expect("encodes"));
            println!("  {format:?} q{quality:<32} {:>9} B {:>7.1} KiB {cost}", bytes.len(), bytes.len() as f64 / 1024.0);
        }
        // 150 marks, as a busy page's snapshot gives: rows of link-sized boxes.
        let marks: Vec<Mark> = (0..150)
            .map(|index| Mark {
                label: format!("e{}", index * 7 + 3),
                x: 8.0 + (index % 6) as f64 * 210.0,
                y: 12.0 + (index / 6) as f64 * 27.0,
                width: 120.0 + (index % 4) as f64 * 20.0,
                height: 22.0,
            })
            .collect();
        let (cost, marked) = timed(|| {
            let mut marked = frame.clone();
            draw_marks(&mut marked, &marks);
            marked
        });
        let (clone_cost, _) = timed(|| frame.clone());
        println!("  150 marks drawn (less the copy) {:>7.1} ms CPU", cost.cpu_ms - clone_cost.cpu_ms);
        if let Some(folder) = std::env::var_os("MALO_IMAGING_OUT") {
            let path = std::path::Path::new(&folder).join(format!("{}-marked.png", name.replace(' ', "-")));
            std::fs::write(path, encode(&marked, Format::Png, 100).expect("PNG encodes")).expect("the picture is written");
        }
        for filter in [FilterType::Triangle, FilterType::CatmullRom, FilterType::Lanczos3] {
            let (width, height) = (frame.width / 2, frame.height / 2);
            let (cost, half) = timed(|| fit::resize(frame.clone(), width, height, filter));
            println!("  half size, {:<38} {cost}", format!("{filter:?}"));
            if let Some(folder) = std::env::var_os("MALO_IMAGING_OUT") {
                let path = std::path::Path::new(&folder).join(format!("{}-half-{filter:?}.png", name.replace(' ', "-")));
                std::fs::write(path, encode(&half, Format::Png, 100).expect("PNG encodes")).expect("the picture is written");
            }
        }
    }
}
