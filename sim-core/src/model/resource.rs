//! Resource vectors, in the units Volcano's scheduler uses.
//!
//! `cpu` is in millicores, `memory` in bytes, `nvidia.com/gpu` and extended
//! resources in milli-units, `pods` as a plain count. All integer: the epsilon
//! comparisons Volcano needs for its float64 vectors are exact here.
//! Every pod requests one `pods` slot; every node offers `pods` capacity (default 110).

use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Number of dimensions of a [`Resources`] vector: 4 fixed + extended.
pub const DIMS: usize = 8;
/// Millicores.
pub const CPU: usize = 0;
/// Bytes.
pub const MEMORY: usize = 1;
/// `nvidia.com/gpu`, in milli-GPUs.
pub const GPU: usize = 2;
/// Pod slots (plain count).
pub const PODS: usize = 3;
/// First dimension available to extended resources.
pub const FIRST_EXTENDED: usize = 4;

/// Kubernetes name of the GPU resource.
pub const GPU_RESOURCE: &str = "nvidia.com/gpu";

/// A resource vector. Dimensions beyond the fixed four are named by a
/// [`ResourceNames`] registry owned by the cluster.
#[derive(Clone, Copy, Eq, Default)]
pub struct Resources(pub [i64; DIMS]);

impl std::hash::Hash for Resources {
    /// The dimensions, as the derived hash would: equal vectors hash alike.
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.0.hash(state);
    }
}

impl PartialEq for Resources {
    /// Every dimension equal, compared without branching (the derived comparison
    /// calls `memcmp`, which showed in profiles of the score caches' lookups).
    #[inline]
    fn eq(&self, other: &Resources) -> bool {
        self.0.iter().zip(&other.0).fold(true, |all, (a, b)| all & (a == b))
    }
}

impl Resources {
    /// All zero.
    pub const ZERO: Resources = Resources([0; DIMS]);

    /// Builds a vector from cpu (millicores), memory (bytes), gpus (milli) and pods.
    pub fn new(cpu_milli: i64, memory: i64, gpu_milli: i64, pods: i64) -> Self {
        let mut v = [0; DIMS];
        v[CPU] = cpu_milli;
        v[MEMORY] = memory;
        v[GPU] = gpu_milli;
        v[PODS] = pods;
        Resources(v)
    }
    /// Millicores of CPU.
    pub fn cpu(&self) -> i64 {
        self.0[CPU]
    }
    /// Bytes of memory.
    pub fn memory(&self) -> i64 {
        self.0[MEMORY]
    }
    /// Milli-GPUs.
    pub fn gpu_milli(&self) -> i64 {
        self.0[GPU]
    }
    /// Pod slots.
    pub fn pods(&self) -> i64 {
        self.0[PODS]
    }
    /// Value of dimension `d`.
    #[inline]
    pub fn get(&self, d: usize) -> i64 {
        self.0[d]
    }
    /// Sets dimension `d`.
    pub fn set(&mut self, d: usize, v: i64) {
        self.0[d] = v;
    }
    /// `self ≤ other` in every dimension (the fit test).
    #[inline]
    pub fn fits_in(&self, other: &Resources) -> bool {
        // Without short-circuit: one vector comparison over the eight dimensions
        // (the free-resource index asks this millions of times per run).
        self.0.iter().zip(&other.0).fold(true, |all, (a, b)| all & (a <= b))
    }
    /// `self ≤ other` on the dimensions where `mask` is positive, ignoring `pods`
    /// (Volcano's `LessEqualWithDimension`).
    pub fn fits_in_on_dims_of(&self, other: &Resources, mask: &Resources) -> bool {
        (0..DIMS).all(|d| d == PODS || mask.0[d] <= 0 || self.0[d] <= other.0[d])
    }
    /// How many copies of `req` fit in `self` (the smallest `self[d] / req[d]` over
    /// the dimensions `req` asks for; `u32::MAX` when it asks for nothing).
    pub fn copies_of(&self, req: &Resources) -> u32 {
        (0..DIMS)
            .filter(|&d| req.0[d] > 0)
            .map(|d| (self.0[d].max(0) / req.0[d]).min(u32::MAX as i64) as u32)
            .min()
            .unwrap_or(u32::MAX)
    }
    /// True if every dimension except `pods` is zero (Volcano's BestEffort test).
    #[inline]
    pub fn is_best_effort(&self) -> bool {
        (0..DIMS).fold(true, |all, d| all & (d == PODS || self.0[d] == 0))
    }
    /// True if all dimensions are zero.
    #[inline]
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&v| v == 0)
    }
    /// Per-dimension maximum.
    pub fn max(&self, o: &Resources) -> Resources {
        let mut r = *self;
        for d in 0..DIMS {
            r.0[d] = r.0[d].max(o.0[d]);
        }
        r
    }
    /// Per-dimension minimum.
    pub fn min(&self, o: &Resources) -> Resources {
        let mut r = *self;
        for d in 0..DIMS {
            r.0[d] = r.0[d].min(o.0[d]);
        }
        r
    }
    /// Per-dimension `max(0, self − o)` (Volcano's `ExceededPart`).
    pub fn exceeded_part(&self, o: &Resources) -> Resources {
        let mut r = *self;
        for d in 0..DIMS {
            r.0[d] = (r.0[d] - o.0[d]).max(0);
        }
        r
    }
    /// Multiplies every dimension by `n`.
    pub fn times(&self, n: i64) -> Resources {
        let mut r = *self;
        for v in r.0.iter_mut() {
            *v *= n;
        }
        r
    }
    /// Whole GPUs (rounded up from milli-GPUs).
    pub fn gpus_ceil(&self) -> i64 {
        (self.0[GPU] + 999) / 1000
    }
}

