// IntTuple: an int, or a (possibly empty, possibly nested) tuple of IntTuples.
//
// The shapes and strides of layouts are IntTuples. `4` and `(4,)` are different values: an int has rank 1
// and is its own only mode; a tuple's rank is its element count. Printed without spaces, with Python's
// trailing comma for 1-tuples so the two stay distinguishable:
//
//   4          an int
//   (4,)       a tuple of one int
//   (2,4)      a tuple of two ints
//   ((2,2),4)  nested
//   ()         the empty tuple (product 1)
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <vector>

namespace meshloom {

class IntTuple {
public:
  // An int.
  IntTuple(std::int64_t value = 0) : value_(value) {}  // NOLINT(google-explicit-constructor): ints are IntTuples
  IntTuple(int value) : value_(value) {}                // NOLINT(google-explicit-constructor)

  // A tuple of the given elements (use tup(...) for literals).
  static IntTuple tuple(std::vector<IntTuple> elements);
  // A flat tuple of ints.
  static IntTuple from_ints(const std::vector<std::int64_t>& values);

  [[nodiscard]] bool is_int() const noexcept { return is_int_; }
  [[nodiscard]] bool is_tuple() const noexcept { return !is_int_; }
  // The int value; requires is_int().
  [[nodiscard]] std::int64_t value() const;
  // The elements; requires is_tuple().
  [[nodiscard]] const std::vector<IntTuple>& elements() const;
  // Number of top-level modes: 1 for an int, the element count for a tuple.
  [[nodiscard]] std::size_t rank() const noexcept { return is_int_ ? 1 : elements_.size(); }
  // The i-th top-level mode (an int's only mode is itself).
  [[nodiscard]] const IntTuple& operator[](std::size_t i) const;

  friend bool operator==(const IntTuple& a, const IntTuple& b) noexcept;

private:
  bool is_int_ = true;
  std::int64_t value_ = 0;
  std::vector<IntTuple> elements_;
};

// tup(2, 4) == (2,4); tup(tup(2, 2), 4) == ((2,2),4); tup() == (); tup(4) == (4,).
template <typename... Ts>
IntTuple tup(Ts... elements) {
  return IntTuple::tuple(std::vector<IntTuple>{IntTuple(elements)...});
}

// Product of all leaves (1 for the empty tuple).
[[nodiscard]] std::int64_t product(const IntTuple& t);
// Depth-first, left-to-right list of leaves.
[[nodiscard]] std::vector<std::int64_t> flatten(const IntTuple& t);
// Same nesting: both ints, or tuples of equal length whose elements are pairwise congruent.
[[nodiscard]] bool congruent(const IntTuple& a, const IntTuple& b) noexcept;
// Exclusive suffix product, right to left (lexicographic strides): (3,2,4) -> (8,4,1),
// ((2,3),4) -> ((12,4),1), 2 -> 1.
[[nodiscard]] IntTuple suffix_product(const IntTuple& shape, std::int64_t init = 1);
// Sum of products of congruent leaves.
[[nodiscard]] std::int64_t inner_product(const IntTuple& a, const IntTuple& b);

[[nodiscard]] std::string to_string(const IntTuple& t);
std::ostream& operator<<(std::ostream& os, const IntTuple& t);
// Deepest nesting parse_int_tuple accepts.
inline constexpr std::size_t kMaxIntTupleDepth = 32;
// Parses the printed form (spaces allowed). Throws ValueError naming the position of the bad token, and for
// nesting deeper than kMaxIntTupleDepth.
[[nodiscard]] IntTuple parse_int_tuple(std::string_view text);

[[nodiscard]] std::size_t hash_value(const IntTuple& t) noexcept;

}  // namespace meshloom

template <>
struct std::hash<meshloom::IntTuple> {
  std::size_t operator()(const meshloom::IntTuple& t) const noexcept { return meshloom::hash_value(t); }
};
