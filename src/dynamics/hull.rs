//! Exact convex hulls of finite point sets in d = 2 and d = 3, for the polytope
//! limit of clusters/polytope (clusters.md §3, `t:Idcase11int`).
//!
//! Points are exact rationals (enclosure midpoints are dyadic Floats, hence exact
//! rationals), scaled to integers over one common denominator D, so every
//! orientation test is an exact `rug::Integer` determinant:
//!
//! - d = 2: Andrew's monotone chain; a point is kept as a vertex iff the turn
//!   det(q − p, r − q) is strictly positive (collinear and duplicate points are
//!   dropped), so the vertices are the extreme points, counter-clockwise.
//! - d = 3: brute force over triples (O(n⁴) worst case, with an early exit as soon
//!   as a triple's plane has points on both sides): the plane through p_i, p_j, p_k
//!   with normal a = (p_j − p_i) × (p_k − p_i) ≠ 0 supports the set iff
//!   ⟨a, p_l − p_i⟩ has one sign for all l. Each supporting plane (normal divided by
//!   the gcd of its entries, so planes are compared exactly) is a facet; the
//!   vertices are the vertices of the 2-D hulls of the points on each facet.
//!
//! Facets are stored as half-spaces ⟨a, P⟩ ≤ b in the integer coordinates P = D·x,
//! so the hull is {x : ⟨a, x⟩ ≤ b/D for every facet}. From them:
//! support function h(u) = max_i ⟨u, p_i⟩ (exact; attained at a vertex), the signed
//! distance of a token's enclosure box to the boundary (enclosed: for a point x in a
//! full-dimensional hull, dist(x, ∂Cx) = min_f (b_f/D − ⟨a_f, x⟩)/‖a_f‖, since the
//! nearest boundary point lies on some facet plane and every facet plane's nearest
//! point to an interior x lies in the hull), and the Hausdorff distance of finite
//! point sets (exact, squared). The Hausdorff distance of two hulls is at most that of
//! the point sets (d_H(Cx A, Cx B) ≤ d_H(A, B): every convex combination of a's is
//! within the same distance of the same combination of nearby b's).

use crate::kernel::Interval;
use rug::{Integer, Rational};

/// Why a hull cannot be built.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HullError {
    /// Only d = 2 and d = 3 are supported.
    Dimension(usize),
    /// The point set is empty.
    Empty,
    /// A coordinate is not finite (index of the point).
    NotFinite(usize),
    /// The coordinate list is not n·d long.
    Shape,
}

impl std::fmt::Display for HullError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HullError::Dimension(d) => {
                write!(f, "convex hulls are implemented for d = 2, 3 (got {d})")
            }
            HullError::Empty => f.write_str("the point set is empty"),
            HullError::NotFinite(i) => write!(f, "point {i} has a non-finite coordinate"),
            HullError::Shape => f.write_str("the coordinate list is not n·d long"),
        }
    }
}

impl std::error::Error for HullError {}

/// A finite point set with exact coordinates: x_i = P_i / D with integer P_i.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PointSet {
    /// Dimension (2 or 3).
    pub d: usize,
    /// Integer coordinates P = D·x, row-major (n × d).
    pub coords: Vec<Integer>,
    /// The common denominator D > 0.
    pub denom: Integer,
}

