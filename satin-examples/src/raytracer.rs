//! A ray tracer over a built-in scene, rendering the image by recursive
//! subdivision: each call renders a rectangle, splitting it in two along its
//! longer side until it is small.

use satin::divide_and_conquer;
use serde::{Deserialize, Serialize};

/// A rectangle of the image, in pixels.
#[derive(Serialize, Deserialize, Debug, Clone, Copy, PartialEq, Eq)]
pub struct Area {
    pub x: u32,
    pub y: u32,
    pub w: u32,
    pub h: u32,
}

/// Rectangles of at most this many pixels are rendered directly.
const LEAF_PIXELS: u32 = 1024;

/// RGB bytes of `area` (row-major) of a `width`×`height` image, each pixel
/// the mean of `samples`×`samples` rays (supersampling: more work per
/// pixel, the same result size).
#[divide_and_conquer]
pub fn render(area: Area, width: u32, height: u32, samples: u32) -> Vec<u8> {
    if area.w * area.h <= LEAF_PIXELS || (area.w == 1 && area.h == 1) {
        return render_block(area, width, height, samples);
    }
    let (first, second) = split(area);
    let a = render(first, width, height, samples);
    let b = render(second, width, height, samples);
    join_halves(area, first, &a, &b)
}

/// The whole image, one ray per pixel.
pub fn image(width: u32, height: u32) -> Vec<u8> {
    image_sampled(width, height, 1)
}

/// The whole image, `samples`×`samples` rays per pixel.
pub fn image_sampled(width: u32, height: u32, samples: u32) -> Vec<u8> {
    if width == 0 || height == 0 {
        return Vec::new();
    }
    render(Area { x: 0, y: 0, w: width, h: height }, width, height, samples.max(1))
}

fn split(a: Area) -> (Area, Area) {
    if a.w >= a.h {
        let half = a.w / 2;
        (Area { w: half, ..a }, Area { x: a.x + half, w: a.w - half, ..a })
    } else {
        let half = a.h / 2;
        (Area { h: half, ..a }, Area { y: a.y + half, h: a.h - half, ..a })
    }
}

fn join_halves(area: Area, first: Area, a: &[u8], b: &[u8]) -> Vec<u8> {
    if first.h == area.h {
        // Side by side: interleave rows.
        let (wa, wb) = (first.w as usize * 3, (area.w - first.w) as usize * 3);
        let mut out = Vec::with_capacity(a.len() + b.len());
        for row in 0..area.h as usize {
            out.extend_from_slice(&a[row * wa..(row + 1) * wa]);
            out.extend_from_slice(&b[row * wb..(row + 1) * wb]);
        }
        out
    } else {
        [a, b].concat()
    }
}

type V3 = [f64; 3];

fn add(a: V3, b: V3) -> V3 {
    [a[0] + b[0], a[1] + b[1], a[2] + b[2]]
}
fn sub(a: V3, b: V3) -> V3 {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}
fn mul(a: V3, s: f64) -> V3 {
    [a[0] * s, a[1] * s, a[2] * s]
}
fn dot(a: V3, b: V3) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}
fn norm(a: V3) -> V3 {
    mul(a, 1.0 / dot(a, a).sqrt())
}

struct Sphere {
    center: V3,
    radius: f64,
    color: V3,
    reflect: f64,
}

const SPHERES: [Sphere; 4] = [
    Sphere { center: [0.0, 1.0, 6.0], radius: 1.0, color: [0.9, 0.2, 0.2], reflect: 0.3 },
    Sphere { center: [-2.2, 0.7, 7.0], radius: 0.7, color: [0.2, 0.8, 0.3], reflect: 0.2 },
    Sphere { center: [2.0, 1.2, 7.5], radius: 1.2, color: [0.3, 0.4, 0.95], reflect: 0.5 },
    Sphere { center: [0.6, 0.35, 4.2], radius: 0.35, color: [0.95, 0.85, 0.2], reflect: 0.1 },
];
const LIGHT: V3 = [-4.0, 6.0, 1.0];
const MAX_DEPTH: u32 = 3;

