//! The event queue: a min-heap ordered by `(time, sequence)`.
//!
//! Ties in time are broken by the sequence number assigned at push, so two events at
//! the same instant pop in the order they were scheduled. Nothing else (payload,
//! hash, address) takes part in the order, which makes runs reproducible.

use crate::util::time::SimTime;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: SimTime,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, o: &Self) -> bool {
        self.time == o.time && self.seq == o.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
        Some(self.cmp(o))
    }
}
impl<E> Ord for Entry<E> {
    fn cmp(&self, o: &Self) -> Ordering {
        // Reversed: BinaryHeap is a max-heap and we want the earliest first.
        o.time.cmp(&self.time).then(o.seq.cmp(&self.seq))
    }
}

/// A deterministic priority queue of events.
pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    next_seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue { heap: BinaryHeap::new(), next_seq: 0 }
    }
}

impl<E> EventQueue<E> {
    /// An empty queue.
    pub fn new() -> Self {
        Self::default()
    }
    /// Schedules `event` at `time`; returns its sequence number.
    pub fn push(&mut self, time: SimTime, event: E) -> u64 {
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time, seq, event });
        seq
    }
    /// Removes and returns the earliest event (lowest `(time, seq)`).
    pub fn pop(&mut self) -> Option<(SimTime, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }
    /// The time of the earliest event.
    pub fn peek_time(&self) -> Option<SimTime> {
        self.heap.peek().map(|e| e.time)
    }
    /// Number of queued events.
    pub fn len(&self) -> usize {
        self.heap.len()
    }
    /// True when no event is queued.
    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
    /// Total events ever pushed.
    pub fn pushed(&self) -> u64 {
        self.next_seq
    }
    /// Drops the queued events `keep` refuses; the others keep their order.
    pub fn retain(&mut self, mut keep: impl FnMut(SimTime, &E) -> bool) {
        self.heap.retain(|e| keep(e.time, &e.event));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn orders_by_time_then_push_order() {
        let mut q = EventQueue::new();
        q.push(SimTime(5), "c");
        q.push(SimTime(1), "a");
        q.push(SimTime(5), "d");
        q.push(SimTime(1), "b");
        q.push(SimTime(0), "z");
        q.push(SimTime(5), "e");
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).map(|(_, e)| e).collect();
        assert_eq!(order, ["z", "a", "b", "c", "d", "e"]);
    }

    #[test]
    fn many_ties_keep_fifo_order() {
        let mut q = EventQueue::new();
        for i in 0..1000u32 {
            q.push(SimTime(7), i);
        }
        for i in 0..1000u32 {
            assert_eq!(q.pop(), Some((SimTime(7), i)));
        }
        assert!(q.is_empty());
    }

    #[test]
    fn retain_drops_what_it_refuses_and_keeps_the_order() {
        let mut q = EventQueue::new();
        for (t, e) in [(5, 'c'), (1, 'a'), (5, 'x'), (1, 'b'), (3, 'y'), (5, 'd')] {
            q.push(SimTime(t), e);
        }
        q.retain(|_, &e| e != 'x' && e != 'y');
        assert_eq!(q.len(), 4);
        let order: Vec<_> = std::iter::from_fn(|| q.pop()).collect();
        assert_eq!(order, [(SimTime(1), 'a'), (SimTime(1), 'b'), (SimTime(5), 'c'), (SimTime(5), 'd')]);
    }
}
