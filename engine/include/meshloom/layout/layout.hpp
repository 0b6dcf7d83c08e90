// A CuTe-style layout algebra over runtime integers, in PyTorch DeviceMesh's lexicographic convention.
//
// A Layout is a pair (shape, stride) of congruent IntTuples. It is a function from coordinates (or a single
// integer index) to offsets: L(c) = sum of c_i * stride_i over the leaves. Coordinates are enumerated
// lexicographically (row-major): the LAST leaf varies fastest, so the default stride of shape (2,4) is (4,1)
// and a DeviceMesh of shape (2,4) has layout (2,4):(4,1). This is the opposite of CuTe C++ and NVIDIA pycute
// (co-lexicographic); every operation below is the lexicographic counterpart of its pycute namesake.
//
// Notation: shape:stride, e.g. (2,4):(4,1), 8:1, ((2,2),4):((8,1),2), (4,):(1,).
//
// Contracts hold for sizes >= 1 and strides >= 0, with the size, every stride and every offset at most 2^61 (the
// constructor enforces all three, so no operation overflows).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

#include "meshloom/layout/int_tuple.hpp"

namespace meshloom {

// Bound on a layout's size, strides and largest offset (2^61).
inline constexpr std::int64_t kMaxLayoutExtent = std::int64_t{1} << 61;

class Layout {
public:
  // 1:0, the layout of a single element.
  Layout();
  // shape with its lexicographic default stride (suffix product): Layout((2,4)) == (2,4):(4,1).
  explicit Layout(IntTuple shape);
  // Throws ValueError when shape and stride are not congruent ("sizes (2,4) and strides (1,) don't match"),
  // when a size is < 1 or a stride is < 0, or when the size, a stride or an offset passes 2^61.
  Layout(IntTuple shape, IntTuple stride);

  [[nodiscard]] const IntTuple& shape() const noexcept { return shape_; }
  [[nodiscard]] const IntTuple& stride() const noexcept { return stride_; }

  // L(i) for an integer index: split from the right (the last mode takes i mod its size, and so on); the
  // leftmost mode receives the remaining quotient unreduced, so an index >= size overflows into it.
  // (2,4):(4,1)(5) == 5; (2,4):(1,2)(5) == 1*1 + 1*2 == 3.
  [[nodiscard]] std::int64_t operator()(std::int64_t index) const;
  // L(c) for a coordinate congruent to the shape (an int at any level is split as above).
  [[nodiscard]] std::int64_t operator()(const IntTuple& coordinate) const;