/// Nearest hit along the ray: distance, point, normal, colour, reflectivity.
fn hit(origin: V3, dir: V3) -> Option<(f64, V3, V3, V3, f64)> {
    let mut best: Option<(f64, V3, V3, V3, f64)> = None;
    for s in &SPHERES {
        let oc = sub(origin, s.center);
        let b = dot(oc, dir);
        let disc = b * b - (dot(oc, oc) - s.radius * s.radius);
        if disc < 0.0 {
            continue;
        }
        let t = -b - disc.sqrt();
        if t > 1e-6 && best.is_none_or(|h| t < h.0) {
            let p = add(origin, mul(dir, t));
            best = Some((t, p, norm(sub(p, s.center)), s.color, s.reflect));
        }
    }
    // Ground plane y = 0, a checkerboard.
    if dir[1] < -1e-9 {
        let t = -origin[1] / dir[1];
        if t > 1e-6 && best.is_none_or(|h| t < h.0) {
            let p = add(origin, mul(dir, t));
            let check = ((p[0].floor() + p[2].floor()) as i64).rem_euclid(2) == 0;
            let color = if check { [0.85, 0.85, 0.85] } else { [0.25, 0.25, 0.3] };
            best = Some((t, p, [0.0, 1.0, 0.0], color, 0.15));
        }
    }
    best
}

fn trace(origin: V3, dir: V3, depth: u32) -> V3 {
    let Some((_, p, n, color, reflect)) = hit(origin, dir) else {
        let t = 0.5 * (dir[1] + 1.0);
        return add(mul([1.0, 1.0, 1.0], 1.0 - t), mul([0.5, 0.7, 1.0], t));
    };
    let to_light = norm(sub(LIGHT, p));
    let lit = hit(add(p, mul(n, 1e-4)), to_light).is_none();
    let diffuse = if lit { dot(n, to_light).max(0.0) } else { 0.0 };
    let mut c = mul(color, 0.15 + 0.85 * diffuse);
    if depth < MAX_DEPTH && reflect > 0.0 {
        let r = sub(dir, mul(n, 2.0 * dot(dir, n)));
        c = add(mul(c, 1.0 - reflect), mul(trace(add(p, mul(n, 1e-4)), norm(r), depth + 1), reflect));
    }
    c
}

fn render_block(area: Area, width: u32, height: u32, samples: u32) -> Vec<u8> {
    let mut out = Vec::with_capacity((area.w * area.h * 3) as usize);
    let aspect = width as f64 / height as f64;
    let n = samples.max(1);
    let step = 1.0 / n as f64;
    for y in area.y..area.y + area.h {
        for x in area.x..area.x + area.w {
            let mut sum = [0.0; 3];
            for sy in 0..n {
                for sx in 0..n {
                    let px = x as f64 + (sx as f64 + 0.5) * step;
                    let py = y as f64 + (sy as f64 + 0.5) * step;
                    let u = (2.0 * px / width as f64 - 1.0) * aspect;
                    let v = 1.0 - 2.0 * py / height as f64;
                    sum = add(sum, trace([0.0, 1.5, 0.0], norm([u, v - 0.2, 1.6]), 0));
                }
            }
            let c = mul(sum, 1.0 / (n * n) as f64);
            out.extend(c.iter().map(|ch| (ch.clamp(0.0, 1.0) * 255.0).round() as u8));
        }
    }
    out
}

/// Renders the image row by row without the annotation, for comparison.
pub fn image_plain(width: u32, height: u32) -> Vec<u8> {
    image_plain_sampled(width, height, 1)
}

/// [`image_plain`] with `samples`×`samples` rays per pixel.
pub fn image_plain_sampled(width: u32, height: u32, samples: u32) -> Vec<u8> {
    render_block(Area { x: 0, y: 0, w: width, h: height }, width, height, samples)
}

/// Writes RGB bytes as a PNG file.
pub fn write_png(path: &std::path::Path, width: u32, height: u32, rgb: &[u8]) -> std::io::Result<()> {
    let file = std::io::BufWriter::new(std::fs::File::create(path)?);
    let mut enc = png::Encoder::new(file, width, height);
    enc.set_color(png::ColorType::Rgb);
    enc.set_depth(png::BitDepth::Eight);
    let mut w = enc.write_header().map_err(std::io::Error::other)?;
    w.write_image_data(rgb).map_err(std::io::Error::other)?;
    w.finish().map_err(std::io::Error::other)
}

/// Short checksum of the pixels.
pub fn checksum(rgb: &[u8]) -> String {
    blake3::hash(rgb).to_hex()[..16].to_string()
}
