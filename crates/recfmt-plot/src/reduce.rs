//! Min/max reduction of a series into a fixed number of time buckets, in one pass.
//!
//! A plot shows at most one value range per pixel column, so a series of any length is kept
//! as at most [`Reducer::BUCKETS`] buckets, each remembering its first, last, lowest and
//! highest point (the "M4" reduction: drawing those four points per column gives the same
//! picture as drawing every point). The time span is not known in advance: the buckets start
//! narrow and double in width, merging neighbours, whenever a point falls outside them, so
//! memory stays fixed however long the recording is.

/// One point: time in seconds, value.
pub type Point = (f64, f64);

/// What is kept of the points that fell into one bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Bucket {
    /// Points that fell in.
    pub count: u64,
    /// The earliest point.
    pub first: Point,
    /// The latest point.
    pub last: Point,
    /// The point with the lowest value.
    pub min: Point,
    /// The point with the highest value.
    pub max: Point,
}

impl Bucket {
    fn new(p: Point) -> Self {
        Bucket {
            count: 1,
            first: p,
            last: p,
            min: p,
            max: p,
        }
    }

    fn add(&mut self, p: Point) {
        self.count += 1;
        if p.0 < self.first.0 {
            self.first = p;
        }
        if p.0 >= self.last.0 {
            self.last = p;
        }
        if p.1 < self.min.1 {
            self.min = p;
        }
        if p.1 > self.max.1 {
            self.max = p;
        }
    }

    fn merge(a: Option<Bucket>, b: Option<Bucket>) -> Option<Bucket> {
        match (a, b) {
            (Some(mut a), Some(b)) => {
                a.count += b.count;
                if b.first.0 < a.first.0 {
                    a.first = b.first;
                }
                if b.last.0 >= a.last.0 {
                    a.last = b.last;
                }
                if b.min.1 < a.min.1 {
                    a.min = b.min;
                }
                if b.max.1 > a.max.1 {
                    a.max = b.max;
                }
                Some(a)
            }
            (a, None) => a,
            (None, b) => b,
        }
    }

    /// The bucket's points in time order, without repeats: what a line through the bucket
    /// must visit.
    pub fn path(&self) -> impl Iterator<Item = Point> {
        let mut points = [self.first, self.min, self.max, self.last];
        points.sort_by(|a, b| a.0.total_cmp(&b.0));
        let mut previous: Option<Point> = None;
        points.into_iter().filter(move |p| {
            let fresh = previous != Some(*p);
            previous = Some(*p);
            fresh
        })
    }
}

/// A series reduced to time buckets of equal width.
#[derive(Debug, Clone)]
pub struct Reducer {
    /// Start of bucket 0 (seconds).
    low: f64,
    /// Width of one bucket (seconds); 0 until the first point.
    width: f64,
    buckets: Vec<Option<Bucket>>,
    points: u64,
}

impl Default for Reducer {
    fn default() -> Self {
        Reducer {
            low: 0.0,
            width: 0.0,
            buckets: vec![None; Self::BUCKETS],
            points: 0,
        }
    }
}

impl Reducer {
    /// Buckets kept: between half and all of them cover the series, so a plot up to 2048
    /// pixels wide gets at least one bucket per pixel column.
    pub const BUCKETS: usize = 4096;

    /// Adds one point; points with a time or value that is not finite are ignored.
    pub fn push(&mut self, t: f64, v: f64) {
        if !t.is_finite() || !v.is_finite() {
            return;
        }
        self.points += 1;
        if self.width == 0.0 {
            self.low = t;
            // Narrow enough for microsecond steps near any recording time; it doubles as needed.
            self.width = (t.abs().max(1.0) * 1e-12).max(f64::MIN_POSITIVE);
        }
        let n = Self::BUCKETS;
        while t < self.low {
            self.grow_left();
        }
        while t >= self.low + self.width * n as f64 {
            self.grow_right();
        }
        let index = (((t - self.low) / self.width) as usize).min(n - 1);
        match &mut self.buckets[index] {
            Some(b) => b.add((t, v)),
            slot @ None => *slot = Some(Bucket::new((t, v))),
        }
    }