impl Add for Resources {
    type Output = Resources;
    #[inline]
    fn add(mut self, o: Resources) -> Resources {
        self += o;
        self
    }
}
impl AddAssign for Resources {
    #[inline]
    fn add_assign(&mut self, o: Resources) {
        for d in 0..DIMS {
            self.0[d] += o.0[d];
        }
    }
}
impl Sub for Resources {
    type Output = Resources;
    #[inline]
    fn sub(mut self, o: Resources) -> Resources {
        self -= o;
        self
    }
}
impl SubAssign for Resources {
    #[inline]
    fn sub_assign(&mut self, o: Resources) {
        for d in 0..DIMS {
            self.0[d] -= o.0[d];
        }
    }
}

impl fmt::Debug for Resources {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "<cpu {}m, mem {}, gpu {}m, pods {}", self.0[CPU], self.0[MEMORY], self.0[GPU], self.0[PODS])?;
        for d in FIRST_EXTENDED..DIMS {
            if self.0[d] != 0 {
                write!(f, ", r{d} {}", self.0[d])?;
            }
        }
        write!(f, ">")
    }
}

/// A sparse resource list as written in a Queue spec (`capability`, `guarantee`,
/// `deserved`): only the named dimensions are set; the rest are "not given".
#[derive(Clone, Copy, PartialEq, Eq, Default, Debug)]
pub struct ResourceList {
    /// Values of the set dimensions (others are 0).
    pub values: Resources,
    /// Bit `d` is set when dimension `d` was given.
    pub set: u8,
}

impl ResourceList {
    /// True when dimension `d` was given.
    pub fn has(&self, d: usize) -> bool {
        self.set & (1 << d) != 0
    }
    /// Sets dimension `d`.
    pub fn put(&mut self, d: usize, v: i64) {
        self.values.0[d] = v;
        self.set |= 1 << d;
    }
    /// True when nothing was given.
    pub fn is_empty(&self) -> bool {
        self.set == 0
    }
    /// The value of `d`, or `default` when not given.
    pub fn get_or(&self, d: usize, default: i64) -> i64 {
        if self.has(d) { self.values.0[d] } else { default }
    }
}

/// Why a resource name or value was rejected.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ResourceError {
    /// More extended resources than lahar has dimensions for.
    #[error("too many extended resource names (at most {max}); `{name}` does not fit")]
    TooMany {
        /// The name that did not fit.
        name: String,
        /// The limit.
        max: usize,
    },
    /// A quantity that does not parse.
    #[error(transparent)]
    Quantity(#[from] crate::util::quantity::QuantityError),
}

/// The names of resource dimensions: the fixed four plus extended resources
/// registered as a scenario mentions them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ResourceNames {
    names: Vec<String>,
}

impl Default for ResourceNames {
    fn default() -> Self {
        ResourceNames { names: vec!["cpu".into(), "memory".into(), GPU_RESOURCE.into(), "pods".into()] }
    }
}

