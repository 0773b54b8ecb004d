//! The iteration order of libc++'s `std::unordered_map<uint32_t, T>`.
//!
//! `show_recorder_actors_blocked` lists the actors still blocked at the end of the file by
//! iterating such a map, so matching a Linux server (built with clang and libc++) needs the
//! same order. This is a model of libc++'s `__hash_table`: one singly linked list of nodes,
//! buckets pointing at the node *before* their first node, identity hash, maximum load
//! factor 1, growth to `next_prime(2n + 1)` (or 2 for the first bucket array), insertion at
//! the front of a bucket's run (or at the front of the list for an empty bucket), and the
//! relinking that `__do_rehash` performs.

/// A link: the list head ("before begin") or a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Link {
    Start,
    Node(usize),
}

#[derive(Debug)]
struct Node<V> {
    key: u32,
    next: Option<usize>,
    value: V,
}

/// A map with libc++'s iteration order.
#[derive(Debug)]
pub(crate) struct LibcxxMap<V> {
    nodes: Vec<Option<Node<V>>>,
    free: Vec<usize>,
    head: Option<usize>,
    buckets: Vec<Option<Link>>,
    size: usize,
}

fn constrain(h: u32, bc: usize) -> usize {
    let h = h as usize;
    if bc.is_power_of_two() {
        h & (bc - 1)
    } else if h < bc {
        h
    } else {
        h % bc
    }
}

fn is_hash_power2(bc: usize) -> bool {
    bc > 2 && bc.is_power_of_two()
}

fn next_prime(n: usize) -> usize {
    let is_prime = |n: usize| {
        if n < 2 {
            return false;
        }
        let mut d = 2;
        while d * d <= n {
            if n.is_multiple_of(d) {
                return false;
            }
            d += 1;
        }
        true
    };
    let mut n = n.max(2);
    while !is_prime(n) {
        n += 1;
    }
    n
}

impl<V> LibcxxMap<V> {
    pub(crate) fn new() -> Self {
        LibcxxMap {
            nodes: Vec::new(),
            free: Vec::new(),
            head: None,
            buckets: Vec::new(),
            size: 0,
        }
    }

    fn node(&self, i: usize) -> &Node<V> {
        self.nodes[i]
            .as_ref()
            .unwrap_or_else(|| unreachable!("live node"))
    }

    fn node_mut(&mut self, i: usize) -> &mut Node<V> {
        self.nodes[i]
            .as_mut()
            .unwrap_or_else(|| unreachable!("live node"))
    }

    fn next_of(&self, l: Link) -> Option<usize> {
        match l {
            Link::Start => self.head,
            Link::Node(i) => self.node(i).next,
        }
    }

    fn set_next(&mut self, l: Link, next: Option<usize>) {
        match l {
            Link::Start => self.head = next,
            Link::Node(i) => self.node_mut(i).next = next,
        }
    }

    fn find(&self, key: u32) -> Option<usize> {
        let bc = self.buckets.len();
        if bc == 0 {
            return None;
        }
        let chash = constrain(key, bc);
        let mut nd = self.next_of(self.buckets[chash]?);
        while let Some(i) = nd {
            let n = self.node(i);
            if n.key != key && constrain(n.key, bc) != chash {
                break;
            }
            if n.key == key {
                return Some(i);
            }
            nd = n.next;
        }
        None
    }

    /// The value of `key`, if present.
    #[cfg(test)]
    pub(crate) fn get(&self, key: u32) -> Option<&V> {
        self.find(key).map(|i| &self.node(i).value)
    }

    /// `map[key]`: the value of `key`, inserted with `make()` when absent.
    pub(crate) fn entry(&mut self, key: u32, make: impl FnOnce() -> V) -> &mut V {
        let i = match self.find(key) {
            Some(i) => i,
            None => self.insert_new(key, make()),
        };
        &mut self.node_mut(i).value
    }

    fn insert_new(&mut self, key: u32, value: V) -> usize {
        let node = Node {
            key,
            next: None,
            value,
        };
        let n = match self.free.pop() {
            Some(i) => {
                self.nodes[i] = Some(node);
                i
            }
            None => {
                self.nodes.push(Some(node));
                self.nodes.len() - 1
            }
        };
        let mut bc = self.buckets.len();
        if bc == 0 || (self.size + 1) as f32 > bc as f32 {
            let grow = (2 * bc + usize::from(!is_hash_power2(bc))).max(self.size + 1);
            self.rehash(grow);
            bc = self.buckets.len();
        }
        let chash = constrain(key, bc);
        match self.buckets[chash] {
            None => {
                self.node_mut(n).next = self.head;
                self.head = Some(n);
                self.buckets[chash] = Some(Link::Start);
                if let Some(next) = self.node(n).next {
                    let nh = constrain(self.node(next).key, bc);
                    self.buckets[nh] = Some(Link::Node(n));
                }
            }
            Some(pn) => {
                let after = self.next_of(pn);
                self.node_mut(n).next = after;
                self.set_next(pn, Some(n));
            }
        }
        self.size += 1;
        n
    }

    fn rehash(&mut self, n: usize) {
        let n = if n == 1 {
            2
        } else if !n.is_power_of_two() {
            next_prime(n)
        } else {
            n
        };
        if n > self.buckets.len() {
            self.do_rehash(n);
        }
    }