    /// Doubles the width, keeping the start: bucket pairs merge into the lower half.
    fn grow_right(&mut self) {
        let n = Self::BUCKETS;
        for i in 0..n / 2 {
            self.buckets[i] = Bucket::merge(self.buckets[2 * i], self.buckets[2 * i + 1]);
        }
        for slot in &mut self.buckets[n / 2..] {
            *slot = None;
        }
        self.width *= 2.0;
    }

    /// Doubles the width and moves the start back by the old span: bucket pairs merge into
    /// the upper half.
    fn grow_left(&mut self) {
        let n = Self::BUCKETS;
        for i in (0..n / 2).rev() {
            let merged = Bucket::merge(self.buckets[2 * i], self.buckets[2 * i + 1]);
            self.buckets[n / 2 + i] = merged;
        }
        for slot in &mut self.buckets[..n / 2] {
            *slot = None;
        }
        self.low -= self.width * n as f64;
        self.width *= 2.0;
    }

    /// Points pushed (finite ones).
    pub fn points(&self) -> u64 {
        self.points
    }

    /// Width of one bucket in seconds (0 before the first point).
    pub fn bucket_width(&self) -> f64 {
        self.width
    }

    /// The filled buckets in time order, each with its start time.
    pub fn buckets(&self) -> impl Iterator<Item = (f64, &Bucket)> {
        self.buckets
            .iter()
            .enumerate()
            .filter_map(|(i, b)| b.as_ref().map(|b| (self.low + i as f64 * self.width, b)))
    }

    /// The reduced line: every bucket's points in time order.
    pub fn line(&self) -> Vec<Point> {
        self.buckets().flat_map(|(_, b)| b.path()).collect()
    }

    /// Earliest and latest time, lowest and highest value; `None` before the first point.
    pub fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let mut buckets = self.buckets().map(|(_, b)| b);
        let first = *buckets.next()?;
        let b = buckets.fold(first, |a, b| Bucket::merge(Some(a), Some(*b)).unwrap_or(a));
        Some(((b.first.0, b.last.0), (b.min.1, b.max.1)))
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // tests may unwrap
mod tests {
    use super::*;

    #[test]
    fn keeps_extremes_of_a_long_series_in_fixed_memory() {
        let mut r = Reducer::default();
        for i in 0..1_000_000u32 {
            let t = f64::from(i) * 1e-3;
            r.push(t, (t * 7.0).sin());
        }
        r.push(123.4567, 5.0);
        assert_eq!(r.points(), 1_000_001);
        let ((t0, t1), (lo, hi)) = r.bounds().unwrap();
        assert_eq!(t0, 0.0);
        assert_eq!(t1, 999.999);
        assert!(lo < -0.9999 && hi == 5.0);
        assert!(r.buckets().count() <= Reducer::BUCKETS);
        assert!(r.buckets().count() >= Reducer::BUCKETS / 2 - 1);
        let total: u64 = r.buckets().map(|(_, b)| b.count).sum();
        assert_eq!(total, 1_000_001);
        let line = r.line();
        assert!(line.windows(2).all(|w| w[0].0 <= w[1].0));
        assert!(line.contains(&(123.4567, 5.0)));
    }

    #[test]
    fn grows_to_the_left_for_earlier_points() {
        let mut r = Reducer::default();
        r.push(10.0, 1.0);
        r.push(11.0, 2.0);
        r.push(-5.0, 3.0);
        r.push(f64::NAN, 1.0);
        let ((t0, t1), (lo, hi)) = r.bounds().unwrap();
        assert_eq!((t0, t1, lo, hi), (-5.0, 11.0, 1.0, 3.0));
        assert_eq!(r.points(), 3);
        let times: Vec<f64> = r.line().iter().map(|p| p.0).collect();
        assert_eq!(times, vec![-5.0, 10.0, 11.0]);
    }
}