impl ResourceNames {
    /// The dimension of a resource name, if known.
    pub fn dim(&self, name: &str) -> Option<usize> {
        self.names.iter().position(|n| n == name)
    }
    /// The dimension of a name, registering it as an extended resource if new.
    pub fn dim_or_register(&mut self, name: &str) -> Result<usize, ResourceError> {
        if let Some(d) = self.dim(name) {
            return Ok(d);
        }
        if self.names.len() >= DIMS {
            return Err(ResourceError::TooMany { name: name.to_string(), max: DIMS - FIRST_EXTENDED });
        }
        self.names.push(name.to_string());
        Ok(self.names.len() - 1)
    }
    /// The name of dimension `d`.
    pub fn name(&self, d: usize) -> &str {
        self.names.get(d).map(String::as_str).unwrap_or("?")
    }
    /// Number of named dimensions.
    pub fn len(&self) -> usize {
        self.names.len()
    }
    /// Always false: the fixed dimensions are always there.
    pub fn is_empty(&self) -> bool {
        false
    }
    /// The scale a quantity of this dimension is parsed with (milli for cpu, GPUs
    /// and extended resources; plain for memory and pods).
    pub fn scale(d: usize) -> i64 {
        if d == MEMORY || d == PODS { 1 } else { 1000 }
    }
    /// `v` of dimension `d` as a person reads it, with its name: `8 nvidia.com/gpu`,
    /// `0.5 cpu`, `64Gi memory` (binary units when whole), `110 pods`.
    pub fn show(&self, d: usize, v: f64) -> String {
        format!("{} {}", Self::amount(d, v), self.name(d))
    }
    /// `v` of dimension `d` without its name: `8`, `0.5`, `64Gi`.
    pub fn amount(d: usize, v: f64) -> String {
        if d == MEMORY {
            for (unit, size) in [("Ti", 1u64 << 40), ("Gi", 1 << 30), ("Mi", 1 << 20), ("Ki", 1 << 10)] {
                let n = v / size as f64;
                if n.abs() >= 1.0 && (n - n.round()).abs() < 1e-9 {
                    return format!("{}{unit}", n.round());
                }
            }
            return trim(v);
        }
        trim(v / Self::scale(d) as f64)
    }
    /// Parses `quantity` for resource `name` and stores it in `into`.
    pub fn parse_into(&mut self, name: &str, quantity: &str, into: &mut Resources) -> Result<usize, ResourceError> {
        let d = self.dim_or_register(name)?;
        into.0[d] = crate::util::quantity::parse_quantity(quantity, Self::scale(d))?;
        Ok(d)
    }
}

/// A number with at most three decimals, trailing zeros dropped.
fn trim(x: f64) -> String {
    let s = format!("{x:.3}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" { "0".to_string() } else { s.to_string() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_read_as_written() {
        let n = ResourceNames::default();
        assert_eq!(n.show(GPU, 8000.0), "8 nvidia.com/gpu");
        assert_eq!(n.show(CPU, 500.0), "0.5 cpu");
        assert_eq!(n.show(CPU, 1234.5678), "1.235 cpu");
        assert_eq!(n.show(MEMORY, (64u64 << 30) as f64), "64Gi memory");
        assert_eq!(n.show(MEMORY, 1000.0), "1000 memory");
        assert_eq!(n.show(PODS, 110.0), "110 pods");
    }

    #[test]
    fn fit_and_arithmetic() {
        let node = Resources::new(8000, 32 << 30, 8000, 110);
        let pod = Resources::new(4000, 1 << 30, 1000, 1);
        assert!(pod.fits_in(&node));
        assert!(pod.times(2).fits_in(&node));
        assert!(!pod.times(3).fits_in(&node));
        assert_eq!((node - pod).cpu(), 4000);
        assert_eq!(pod.exceeded_part(&node), Resources::ZERO);
        assert!(Resources::new(0, 0, 0, 1).is_best_effort());
        assert!(!pod.is_best_effort());
        assert_eq!(Resources::new(0, 0, 1500, 0).gpus_ceil(), 2);
    }

    #[test]
    fn dimension_masked_compare_ignores_pods() {
        let alloc = Resources::new(3000, 0, 0, 500);
        let deserved = Resources::new(4000, 0, 0, 2);
        let req = Resources::new(1000, 0, 0, 1);
        assert!((alloc + req).fits_in_on_dims_of(&deserved, &req));
        assert!(!(alloc + req + req).fits_in_on_dims_of(&deserved, &req));
    }

    #[test]
    fn names_register_extended_dims() {
        let mut n = ResourceNames::default();
        assert_eq!(n.dim("nvidia.com/gpu"), Some(GPU));
        let mut r = Resources::ZERO;
        let d = n.parse_into("example.com/foo", "2", &mut r).unwrap();
        assert_eq!(d, FIRST_EXTENDED);
        assert_eq!(r.get(d), 2000);
        for i in 0..3 {
            n.dim_or_register(&format!("x/{i}")).unwrap();
        }
        assert!(n.dim_or_register("x/overflow").is_err());
    }
}
