//! TSPLIB files: the distances as TSPLIB defines them.

use super::{Matrix, MAX_CITIES};

/// Parses a TSPLIB file: `EDGE_WEIGHT_TYPE` `EUC_2D`, `CEIL_2D`, `ATT`,
/// `GEO` (with `NODE_COORD_SECTION`) or `EXPLICIT` (`FULL_MATRIX`,
/// `LOWER_DIAG_ROW`, `UPPER_ROW`, `UPPER_DIAG_ROW`, `LOWER_ROW`), distances
/// as TSPLIB defines them. At most [`MAX_CITIES`] cities.
pub fn parse(text: &str) -> Result<Matrix, String> {
    let mut n = None;
    let mut kind = None;
    let mut format = None;
    let mut lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim()));
    let mut numbers: Vec<(usize, f64)> = Vec::new();
    let mut section = None;
    for (line, l) in lines.by_ref() {
        if l.is_empty() {
            continue;
        }
        if l == "EOF" {
            break;
        }
        if let Some((key, value)) = l.split_once(':') {
            let value = value.trim();
            match key.trim() {
                "DIMENSION" => {
                    n = Some(value.parse::<usize>().map_err(|_| format!("line {line}: DIMENSION `{value}`"))?)
                }
                "EDGE_WEIGHT_TYPE" => kind = Some(value.to_string()),
                "EDGE_WEIGHT_FORMAT" => format = Some(value.to_string()),
                _ => {}
            }
            section = None;
            continue;
        }
        match l {
            "NODE_COORD_SECTION" | "EDGE_WEIGHT_SECTION" | "DISPLAY_DATA_SECTION" => {
                section = Some(l.to_string());
                continue;
            }
            _ => {}
        }
        match section.as_deref() {
            Some("NODE_COORD_SECTION") | Some("EDGE_WEIGHT_SECTION") => {
                let sec = if section.as_deref() == Some("NODE_COORD_SECTION") { 0 } else { 1 };
                for t in l.split_whitespace() {
                    let v: f64 = t.parse().map_err(|_| format!("line {line}: `{t}` is not a number"))?;
                    if !v.is_finite() {
                        return Err(format!("line {line}: `{t}` is not a finite number"));
                    }
                    numbers.push((sec, v));
                }
            }
            Some(_) => {}
            None => return Err(format!("line {line}: unexpected `{l}`")),
        }
    }
    let n = n.ok_or("no DIMENSION")?;
    if !(1..=MAX_CITIES).contains(&n) {
        return Err(format!("DIMENSION {n}: this solver takes 1 to {MAX_CITIES} cities"));
    }
    let kind = kind.ok_or("no EDGE_WEIGHT_TYPE")?;
    let mut d = vec![0u32; n * n];
    let mut set = |a: usize, b: usize, v: f64| -> Result<(), String> {
        if v < 0.0 || v > u32::MAX as f64 {
            return Err(format!("distance {v} between {} and {} is out of range", a + 1, b + 1));
        }
        d[a * n + b] = v as u32;
        d[b * n + a] = v as u32;
        Ok(())
    };
    if kind == "EXPLICIT" {
        let w: Vec<f64> = numbers.iter().filter(|(s, _)| *s == 1).map(|(_, v)| *v).collect();
        let format = format.ok_or("EXPLICIT weights without EDGE_WEIGHT_FORMAT")?;
        let pairs: Vec<(usize, usize)> = match format.as_str() {
            "FULL_MATRIX" => (0..n).flat_map(|i| (0..n).map(move |j| (i, j))).collect(),
            "LOWER_DIAG_ROW" => (0..n).flat_map(|i| (0..=i).map(move |j| (i, j))).collect(),
            "LOWER_ROW" => (0..n).flat_map(|i| (0..i).map(move |j| (i, j))).collect(),
            "UPPER_ROW" => (0..n).flat_map(|i| (i + 1..n).map(move |j| (i, j))).collect(),
            "UPPER_DIAG_ROW" => (0..n).flat_map(|i| (i..n).map(move |j| (i, j))).collect(),
            other => return Err(format!("EDGE_WEIGHT_FORMAT {other} is not supported")),
        };
        if w.len() != pairs.len() {
            return Err(format!("{format} of {n} cities needs {} weights, found {}", pairs.len(), w.len()));
        }
        for ((i, j), v) in pairs.into_iter().zip(w) {
            if format == "FULL_MATRIX" && i > j {
                continue; // the upper triangle says it
            }
            set(i, j, v)?;
        }
        return Ok(Matrix { n, d });
    }
    let coords: Vec<f64> = numbers.iter().filter(|(s, _)| *s == 0).map(|(_, v)| *v).collect();
    if coords.len() != 3 * n {
        return Err(format!("NODE_COORD_SECTION: expected {n} lines `index x y`, found {} numbers", coords.len()));
    }
    let xy: Vec<(f64, f64)> = coords.chunks(3).map(|c| (c[1], c[2])).collect();
    for i in 0..n {
        for j in i + 1..n {
            let v = match kind.as_str() {
                "EUC_2D" => euclid(xy[i], xy[j]).round(),
                "CEIL_2D" => euclid(xy[i], xy[j]).ceil(),
                "ATT" => att(xy[i], xy[j]),
                "GEO" => geo(xy[i], xy[j]),
                other => return Err(format!("EDGE_WEIGHT_TYPE {other} is not supported")),
            };
            set(i, j, v)?;
        }
    }
    Ok(Matrix { n, d })
}

fn euclid(a: (f64, f64), b: (f64, f64)) -> f64 {
    ((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)).sqrt()
}

/// TSPLIB's pseudo-Euclidean distance.
fn att(a: (f64, f64), b: (f64, f64)) -> f64 {
    let r = (((a.0 - b.0).powi(2) + (a.1 - b.1).powi(2)) / 10.0).sqrt();
    let t = r.round();
    if t < r {
        t + 1.0
    } else {
        t
    }
}

/// TSPLIB's geographical distance (coordinates as DDD.MM).
fn geo(a: (f64, f64), b: (f64, f64)) -> f64 {
    // TSPLIB's own value, not `std::f64::consts::PI`: the distances (and
    // the published optima) depend on it.
    #[allow(clippy::approx_constant)]
    const PI: f64 = 3.141592;
    const RRR: f64 = 6378.388;
    let rad = |x: f64| {
        let deg = x.trunc();
        PI * (deg + 5.0 * (x - deg) / 3.0) / 180.0
    };
    let (lat_a, lon_a, lat_b, lon_b) = (rad(a.0), rad(a.1), rad(b.0), rad(b.1));
    let q1 = (lon_a - lon_b).cos();
    let q2 = (lat_a - lat_b).cos();
    let q3 = (lat_a + lat_b).cos();
    (RRR * (0.5 * ((1.0 + q1) * q2 - (1.0 - q1) * q3)).acos() + 1.0).trunc()
}
