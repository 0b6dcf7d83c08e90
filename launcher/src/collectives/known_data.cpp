#include "known_data.hpp"

#include <algorithm>

namespace meshloom::launcher::known {

namespace {

std::int64_t base(std::int64_t index) noexcept { return 2 + index % 7; }

// The sum of (r mod kResidues) over r in [0, n).
std::int64_t residue_sum(std::int64_t n) noexcept {
  const std::int64_t whole = n / kResidues;
  const std::int64_t rest = n % kResidues;
  return whole * (kResidues * (kResidues - 1) / 2) + rest * (rest - 1) / 2;
}

}  // namespace

std::int64_t reduced_sum(ReduceOp op, std::int64_t index, std::int64_t n) noexcept {
  return op == ReduceOp::Avg ? n * reduced_output(op, index, n) : reduced_output(op, index, n);
}

std::int64_t reduced_input(ReduceOp op, std::int64_t rank, std::int64_t index, std::int64_t n) noexcept {
  switch (op) {
    case ReduceOp::Sum: return base(index) + rank % kResidues;
    case ReduceOp::Avg:  // b + 1 and b - 1 on ranks 0 and 1, b elsewhere: the sum is n*b (b + 1 on one rank)
      if (rank == 0) return base(index) + 1;
      return rank == 1 ? base(index) - 1 : base(index);
    case ReduceOp::Max:
    case ReduceOp::Min: return base(index) + 2 * ((rank + index) % std::min(n, kSpread));
    case ReduceOp::Product:
      if (index % n == rank) return 2;
      return (index + 1) % n == rank ? n + 2 : 1;
  }
  return 0;
}

std::int64_t reduced_output(ReduceOp op, std::int64_t index, std::int64_t n) noexcept {
  switch (op) {
    case ReduceOp::Sum: return n * base(index) + residue_sum(n);
    case ReduceOp::Avg: return n == 1 ? base(index) + 1 : base(index);
    case ReduceOp::Max: return base(index) + 2 * (std::min(n, kSpread) - 1);
    case ReduceOp::Min: return base(index);
    case ReduceOp::Product: return n == 1 ? 2 : 2 * (n + 2);
  }
  return 0;
}

bool checkable(DType dtype) noexcept {
  switch (dtype) {
    case DType::Float32:
    case DType::Float64:
    case DType::Int32:
    case DType::Int64:
    case DType::Int8:
    case DType::UInt8: return true;
    default: return false;
  }
}

void size_buffers(CollectiveData& d, bool in_place) {
  d.in.assign(static_cast<std::size_t>(d.counts.in_count) * d.item(), std::byte{0});
  if (in_place) {
    d.out.clear();
  } else {
    d.out.assign(static_cast<std::size_t>(d.counts.out_count) * d.item(), kPoison);
  }
}

void fill_moved(CollectiveData& d, std::uint64_t pattern) {
  for (std::size_t i = 0; i < static_cast<std::size_t>(d.counts.in_count); ++i) put_moved(d.in, i, d.item(), pattern, i);
}

void fill_reduced(CollectiveData& d) {
  if (!checkable(d.dtype)) return;  // float16, bfloat16, float8 (nccl without --check): zeros, timed only
  with_checkable_type(d.dtype, [&](auto tag) {
    put_reduced<decltype(tag)>(d.in, static_cast<std::size_t>(d.counts.in_count), d.op, d.me, d.n);
  });
}

std::int64_t wrong_reduced_output(const CollectiveData& d, std::int64_t offset) {
  std::int64_t wrong = 0;
  with_checkable_type(d.dtype, [&](auto tag) {
    wrong = wrong_reduced<decltype(tag)>(d.out, static_cast<std::size_t>(d.counts.out_count), d.op, offset, d.n);
  });
  return wrong;
}

}  // namespace meshloom::launcher::known