impl PointSet {
    /// From exact rational coordinates (row-major, n × d).
    pub fn from_rationals(d: usize, xs: &[Rational]) -> Result<PointSet, HullError> {
        if d != 2 && d != 3 {
            return Err(HullError::Dimension(d));
        }
        if xs.is_empty() {
            return Err(HullError::Empty);
        }
        if !xs.len().is_multiple_of(d) {
            return Err(HullError::Shape);
        }
        let mut denom = Integer::from(1);
        for x in xs {
            denom.lcm_mut(x.denom());
        }
        let coords = xs
            .iter()
            .map(|x| x.numer() * Integer::from(&denom / x.denom()))
            .collect();
        Ok(PointSet { d, coords, denom })
    }
    /// From the midpoints of interval enclosures (each midpoint is a dyadic
    /// Float, converted exactly).
    pub fn from_midpoints(d: usize, xs: &[Interval]) -> Result<PointSet, HullError> {
        let qs = xs
            .iter()
            .enumerate()
            .map(|(i, x)| {
                x.mid()
                    .to_rational()
                    .ok_or(HullError::NotFinite(i / d.max(1)))
            })
            .collect::<Result<Vec<_>, _>>()?;
        PointSet::from_rationals(d, &qs)
    }
    /// The sub-set of the points with the given indices (same denominator).
    pub fn subset(&self, idx: &[usize]) -> PointSet {
        PointSet {
            d: self.d,
            coords: idx.iter().flat_map(|&i| self.point(i).to_vec()).collect(),
            denom: self.denom.clone(),
        }
    }
    /// Number of points.
    pub fn len(&self) -> usize {
        self.coords.len() / self.d
    }
    /// Whether the set is empty (never, once built).
    pub fn is_empty(&self) -> bool {
        self.coords.is_empty()
    }
    /// Integer coordinates of point i.
    pub fn point(&self, i: usize) -> &[Integer] {
        &self.coords[i * self.d..(i + 1) * self.d]
    }
    /// Exact coordinates of point i.
    pub fn rational(&self, i: usize) -> Vec<Rational> {
        self.point(i)
            .iter()
            .map(|c| Rational::from((c.clone(), self.denom.clone())))
            .collect()
    }
    /// ⟨u, x_i⟩ exactly.
    pub fn dot(&self, i: usize, u: &[Rational]) -> Rational {
        let mut s = Rational::new();
        for (c, w) in self.point(i).iter().zip(u) {
            s += Rational::from(w * c);
        }
        s / &self.denom
    }
    /// ‖x_i − x_j‖² exactly.
    pub fn dist_sq(&self, i: usize, other: &PointSet, j: usize) -> Rational {
        let mut s = Rational::new();
        for (a, b) in self.point(i).iter().zip(other.point(j)) {
            let diff = Rational::from((a.clone(), self.denom.clone()))
                - Rational::from((b.clone(), other.denom.clone()));
            s += diff.square();
        }
        s
    }
}

/// The support function of the points, h(u) = max_i ⟨u, x_i⟩, exactly.
pub fn support(ps: &PointSet, u: &[Rational]) -> Rational {
    (0..ps.len())
        .map(|i| ps.dot(i, u))
        .max()
        .expect("a point set is never empty")
}

/// A facet half-space ⟨a, P⟩ ≤ b in integer coordinates (P = D·x), tight on `vertices`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facet {
    /// Outward normal a (primitive: gcd of entries 1).
    pub normal: Vec<Integer>,
    /// Offset b.
    pub offset: Integer,
    /// Indices of the hull vertices on this facet.
    pub vertices: Vec<usize>,
}

/// The convex hull of a point set.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hull {
    /// Ambient dimension.
    pub d: usize,
    /// Affine dimension of the points (0..=d).
    pub dim: usize,
    /// Indices of the vertices (extreme points), ascending; duplicates of a vertex
    /// are represented by their lowest index.
    pub vertices: Vec<usize>,
    /// The facet half-spaces. For a full-dimensional hull these describe it
    /// exactly; for dim = d − 1 they are the affine hull's two sides (±a); for
    /// smaller dim there are none.
    pub facets: Vec<Facet>,
    /// In d = 2: the vertices counter-clockwise (starting at the lowest-leftmost).
    pub polygon: Vec<usize>,
}

fn sub(a: &[Integer], b: &[Integer]) -> Vec<Integer> {
    a.iter().zip(b).map(|(x, y)| Integer::from(x - y)).collect()
}

fn dot(a: &[Integer], b: &[Integer]) -> Integer {
    let mut s = Integer::new();
    for (x, y) in a.iter().zip(b) {
        s += x * y;
    }
    s
}

fn cross(a: &[Integer], b: &[Integer]) -> Vec<Integer> {
    vec![
        Integer::from(&a[1] * &b[2]) - &a[2] * &b[1],
        Integer::from(&a[2] * &b[0]) - &a[0] * &b[2],
        Integer::from(&a[0] * &b[1]) - &a[1] * &b[0],
    ]
}

