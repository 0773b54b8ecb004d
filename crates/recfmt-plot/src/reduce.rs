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

    /// This bucket and `other` as one.
    fn merged(mut self, other: &Bucket) -> Bucket {
        self.count += other.count;
        if other.first.0 < self.first.0 {
            self.first = other.first;
        }
        if other.last.0 >= self.last.0 {
            self.last = other.last;
        }
        if other.min.1 < self.min.1 {
            self.min = other.min;
        }
        if other.max.1 > self.max.1 {
            self.max = other.max;
        }
        self
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
///
/// Only filled buckets take memory (a sorted list of `(index, bucket)`), so a series of one
/// point costs one bucket, and a sheet of thousands of short streams stays small.
#[derive(Debug, Clone)]
pub struct Reducer {
    /// Start of bucket 0 (seconds).
    low: f64,
    /// Width of one bucket (seconds); 0 until the first point.
    width: f64,
    /// The filled buckets by index (below [`Reducer::BUCKETS`]), in index order.
    buckets: Vec<(usize, Bucket)>,
    points: u64,
}

impl Default for Reducer {
    fn default() -> Self {
        Reducer {
            low: 0.0,
            width: 0.0,
            buckets: Vec::new(),
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
        // Times mostly come in order: the last bucket is the one to look at first.
        match self.buckets.last_mut() {
            Some((last, b)) if *last == index => b.add((t, v)),
            Some((last, _)) if *last < index => self.buckets.push((index, Bucket::new((t, v)))),
            None => self.buckets.push((index, Bucket::new((t, v)))),
            Some(_) => match self.buckets.binary_search_by_key(&index, |&(i, _)| i) {
                Ok(at) => self.buckets[at].1.add((t, v)),
                Err(at) => self.buckets.insert(at, (index, Bucket::new((t, v)))),
            },
        }
    }

    /// Doubles the width, keeping the start: bucket pairs merge into the lower half.
    fn grow_right(&mut self) {
        self.regroup(|i| i / 2);
        self.width *= 2.0;
    }

    /// Doubles the width and moves the start back by the old span: bucket pairs merge into
    /// the upper half.
    fn grow_left(&mut self) {
        let n = Self::BUCKETS;
        self.regroup(|i| n / 2 + i / 2);
        self.low -= self.width * n as f64;
        self.width *= 2.0;
    }

    /// Moves every bucket to index `to(index)` (which keeps the order), merging buckets that
    /// land on the same index.
    fn regroup(&mut self, to: impl Fn(usize) -> usize) {
        let mut kept: usize = 0;
        for k in 0..self.buckets.len() {
            let (i, b) = self.buckets[k];
            let i = to(i);
            match kept.checked_sub(1).map(|last| &mut self.buckets[last]) {
                Some((j, into)) if *j == i => *into = into.merged(&b),
                _ => {
                    self.buckets[kept] = (i, b);
                    kept += 1;
                }
            }
        }
        self.buckets.truncate(kept);
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
            .map(|(i, b)| (self.low + *i as f64 * self.width, b))
    }

    /// The reduced line: every bucket's points in time order.
    pub fn line(&self) -> Vec<Point> {
        self.buckets().flat_map(|(_, b)| b.path()).collect()
    }

    /// Earliest and latest time, lowest and highest value; `None` before the first point.
    pub fn bounds(&self) -> Option<((f64, f64), (f64, f64))> {
        let mut buckets = self.buckets().map(|(_, b)| b);
        let first = *buckets.next()?;
        let b = buckets.fold(first, |a, b| a.merged(b));
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
    fn holds_only_the_buckets_it_fills() {
        // A stream of one row costs one bucket, not `BUCKETS` (an overview of 8000 such
        // streams took 2.6 GB).
        let mut one = Reducer::default();
        one.push(5.0, 1.0);
        assert!(one.buckets.capacity() <= 4, "{}", one.buckets.capacity());
        let mut few = Reducer::default();
        for t in [3.0, -2.0, 9.0, 1e6, -1e6, 4.0] {
            few.push(t, t);
        }
        assert!(few.buckets.len() <= 6 && few.buckets.capacity() <= 8);
        assert!(few.buckets.windows(2).all(|w| w[0].0 < w[1].0));
        let line = few.line();
        assert_eq!(line.first(), Some(&(-1e6, -1e6)));
        assert_eq!(line.last(), Some(&(1e6, 1e6)));
        assert!(line.windows(2).all(|w| w[0].0 <= w[1].0));
        assert_eq!(few.bounds(), Some(((-1e6, 1e6), (-1e6, 1e6))));
    }

    #[test]
    fn times_out_of_order_land_in_their_buckets() {
        let mut r = Reducer::default();
        for i in (0..10_000u32).rev().chain(10_000..20_000) {
            r.push(f64::from(i), f64::from(i % 7));
        }
        assert_eq!(r.points(), 20_000);
        assert!(r.buckets.len() <= Reducer::BUCKETS);
        assert!(r.buckets.windows(2).all(|w| w[0].0 < w[1].0));
        let total: u64 = r.buckets().map(|(_, b)| b.count).sum();
        assert_eq!(total, 20_000);
        for (start, b) in r.buckets() {
            assert!(b.first.0 >= start && b.last.0 < start + r.bucket_width());
        }
        let line = r.line();
        assert!(line.windows(2).all(|w| w[0].0 <= w[1].0));
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