    fn do_rehash(&mut self, nbc: usize) {
        self.buckets = vec![None; nbc];
        let Some(first) = self.head else {
            return;
        };
        let mut phash = constrain(self.node(first).key, nbc);
        self.buckets[phash] = Some(Link::Start);
        let mut pp = Link::Node(first);
        let mut cp = self.node(first).next;
        while let Some(c) = cp {
            let chash = constrain(self.node(c).key, nbc);
            if chash == phash {
                pp = Link::Node(c);
            } else if let Some(bucket) = self.buckets[chash] {
                let after = self.node(c).next;
                self.set_next(pp, after);
                let bucket_next = self.next_of(bucket);
                self.node_mut(c).next = bucket_next;
                self.set_next(bucket, Some(c));
            } else {
                self.buckets[chash] = Some(pp);
                pp = Link::Node(c);
                phash = chash;
            }
            cp = self.next_of(pp);
        }
    }

    /// `map.erase(key)`.
    pub(crate) fn erase(&mut self, key: u32) {
        let Some(cn) = self.find(key) else {
            return;
        };
        let bc = self.buckets.len();
        let chash = constrain(key, bc);
        let Some(mut pn) = self.buckets[chash] else {
            return;
        };
        while self.next_of(pn) != Some(cn) {
            match self.next_of(pn) {
                Some(i) => pn = Link::Node(i),
                None => return,
            }
        }
        let cn_next = self.node(cn).next;
        let pn_in_bucket = match pn {
            Link::Start => false,
            Link::Node(i) => constrain(self.node(i).key, bc) == chash,
        };
        if !pn_in_bucket && cn_next.is_none_or(|nx| constrain(self.node(nx).key, bc) != chash) {
            self.buckets[chash] = None;
        }
        if let Some(nx) = cn_next {
            let nhash = constrain(self.node(nx).key, bc);
            if nhash != chash {
                self.buckets[nhash] = Some(pn);
            }
        }
        self.set_next(pn, cn_next);
        self.nodes[cn] = None;
        self.free.push(cn);
        self.size -= 1;
    }

    /// Entries in iteration order.
    pub(crate) fn iter(&self) -> impl Iterator<Item = (u32, &V)> {
        let mut cur = self.head;
        std::iter::from_fn(move || {
            let i = cur?;
            let n = self.node(i);
            cur = n.next;
            Some((n.key, &n.value))
        })
    }

    #[cfg(test)]
    fn bucket_count(&self) -> usize {
        self.buckets.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(m: &LibcxxMap<()>) -> Vec<u32> {
        m.iter().map(|(k, _)| k).collect()
    }

    /// Orders printed by `std::unordered_map<uint32_t, int>` built with clang 14 and
    /// `-stdlib=libc++`: `for (k : keys) m[k]; for (auto &p : m) print(p.first)`. The model
    /// was also compared with that build on 300 random insert/erase sequences.
    #[test]
    fn iteration_order_matches_libcxx() {
        let mut m = LibcxxMap::new();
        for k in [1u32, 2, 3] {
            m.entry(k, || ());
        }
        // bc: 2 → 5 at the third insert; rehash relinks 2 and 1, then 3 goes first.
        assert_eq!(m.bucket_count(), 5);
        assert_eq!(keys(&m), [3, 2, 1]);

        let mut m = LibcxxMap::new();
        for k in 0u32..12 {
            m.entry(k, || ());
        }
        assert_eq!(m.bucket_count(), 23);
        assert_eq!(keys(&m), [11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0]);

        // Keys sharing a bucket stay together, newest first within the bucket.
        let mut m = LibcxxMap::new();
        for k in [5u32, 10, 1, 0, 6] {
            m.entry(k, || ());
        }
        assert_eq!(m.bucket_count(), 5);
        assert_eq!(keys(&m), [6, 1, 0, 10, 5]);

        // Erasures and large keys.
        let mut m = LibcxxMap::new();
        for (erase, k) in [
            (false, 24u32),
            (false, 25),
            (false, u32::MAX),
            (false, 100),
            (false, 7),
            (false, 31),
            (true, 25),
            (false, 26),
            (false, 25),
            (false, 58),
            (true, 7),
            (false, 1000),
            (false, 33),
            (false, 2),
            (false, 3),
        ] {
            if erase {
                m.erase(k);
            } else {
                m.entry(k, || ());
            }
        }
        assert_eq!(m.bucket_count(), 11);
        assert_eq!(
            keys(&m),
            [33, 1000, 26, 31, 100, 3, 58, 25, u32::MAX, 2, 24]
        );
    }

    #[test]
    fn lookup_insert_erase() {
        let mut m = LibcxxMap::new();
        for k in 0u32..100 {
            *m.entry(k * 7, || 0) += k;
        }
        for k in 0u32..100 {
            assert_eq!(m.get(k * 7), Some(&k));
        }
        for k in (0u32..100).step_by(3) {
            m.erase(k * 7);
        }
        m.erase(12345);
        assert_eq!(m.iter().count(), 66);
        for k in 0u32..100 {
            assert_eq!(m.get(k * 7).is_some(), k % 3 != 0);
        }
        let before: Vec<u32> = m.iter().map(|(k, _)| k).collect();
        let mut sorted = before.clone();
        sorted.sort_unstable();
        sorted.dedup();
        assert_eq!(sorted.len(), before.len());
    }
}