/// det(q − p, r − p) for 2-D integer points (> 0: counter-clockwise turn).
fn turn(p: &[Integer], q: &[Integer], r: &[Integer]) -> Integer {
    Integer::from(&q[0] - &p[0]) * Integer::from(&r[1] - &p[1])
        - Integer::from(&q[1] - &p[1]) * Integer::from(&r[0] - &p[0])
}

/// Monotone chain on 2-D integer points given with their indices; returns the
/// strict vertices counter-clockwise from the lowest-leftmost (1 or 2 points for
/// degenerate input). Among equal points the lowest index is kept.
fn chain(mut pts: Vec<(Vec<Integer>, usize)>) -> Vec<usize> {
    pts.sort();
    pts.dedup_by(|b, a| a.0 == b.0);
    if pts.len() <= 2 {
        return pts.into_iter().map(|p| p.1).collect();
    }
    let mut lower: Vec<usize> = Vec::new();
    let mut upper: Vec<usize> = Vec::new();
    for idx in 0..pts.len() {
        while lower.len() >= 2
            && turn(
                &pts[lower[lower.len() - 2]].0,
                &pts[lower[lower.len() - 1]].0,
                &pts[idx].0,
            ) <= 0
        {
            lower.pop();
        }
        lower.push(idx);
    }
    for idx in (0..pts.len()).rev() {
        while upper.len() >= 2
            && turn(
                &pts[upper[upper.len() - 2]].0,
                &pts[upper[upper.len() - 1]].0,
                &pts[idx].0,
            ) <= 0
        {
            upper.pop();
        }
        upper.push(idx);
    }
    lower.pop();
    upper.pop();
    lower.extend(upper);
    if lower.len() == 2 && pts[lower[0]].0 == pts[lower[1]].0 {
        lower.pop();
    }
    lower.into_iter().map(|k| pts[k].1).collect()
}

fn primitive(mut a: Vec<Integer>, mut b: Integer) -> (Vec<Integer>, Integer) {
    let mut g = Integer::new();
    for x in &a {
        g.gcd_mut(x);
    }
    if g > 1 {
        for x in a.iter_mut() {
            x.div_exact_mut(&g);
        }
        b.div_exact_mut(&g);
    }
    (a, b)
}

/// The distinct points' indices (lowest index for each distinct point).
fn distinct(ps: &PointSet) -> Vec<usize> {
    let mut idx: Vec<usize> = (0..ps.len()).collect();
    idx.sort_by(|&i, &j| ps.point(i).cmp(ps.point(j)).then(i.cmp(&j)));
    idx.dedup_by(|b, a| ps.point(*a) == ps.point(*b));
    idx.sort_unstable();
    idx
}

/// 2-D hull of points lying in a plane of ℝ³ with normal a: project by dropping the
/// coordinate where |a_c| is largest (an injective affine map on the plane).
fn planar_hull(ps: &PointSet, idx: &[usize], a: &[Integer]) -> Vec<usize> {
    let drop = (0..3)
        .max_by(|&x, &y| a[x].cmp_abs(&a[y]).then(y.cmp(&x)))
        .expect("three coordinates");
    let pts = idx
        .iter()
        .map(|&i| {
            let p = ps.point(i);
            let v: Vec<Integer> = (0..3)
                .filter(|&c| c != drop)
                .map(|c| p[c].clone())
                .collect();
            (v, i)
        })
        .collect();
    chain(pts)
}

