// The executor's pure parts (no MPI): packing with a dim outermost, padding uneven pieces to a fixed block and
// unpacking them; the group arithmetic; and the per-rank buffers (and the simulator's whole distributions) equal a
// naive reference written in the test and buffers worked out by hand.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "meshloom/plan/executor.hpp"
#include "meshloom/plan/simulator.hpp"
#include "meshloom/plan/state.hpp"

namespace meshloom {
namespace {

LocalTensor iota(std::vector<std::int64_t> shape) {
  LocalTensor t;
  t.shape = std::move(shape);
  std::int64_t n = 1;
  for (auto s : t.shape) n *= s;
  for (std::int64_t i = 0; i < n; ++i) t.data.push_back(i + 1);
  return t;
}

TEST(RunPack, WholeTensorWithDimOutermostIsATranspose) {
  const LocalTensor t = iota({2, 3});  // [[1,2,3],[4,5,6]]
  const auto packed = pack_blocks(t, 1, {ChunkExtent{3, 0}}, 1, 6);
  EXPECT_EQ(packed, (std::vector<std::int64_t>{1, 4, 2, 5, 3, 6}));
  const LocalTensor back = unpack_blocks(packed, 6, {{2, 3}}, 1);
  EXPECT_EQ(back, t);
}

TEST(RunPack, UnevenChunksArePaddedToTheCeilPiece) {
  const LocalTensor t = iota({5, 2});  // rows 1,2 / 3,4 / 5,6 / 7,8 / 9,10
  std::vector<ChunkExtent> pieces;
  for (std::int64_t k = 0; k < 3; ++k) pieces.push_back(chunk_extent(5, 3, k));  // 2, 2, 1
  const auto packed = pack_blocks(t, 0, pieces, 0, 4, -1);
  EXPECT_EQ(packed, (std::vector<std::int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, -1, -1}));
  const LocalTensor back = unpack_blocks(packed, 4, {{2, 2}, {2, 2}, {1, 2}}, 0);
  EXPECT_EQ(back, t);
}

TEST(RunPack, EmptyPiecesAreAllPadding) {
  const LocalTensor t = iota({1, 3});
  std::vector<ChunkExtent> pieces;
  for (std::int64_t k = 0; k < 2; ++k) {
    ChunkExtent e = chunk_extent(1, 2, k);
    if (e.size == 0) e.offset = 0;
    pieces.push_back(e);
  }
  const auto packed = pack_blocks(t, 0, pieces, 0, 3, 0);
  EXPECT_EQ(packed, (std::vector<std::int64_t>{1, 2, 3, 0, 0, 0}));
  const LocalTensor back = unpack_blocks(packed, 3, {{1, 3}, {0, 3}}, 0);
  EXPECT_EQ(back, t);
}

TEST(RunPack, AllToAllPiecesSplitOneDimAndConcatenateAnother) {
  // Split along dim 1 (extent 3 over 2: 2 and 1), pack with dim 0 outermost; unpack of what two senders sent.
  const LocalTensor a = iota({2, 3});
  std::vector<ChunkExtent> pieces = {chunk_extent(3, 2, 0), chunk_extent(3, 2, 1)};
  const auto packed = pack_blocks(a, 1, pieces, 0, 4);
  // piece 0: [[1,2],[4,5]] with dim 0 outermost = 1,2,4,5; piece 1: [[3],[6]] = 3,6 + padding
  EXPECT_EQ(packed, (std::vector<std::int64_t>{1, 2, 4, 5, 3, 6, 0, 0}));
  // Receiver of piece 0 from two senders with 2 and 1 rows: concatenation along dim 0.
  const std::vector<std::int64_t> blocks = {1, 2, 4, 5, 7, 8, 0, 0};
  const LocalTensor got = unpack_blocks(blocks, 4, {{2, 2}, {1, 2}}, 0);
  EXPECT_EQ(got.shape, (std::vector<std::int64_t>{3, 2}));
  EXPECT_EQ(got.data, (std::vector<std::int64_t>{1, 2, 4, 5, 7, 8}));
}

TEST(RunPack, MiddleDimOutermostRoundTrips) {
  const LocalTensor t = iota({3, 4, 2});
  std::vector<ChunkExtent> pieces;
  for (std::int64_t k = 0; k < 3; ++k) pieces.push_back(chunk_extent(4, 3, k));  // 2, 2, 0
  for (auto& e : pieces) {
    if (e.size == 0) e.offset = 0;
  }
  const auto packed = pack_blocks(t, 1, pieces, 1, 12);
  const LocalTensor back = unpack_blocks(packed, 12, {{3, 2, 2}, {3, 2, 2}, {3, 0, 2}}, 1);
  EXPECT_EQ(back, t);
}

TEST(RunPack, ErrorsAreValueErrors) {
  const LocalTensor t = iota({4});
  EXPECT_ANY_THROW((void)pack_blocks(t, 0, {ChunkExtent{4, 0}}, 0, 3));  // does not fit
  EXPECT_ANY_THROW((void)pack_blocks(t, 0, {ChunkExtent{2, 3}}, 0, 4));  // outside
  EXPECT_ANY_THROW((void)unpack_blocks({1, 2}, 2, {{2}, {2}}, 0));       // too short
  EXPECT_ANY_THROW((void)unpack_blocks({1, 2, 3, 4}, 2, {{1, 2}, {1, 1}}, 0));  // differ outside dim 0
}

TEST(RunGroups, IndexAndMembersAreRowMajorOverTheAxes) {
  const std::vector<std::int64_t> mesh = {2, 3, 2};
  EXPECT_EQ(group_index(mesh, {1, 2, 1}, {1}), 2);
  EXPECT_EQ(group_index(mesh, {1, 2, 1}, {0, 2}), 3);
  EXPECT_EQ(group_index(mesh, {1, 2, 0}, {1, 2}), 4);
  const auto members = group_members(mesh, {1, 2, 1}, {0, 2});
  ASSERT_EQ(members.size(), 4U);
  EXPECT_EQ(members[0], (std::vector<std::int64_t>{0, 2, 0}));
  EXPECT_EQ(members[1], (std::vector<std::int64_t>{0, 2, 1}));
  EXPECT_EQ(members[2], (std::vector<std::int64_t>{1, 2, 0}));
  EXPECT_EQ(members[3], (std::vector<std::int64_t>{1, 2, 1}));
}

// ---- The per-rank buffers against a naive reference written here, not against the simulator's own functions ----

// What a state means, spelled out by hand for the reference: per tensor dim the mesh axes that split it in split
// order, and the partial axes (ascending) with their ops.
struct Meaning {
  std::vector<std::vector<std::size_t>> splits;  // per tensor dim
  std::vector<std::pair<std::size_t, ReduceOp>> partial;
};

std::vector<std::int64_t> coordinate_of(const std::vector<std::int64_t>& mesh, std::size_t rank) {
  std::vector<std::int64_t> c(mesh.size());
  for (std::size_t k = mesh.size(); k-- > 0;) {
    c[k] = static_cast<std::int64_t>(rank % static_cast<std::size_t>(mesh[k]));
    rank /= static_cast<std::size_t>(mesh[k]);
  }
  return c;
}

// The slice of the global tensor (element at flat row-major index i holds i + 1) that the rank at `c` holds once
// partial values are reduced: each dim cut by its axes in order, torch.chunk style (pieces of ceil(len / n), the last
// ones shorter or empty).
LocalTensor naive_slice(const std::vector<std::int64_t>& mesh, const std::vector<std::int64_t>& tensor,
                        const Meaning& m, const std::vector<std::int64_t>& c) {
  const std::size_t dims = tensor.size();
  std::vector<std::int64_t> start(dims, 0), size(tensor);
  for (std::size_t d = 0; d < dims; ++d) {
    for (const std::size_t a : m.splits[d]) {
      const std::int64_t piece = (size[d] + mesh[a] - 1) / mesh[a];
      const std::int64_t offset = std::min(c[a] * piece, size[d]);
      start[d] += offset;
      size[d] = std::min(piece, size[d] - offset);
    }
  }
  LocalTensor t;
  t.shape = size;
  std::int64_t n = 1;
  for (const auto s : size) n *= s;
  for (std::int64_t local = 0; local < n; ++local) {
    std::int64_t rest = local, flat = 0, stride = 1;
    for (std::size_t d = dims; d-- > 0;) {
      flat += (start[d] + rest % size[d]) * stride;
      rest /= size[d];
      stride *= tensor[d];
    }
    t.data.push_back(flat + 1);
  }
  return t;
}

// The buffers of initial_local reduced over the partial axes m.partial[0..k) (ascending), at coordinate `c` (its
// entries on those axes are ignored): what the ranks hold reduces to the slice whatever the split.
LocalTensor reduced(const std::vector<std::int64_t>& mesh, const std::vector<std::int64_t>& tensor,
                    const State& state, const Meaning& m, std::vector<std::int64_t> c, std::size_t k) {
  if (k == 0) return initial_local(mesh, tensor, state, c);
  const auto [axis, op] = m.partial[k - 1];
  c[axis] = 0;
  LocalTensor acc = reduced(mesh, tensor, state, m, c, k - 1);
  for (std::int64_t i = 1; i < mesh[axis]; ++i) {
    c[axis] = i;
    const LocalTensor next = reduced(mesh, tensor, state, m, c, k - 1);
    EXPECT_EQ(next.shape, acc.shape);
    for (std::size_t e = 0; e < acc.data.size() && e < next.data.size(); ++e) {
      std::int64_t& x = acc.data[e];
      const std::int64_t y = next.data[e];
      switch (op) {
        case ReduceOp::Sum:
        case ReduceOp::Avg: x += y; break;
        case ReduceOp::Max: x = std::max(x, y); break;
        case ReduceOp::Min: x = std::min(x, y); break;
        case ReduceOp::Product: x *= y; break;
      }
    }
  }
  if (op == ReduceOp::Avg) {
    for (auto& x : acc.data) {
      EXPECT_EQ(x % mesh[axis], 0) << "an inexact mean";
      x /= mesh[axis];
    }
  }
  return acc;
}

TEST(RunLocal, PerRankBuffersMatchANaiveReference) {
  const std::vector<std::int64_t> mesh = {2, 3};
  struct Case {
    const char* text;
    Meaning meaning;
  };
  const std::vector<Case> cases = {
      {"S(0)S(1)", {{{0}, {1}, {}}, {}}},
      {"RS(0)", {{{1}, {}, {}}, {}}},
      {"S(2)S(0)", {{{1}, {}, {0}}, {}}},
      {"S(0)[1]S(0)[0]", {{{1, 0}, {}, {}}, {}}},  // dim 0 split by axis 1 first, then by axis 0
      {"S(0)[0]S(0)[1]", {{{0, 1}, {}, {}}, {}}},
      {"P(sum)S(0)", {{{1}, {}, {}}, {{0, ReduceOp::Sum}}}},
      {"S(1)P(min)", {{{}, {0}, {}}, {{1, ReduceOp::Min}}}},
      {"P(avg)P(max)", {{{}, {}, {}}, {{0, ReduceOp::Avg}, {1, ReduceOp::Max}}}},
      {"RP(product)", {{{}, {}, {}}, {{1, ReduceOp::Product}}}},
  };
  // Uneven pieces (7 over 2 and 3, 5 over 3) and empty ones (4 over 3 is 2, 2, 0; then 0 over 2).
  const std::vector<std::vector<std::int64_t>> tensors = {{7, 5, 3}, {4, 2, 1}};
  for (const auto& tensor : tensors) {
    for (const auto& [text, meaning] : cases) {
      const State state = parse_state(text);
      const Distribution init = initial_distribution(mesh, tensor, state);
      const Distribution want = expected_distribution(mesh, tensor, state);
      ASSERT_EQ(init.ranks.size(), 6U);
      ASSERT_EQ(want.ranks.size(), 6U);
      for (std::size_t r = 0; r < 6; ++r) {
        const auto c = coordinate_of(mesh, r);
        const LocalTensor slice = naive_slice(mesh, tensor, meaning, c);
        const std::string where = std::string(text) + " rank " + std::to_string(r);
        EXPECT_EQ(expected_local(mesh, tensor, state, c), slice) << where;
        EXPECT_EQ(want.ranks[r], slice) << where;
        const LocalTensor local = initial_local(mesh, tensor, state, c);
        EXPECT_EQ(init.ranks[r], local) << where;
        if (meaning.partial.empty()) {
          EXPECT_EQ(local, slice) << where;
        } else {
          EXPECT_EQ(local.shape, slice.shape) << where;
          EXPECT_EQ(reduced(mesh, tensor, state, meaning, c, meaning.partial.size()), slice) << where;
        }
      }
    }
  }
  EXPECT_ANY_THROW((void)initial_local(mesh, {7, 5, 3}, parse_state("RR"), {2, 0}));
}

// A few buffers worked out by hand (docs/04-planner.md: the shard order puts different rows on the same rank).
TEST(RunLocal, PerRankBuffersWorkedOutByHand) {
  // (2,2) mesh, 8 rows: rank (0,1) holds rows 2..3 when axis 0 splits first, rows 4..5 when axis 1 does.
  EXPECT_EQ(initial_local({2, 2}, {8}, parse_state("S(0)[0]S(0)[1]"), {0, 1}), (LocalTensor{{2}, {3, 4}}));
  EXPECT_EQ(initial_local({2, 2}, {8}, parse_state("S(0)[1]S(0)[0]"), {0, 1}), (LocalTensor{{2}, {5, 6}}));
  // (2,3) mesh, tensor (7,5,3) as S(0)S(1): rank (1,2) holds rows 4..6 (7 = 4 + 3) and column 4 (5 = 2 + 2 + 1).
  EXPECT_EQ(initial_local({2, 3}, {7, 5, 3}, parse_state("S(0)S(1)"), {1, 2}),
            (LocalTensor{{3, 1, 3}, {73, 74, 75, 88, 89, 90, 103, 104, 105}}));
  // 4 over 3 is 2, 2 and an empty piece.
  EXPECT_EQ(expected_local({2, 3}, {4, 2}, parse_state("RS(0)"), {1, 2}), (LocalTensor{{0, 2}, {}}));
  EXPECT_EQ(expected_local({2, 3}, {4, 2}, parse_state("RS(0)"), {0, 1}), (LocalTensor{{2, 2}, {5, 6, 7, 8}}));
  // P(sum) over 2 ranks: the two buffers add up to the value, element by element.
  const LocalTensor a = initial_local({2}, {3}, parse_state("P(sum)"), {0});
  const LocalTensor b = initial_local({2}, {3}, parse_state("P(sum)"), {1});
  ASSERT_EQ(a.data.size(), 3U);
  ASSERT_EQ(b.data.size(), 3U);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_EQ(a.data[i] + b.data[i], static_cast<std::int64_t>(i) + 1) << i;
}

TEST(RunLocal, FirstMismatchNamesTheElement) {
  LocalTensor a = iota({2, 3});
  const LocalTensor b = a;
  EXPECT_FALSE(first_mismatch(a, b).has_value());
  a.data[4] = 99;
  EXPECT_EQ(first_mismatch(a, b).value_or(""), "element [1,1] (flat index 4): expected 5, got 99");
  a.shape = {3, 2};
  EXPECT_EQ(first_mismatch(a, b).value_or(""), "shape [3,2], expected [2,3]");
}

}  // namespace
}  // namespace meshloom