  friend bool operator==(const Layout& a, const Layout& b) noexcept {
    return a.shape_ == b.shape_ && a.stride_ == b.stride_;
  }

private:
  IntTuple shape_;
  IntTuple stride_;
};

// One (size, stride) leaf.
struct Leaf {
  std::int64_t size;
  std::int64_t stride;
  friend bool operator==(const Leaf&, const Leaf&) = default;
};

// ---- Structure ------------------------------------------------------------------------------------------

// Number of top-level modes (1 when the shape is an int). rank((2,4):(4,1)) == 2.
[[nodiscard]] std::size_t rank(const Layout& l) noexcept;
// Product of all sizes. size(((2,2),4):((8,1),2)) == 16.
[[nodiscard]] std::int64_t size(const Layout& l);
// L(size - 1) + 1: one past the largest offset. cosize((2,2):(8,1)) == 10.
[[nodiscard]] std::int64_t cosize(const Layout& l);
// Product of each top-level mode. top_level_sizes(((2,2),4):((8,1),2)) == {4, 4}.
[[nodiscard]] std::vector<std::int64_t> top_level_sizes(const Layout& l);
// Depth-first leaves. leaves(((2,2),4):((8,1),2)) == {{2,8},{2,1},{4,2}}.
[[nodiscard]] std::vector<Leaf> leaves(const Layout& l);
// The layout of flat leaves: (sizes):(strides); a single leaf stays a 1-tuple.
[[nodiscard]] Layout from_leaves(const std::vector<Leaf>& leaves);
// The i-th top-level mode as a layout; negative i counts from the end. Throws IndexError
// "Dim i is out of range for layout with n dimensions. Expected dim to be in range [-n, n-1]."
[[nodiscard]] Layout mode(const Layout& l, std::int64_t i);

// ---- Coordinates ----------------------------------------------------------------------------------------

// crd2idx(c, shape, stride): the offset of coordinate c (see Layout::operator()).
[[nodiscard]] std::int64_t crd2idx(const IntTuple& coordinate, const IntTuple& shape, const IntTuple& stride);
// idx2crd(i, shape): the lexicographic coordinate of index i, per leaf (i / suffix_stride) mod size.
// idx2crd(5, (2,4)) == (1,1); idx2crd(5, ((2,2),2)) == ((1,0),1). Inverse of crd2idx for i < product(shape).
[[nodiscard]] IntTuple idx2crd(std::int64_t index, const IntTuple& shape);

// ---- Algebra --------------------------------------------------------------------------------------------

// An equivalent layout (same size, same L(i) for every i < size) with as few leaves as possible (past size the two
// may differ: coalesce((1,4):(7,1)) == 4:1, whose L(4) is 4, not 7). Nesting is lost;
// one remaining mode is returned int-shaped; all-size-1 input gives 1:0.
// coalesce((2,4):(4,1)) == 8:1; coalesce((2,1,4):(4,7,1)) == 8:1; coalesce((2,4):(1,2)) == (2,4):(1,2).
[[nodiscard]] Layout coalesce(const Layout& l);
// Drops size-1 leaves (and stride-0 leaves) then coalesces. filter((2,3):(0,1)) == 3:1.
[[nodiscard]] Layout filter(const Layout& l);

// The layout that tiles the index space [0, max_index) around l: its offsets, added to l's, reach every index
// below max_index exactly once (when l is injective and its strides divide). l and its complement share no
// offset except 0; the complement's offsets, enumerated lexicographically, strictly increase.
// complement(4:2, 8) == 2:1; complement(4:2, 16) == (2,2):(8,1); complement((2,2):(4,1), 16) == (2,2):(8,2).
// max_index must lie in [1, 2^61].
// Throws ValueError when no complement exists: l's leaves, sorted by stride, do not each start where the
// previous one ends or at a multiple of it (e.g. (2,2):(1,1), which overlaps, or (2,2):(1,3)).
[[nodiscard]] Layout complement(const Layout& l, std::int64_t max_index);

// R = A o B, "A after B": R(i) == A(B(i)) for every i < size(B) where B is injective and its offsets stay below
// size(A); elsewhere R is pycute's answer, which can differ (A's size-1 leaves are dropped with their strides:
// composition(1:2, 2:1) == 2:0 though A(1) == 2; modes of a tuple-shaped B that overlap do not add up:
// composition((2,2):(1,4), (2,2):(1,1)) == (2,2):(4,4)). B with a tuple shape composes mode by mode and R has B's
// top-level modes. Throws ValueError when a stride of B does not divide (or is not divided by) a size of A, as
// pycute asserts, and when a size of B does not split evenly over A's sizes (composition((3,4):(10,1), 6:1):
// pycute answers 4:1, of the wrong size).
// composition((4,2):(2,1), 2:1) == 2:1; composition(4:2, (2,2):(2,1)) == (2,2):(4,2);
// composition((4,2):(4,1), 2:3) throws.
[[nodiscard]] Layout composition(const Layout& a, const Layout& b);
// Mode-by-mode: R's mode i is composition(mode(a, i), b[i]); a's remaining modes are kept.
[[nodiscard]] Layout composition(const Layout& a, const std::vector<Layout>& b);

// For an injective L, the layout R with L(R(i)) == i for i < size(R), as large as possible.
// right_inverse((2,4):(4,1)) == 8:1; right_inverse((2,3):(1,2)) == (3,2):(1,3). A non-injective L gets pycute's
// scan, which need not be the largest: a stride-0 leaf stops it (right_inverse((2,3):(0,1)) == 1:0, though 3:1
// also inverts it).
[[nodiscard]] Layout right_inverse(const Layout& l);
// The layout R with R(L(i)) == i for every i < size(L) (L injective): right_inverse(make_layout(complement(L), L)).
// left_inverse(4:2) == (4,2):(1,4): it maps 0,2,4,6 back to 0,1,2,3.
[[nodiscard]] Layout left_inverse(const Layout& l);

// A layout whose top-level modes are the given layouts. make_layout({2:1, 4:2}) == (2,4):(1,2);
// make_layout({(2,2):(4,1)}) == ((2,2),):((4,1),).
[[nodiscard]] Layout make_layout(const std::vector<Layout>& modes);
// The whole layout as one mode: nest((2,2):(4,1)) == ((2,2),):((4,1),).
[[nodiscard]] Layout nest(const Layout& l);
// Replaces top-level modes [begin, end) with x's top-level modes (an int-shaped x counts as one mode).
// splice((2,3,4):(12,4,1), 1, 2, (3,1):(1,3)) == (2,3,1,4):(12,1,3,1).
[[nodiscard]] Layout splice(const Layout& l, std::size_t begin, std::size_t end, const Layout& x);

// ---- Offsets and ranks ----------------------------------------------------------------------------------

// Calls fn(offset) for every coordinate in lexicographic order (the offsets L(0), L(1), ..., L(size-1)).
void for_each_offset(const std::vector<Leaf>& leaves, const std::function<void(std::int64_t)>& fn);
// L(i) for every i < size(L), lexicographically (PyTorch's all_ranks_from_zero).
// codomain((2,3):(3,1)) == 0..5; codomain((2,3):(1,2)) == {0,2,4,1,3,5}.
[[nodiscard]] std::vector<std::int64_t> codomain(const Layout& l);
// For each offset o of complement(l, world) (lexicographic): {o + r for r in codomain(l)}.
// global_ranks(4:2, 8) == {{0,2,4,6},{1,3,5,7}}.
// Throws ValueError when l has no complement in world (complement's error).
[[nodiscard]] std::vector<std::vector<std::int64_t>> global_ranks(const Layout& l, std::int64_t world);

// A dense row-major tensor of ranks: shape {instances, top-level sizes...}.
struct RankTensor {
  std::vector<std::int64_t> shape;
  std::vector<std::int64_t> values;
  friend bool operator==(const RankTensor&, const RankTensor&) = default;
};

// Every instance of l over an explicit rank map (PyTorch's remap_to_tensor): with C = complement of l's leaves
// in rank_map.size(), entry [k][c...] = rank_map[offset_k + l(c)], offsets in lexicographic order of C.
// remap((2,2):(2,1), {10,20,30,40}) == [[[10,20],[30,40]]]; remap(2:4, 0..7) == [[0,4],[1,5],[2,6],[3,7]].
// Throws ValueError when cosize(l) > rank_map.size(), when l has no complement (complement's error), or when an
// instance would read past the rank map.
[[nodiscard]] RankTensor remap(const Layout& l, const std::vector<std::int64_t>& rank_map);

// ---- Checks ---------------------------------------------------------------------------------------------

// All offsets distinct. is_injective((3,2):(2,3)) is true; is_injective((2,2):(1,1)) is false.
[[nodiscard]] bool is_injective(const Layout& l);
// The stricter test PyTorch's newest DeviceMesh uses: after coalescing, leaves sorted by stride descending
// each have a stride that is a multiple of the next leaf's stride * size. A single leaf always passes, even a stride-0
// one (as PyTorch's check does: is_orthogonal(4:0) is true though 4:0 is not injective; DeviceMesh refuses stride-0
// leaves before it asks). With two or more leaves, orthogonal implies injective.
// is_orthogonal((3,2):(2,3)) is false although that layout is injective.
[[nodiscard]] bool is_orthogonal(const Layout& l);
// Strides of the coalesced leaves are non-increasing left to right (a normal, major-to-minor layout).
[[nodiscard]] bool is_sorted(const Layout& l);

// ---- Text -----------------------------------------------------------------------------------------------

[[nodiscard]] std::string to_string(const Layout& l);
std::ostream& operator<<(std::ostream& os, const Layout& l);
// Parses "shape:stride" (or a bare shape, which takes the default strides). Throws ValueError.
[[nodiscard]] Layout parse_layout(std::string_view text);

[[nodiscard]] std::size_t hash_value(const Layout& l) noexcept;

}  // namespace meshloom

template <>
struct std::hash<meshloom::Layout> {
  std::size_t operator()(const meshloom::Layout& l) const noexcept { return meshloom::hash_value(l); }
};
