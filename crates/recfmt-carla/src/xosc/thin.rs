//! Thinning of dense trajectories: a time step, then a distance tolerance.

use super::Vertex;

/// The vertices of `track` kept by `step` (seconds between kept vertices) and then
/// `tolerance` (metres between a left-out vertex and the kept path at its time). The first
/// and last vertices are always kept; 0 turns either off.
pub(crate) fn thin(track: Vec<Vertex>, step: f64, tolerance: f64) -> Vec<Vertex> {
    let track = if step > 0.0 {
        by_step(track, step)
    } else {
        track
    };
    if tolerance > 0.0 && track.len() > 2 {
        let keep = by_tolerance(&track, tolerance);
        track
            .into_iter()
            .zip(keep)
            .filter_map(|(v, k)| k.then_some(v))
            .collect()
    } else {
        track
    }
}

fn by_step(track: Vec<Vertex>, step: f64) -> Vec<Vertex> {
    let last = track.len().saturating_sub(1);
    let mut kept_at = f64::NEG_INFINITY;
    // Frame times are sums of float durations: 0.05 × 20 may land a hair under 1.0.
    let step = step * (1.0 - 1e-9);
    let mut out = Vec::with_capacity(track.len());
    for (i, v) in track.into_iter().enumerate() {
        if i == 0 || i == last || v.t - kept_at >= step {
            kept_at = v.t;
            out.push(v);
        }
    }
    out
}

/// Where `a` and `b` put the actor at time `t` (linear in time).
fn between(a: &Vertex, b: &Vertex, t: f64) -> [f64; 3] {
    let span = b.t - a.t;
    let u = if span > 0.0 { (t - a.t) / span } else { 0.0 };
    [
        a.pose.x + u * (b.pose.x - a.pose.x),
        a.pose.y + u * (b.pose.y - a.pose.y),
        a.pose.z + u * (b.pose.z - a.pose.z),
    ]
}

/// Distance between `v` and where `a`..`b` put the actor at its time.
pub(crate) fn deviation(a: &Vertex, b: &Vertex, v: &Vertex) -> f64 {
    let [x, y, z] = between(a, b, v.t);
    ((v.pose.x - x).powi(2) + (v.pose.y - y).powi(2) + (v.pose.z - z).powi(2)).sqrt()
}

/// Douglas-Peucker on the synchronised distance, with an explicit stack.
fn by_tolerance(track: &[Vertex], tolerance: f64) -> Vec<bool> {
    let mut keep = vec![false; track.len()];
    let last = track.len() - 1;
    keep[0] = true;
    keep[last] = true;
    let mut stack = vec![(0usize, last)];
    while let Some((a, b)) = stack.pop() {
        let mut worst = (0.0, 0usize);
        for k in a + 1..b {
            let d = deviation(&track[a], &track[b], &track[k]);
            if d > worst.0 {
                worst = (d, k);
            }
        }
        if worst.0 > tolerance {
            keep[worst.1] = true;
            stack.push((a, worst.1));
            stack.push((worst.1, b));
        }
    }
    keep
}

#[cfg(test)]
mod tests {
    use super::super::Pose;
    use super::*;

    fn at(t: f64, x: f64, y: f64) -> Vertex {
        Vertex {
            t,
            pose: Pose {
                x,
                y,
                ..Pose::default()
            },
        }
    }

    #[test]
    fn a_straight_path_at_constant_speed_keeps_its_ends() {
        let track: Vec<_> = (0..100)
            .map(|i| at(i as f64 * 0.05, i as f64, 0.0))
            .collect();
        let kept = thin(track, 0.0, 0.01);
        assert_eq!(kept.len(), 2);
        assert_eq!((kept[0].t, kept[1].pose.x), (0.0, 99.0));
    }

    #[test]
    fn every_left_out_vertex_is_within_the_tolerance() {
        let track: Vec<_> = (0..400)
            .map(|i| {
                let t = i as f64 * 0.05;
                at(t, 10.0 * (t / 3.0).sin(), t * t / 10.0)
            })
            .collect();
        let kept = thin(track.clone(), 0.0, 0.2);
        assert!(kept.len() > 2 && kept.len() < track.len());
        for v in &track {
            let j = kept
                .partition_point(|k| k.t <= v.t)
                .clamp(1, kept.len() - 1);
            assert!(deviation(&kept[j - 1], &kept[j], v) <= 0.2 + 1e-9);
        }
    }

    #[test]
    fn a_step_keeps_one_vertex_per_step_and_the_last() {
        let track: Vec<_> = (0..=100).map(|i| at(i as f64 * 0.05, 0.0, 0.0)).collect();
        let kept = thin(track, 1.0, 0.0);
        let times: Vec<f64> = kept.iter().map(|v| v.t).collect();
        assert_eq!(times.len(), 6);
        assert_eq!(times[5], 5.0);
    }
}