/// Builds the exact convex hull.
pub fn hull(ps: &PointSet) -> Hull {
    let d = ps.d;
    let idx = distinct(ps);
    if d == 2 {
        let pts = idx.iter().map(|&i| (ps.point(i).to_vec(), i)).collect();
        let polygon = chain(pts);
        let dim = match polygon.len() {
            1 => 0,
            2 => 1,
            _ => 2,
        };
        let mut facets = Vec::new();
        if dim == 2 {
            for k in 0..polygon.len() {
                let (p, q) = (
                    ps.point(polygon[k]),
                    ps.point(polygon[(k + 1) % polygon.len()]),
                );
                // Counter-clockwise: the interior is on the left of p → q, so the outward
                // normal is (q_y − p_y, −(q_x − p_x)).
                let a = vec![Integer::from(&q[1] - &p[1]), Integer::from(&p[0] - &q[0])];
                let b = dot(&a, p);
                let (normal, offset) = primitive(a, b);
                facets.push(Facet {
                    normal,
                    offset,
                    vertices: vec![polygon[k], polygon[(k + 1) % polygon.len()]],
                });
            }
        } else if dim == 1 {
            let (p, q) = (ps.point(polygon[0]), ps.point(polygon[1]));
            let a = vec![Integer::from(&q[1] - &p[1]), Integer::from(&p[0] - &q[0])];
            push_two_sides(&mut facets, a, p, polygon.clone());
        }
        let mut vertices = polygon.clone();
        vertices.sort_unstable();
        return Hull {
            d,
            dim,
            vertices,
            facets,
            polygon,
        };
    }
    // d = 3: affine dimension first.
    let p0 = ps.point(idx[0]).to_vec();
    let i1 = idx.iter().copied().find(|&i| ps.point(i) != p0.as_slice());
    let Some(i1) = i1 else {
        return Hull {
            d,
            dim: 0,
            vertices: vec![idx[0]],
            facets: Vec::new(),
            polygon: Vec::new(),
        };
    };
    let e1 = sub(ps.point(i1), &p0);
    let plane = idx.iter().copied().find_map(|i| {
        let c = cross(&e1, &sub(ps.point(i), &p0));
        c.iter().any(|x| *x != 0).then_some(c)
    });
    let Some(nrm) = plane else {
        // Collinear: the extreme points along e1.
        let key = |i: &usize| dot(&e1, ps.point(*i));
        let lo = *idx.iter().min_by_key(|i| key(i)).expect("non-empty");
        let hi = *idx.iter().max_by_key(|i| key(i)).expect("non-empty");
        let mut vertices = vec![lo, hi];
        vertices.sort_unstable();
        return Hull {
            d,
            dim: 1,
            vertices,
            facets: Vec::new(),
            polygon: Vec::new(),
        };
    };
    let off_plane = idx.iter().any(|&i| dot(&nrm, &sub(ps.point(i), &p0)) != 0);
    if !off_plane {
        let mut vertices = planar_hull(ps, &idx, &nrm);
        vertices.sort_unstable();
        let mut facets = Vec::new();
        push_two_sides(&mut facets, nrm, &p0, vertices.clone());
        return Hull {
            d,
            dim: 2,
            vertices,
            facets,
            polygon: Vec::new(),
        };
    }
    let m = idx.len();
    let mut facets: Vec<Facet> = Vec::new();
    for a in 0..m {
        for b in a + 1..m {
            let eab = sub(ps.point(idx[b]), ps.point(idx[a]));
            for c in b + 1..m {
                let n = cross(&eab, &sub(ps.point(idx[c]), ps.point(idx[a])));
                if n.iter().all(|x| *x == 0) {
                    continue;
                }
                let base = dot(&n, ps.point(idx[a]));
                let (mut pos, mut neg) = (false, false);
                let mut on = Vec::new();
                for &l in &idx {
                    let s = dot(&n, ps.point(l)) - &base;
                    match s.cmp0() {
                        std::cmp::Ordering::Greater => pos = true,
                        std::cmp::Ordering::Less => neg = true,
                        std::cmp::Ordering::Equal => on.push(l),
                    }
                    if pos && neg {
                        break;
                    }
                }
                if pos && neg {
                    continue;
                }
                let (n, base) = if pos {
                    (n.into_iter().map(|x| -x).collect(), -base)
                } else {
                    (n, base)
                };
                let (normal, offset) = primitive(n, base);
                if facets
                    .iter()
                    .any(|f| f.normal == normal && f.offset == offset)
                {
                    continue;
                }
                let mut vertices = planar_hull(ps, &on, &normal);
                vertices.sort_unstable();
                facets.push(Facet {
                    normal,
                    offset,
                    vertices,
                });
            }
        }
    }
    let mut vertices: Vec<usize> = facets
        .iter()
        .flat_map(|f| f.vertices.iter().copied())
        .collect();
    vertices.sort_unstable();
    vertices.dedup();
    Hull {
        d,
        dim: 3,
        vertices,
        facets,
        polygon: Vec::new(),
    }
}

