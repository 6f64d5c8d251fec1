//! The dense indexes every part of the model names things by: nodes, jobs,
//! pods, queues, HyperNodes. A leaf: it imports nothing, so any module can
//! name an object without reaching into the module that owns it.

/// Index of a node in [`crate::model::cluster::Cluster::nodes`] (dense, stable for a run).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct NodeId(pub u32);

/// Index of a job (dense, in submission order after merging sources).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct JobId(pub u32);

/// Index of a pod (dense, in creation order).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct PodId(pub u32);

/// Index of a queue in the run's queue list.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct QueueId(pub u32);

/// Index of a HyperNode in [`crate::model::topology::Topology::hypernodes`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct HyperNodeId(pub u32);

/// A dense index: what the typed stores ([`crate::util::store::Store`],
/// [`crate::util::store::IdVec`]) are indexed by, so a job's store cannot be read with
/// a pod's id.
pub trait Id: Copy {
    /// The position it names.
    fn index(self) -> usize;
    /// The id at a position.
    fn from_index(i: usize) -> Self;
}

macro_rules! dense_id {
    ($($t:ident),*) => {$(
        impl Id for $t {
            #[inline]
            fn index(self) -> usize {
                self.0 as usize
            }
            #[inline]
            fn from_index(i: usize) -> Self {
                $t(u32::try_from(i).expect("fewer than 2^32 objects"))
            }
        }
    )*};
}

dense_id!(NodeId, JobId, PodId, QueueId, HyperNodeId);
