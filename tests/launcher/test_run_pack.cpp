// The executor's pure parts (no MPI): packing with a dim outermost, padding uneven pieces to a fixed block and
// unpacking them; the group arithmetic; and the per-rank buffers equal the simulator's whole distributions.
#include <gtest/gtest.h>

#include <cstdint>
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

TEST(RunLocal, PerRankBuffersEqualTheWholeDistributions) {
  const std::vector<std::int64_t> mesh = {2, 3};
  const std::vector<std::int64_t> tensor = {7, 5, 3};
  for (const char* text : {"S(0)S(1)", "P(sum)S(0)", "P(avg)P(max)", "S(0)[1]S(0)[0]", "RP(product)"}) {
    const State state = parse_state(text);
    const Distribution init = initial_distribution(mesh, tensor, state);
    const Distribution want = expected_distribution(mesh, tensor, state);
    for (std::size_t r = 0; r < init.ranks.size(); ++r) {
      const auto c = rank_coordinate(mesh, r);
      EXPECT_EQ(initial_local(mesh, tensor, state, c), init.ranks[r]) << text << " rank " << r;
      EXPECT_EQ(expected_local(mesh, tensor, state, c), want.ranks[r]) << text << " rank " << r;
    }
  }
  EXPECT_ANY_THROW((void)initial_local(mesh, tensor, parse_state("RR"), {2, 0}));
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