/// For a hull of dimension d − 1: both sides ⟨±a, P⟩ ≤ ±⟨a, p⟩ of its affine hull.
fn push_two_sides(facets: &mut Vec<Facet>, a: Vec<Integer>, p: &[Integer], vertices: Vec<usize>) {
    let b = dot(&a, p);
    let (normal, offset) = primitive(a, b);
    facets.push(Facet {
        normal: normal.iter().map(|x| Integer::from(-x)).collect(),
        offset: Integer::from(-&offset),
        vertices: vertices.clone(),
    });
    facets.push(Facet {
        normal,
        offset,
        vertices,
    });
}

impl Hull {
    /// The support function over the vertices, h(u) = max_j ⟨u, v_j⟩ (equal to
    /// the points' support function: a linear function's maximum over a polytope
    /// is attained at a vertex).
    pub fn support(&self, ps: &PointSet, u: &[Rational]) -> Rational {
        self.vertices
            .iter()
            .map(|&i| ps.dot(i, u))
            .max()
            .expect("a hull has a vertex")
    }
    /// Whether the exact point x satisfies every facet inequality (inside or on
    /// the hull; meaningful for full-dimensional hulls).
    pub fn contains(&self, ps: &PointSet, x: &[Rational]) -> bool {
        self.facets.iter().all(|f| {
            let mut s = Rational::new();
            for (a, c) in f.normal.iter().zip(x) {
                s += Rational::from(a * c);
            }
            s * &ps.denom <= f.offset
        })
    }
    /// An enclosure of the signed distance of a box x (d intervals) to the hull's
    /// boundary, min_f (b_f/D − ⟨a_f, x⟩)/‖a_f‖ over the facet half-spaces: for
    /// full-dimensional hulls, ≥ 0 inside (the distance to ∂Cx) and < 0 outside;
    /// for dim = d − 1 it is −(distance to the affine hull), 0 on the hull (which is
    /// its own boundary). `None` when dim < d − 1 (no facets).
    pub fn boundary_distance(&self, ps: &PointSet, x: &[Interval]) -> Option<Interval> {
        let prec = x.first()?.prec();
        let den = Interval::from_integer(prec, &ps.denom);
        self.facets
            .iter()
            .map(|f| {
                let mut s = &Interval::from_integer(prec, &f.offset) / &den;
                let mut nsq = Integer::new();
                for (a, xc) in f.normal.iter().zip(x) {
                    s.sub_assign(&(&Interval::from_integer(prec, a) * xc));
                    nsq += a * a;
                }
                &s / &Interval::from_integer(prec, &nsq).sqrt()
            })
            .reduce(|m, v| m.min(&v))
    }
}

/// The Hausdorff distance of two finite point sets, squared and exact:
/// max(max_a min_b ‖a − b‖², max_b min_a ‖a − b‖²). It bounds the Hausdorff
/// distance of their convex hulls from above.
pub fn hausdorff_sq(a: &PointSet, b: &PointSet) -> Rational {
    let directed = |x: &PointSet, y: &PointSet| {
        (0..x.len())
            .map(|i| {
                (0..y.len())
                    .map(|j| x.dist_sq(i, y, j))
                    .min()
                    .expect("non-empty")
            })
            .max()
            .expect("non-empty")
    };
    directed(a, b).max(directed(b, a))
}

/// An enclosure of the Hausdorff distance of two finite point sets.
pub fn hausdorff(a: &PointSet, b: &PointSet, prec: u32) -> Interval {
    Interval::from_rational(prec, &hausdorff_sq(a, b)).sqrt()
}
