#include "meshloom/layout/layout.hpp"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <utility>

#include "checked.hpp"
#include "meshloom/error.hpp"

namespace meshloom {

namespace {

// Every layout keeps its size and its largest offset within kMaxLayoutExtent, so the algebra's own products
// (size * stride of a leaf, merged sizes, complement bounds) never overflow 64-bit integers.
void check_values(const IntTuple& shape, const IntTuple& stride) {
  const auto sizes = flatten(shape);
  const auto strides = flatten(stride);
  std::int64_t total = 1;
  std::int64_t last = 0;  // the largest offset, L(size - 1)
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    if (sizes[i] < 1) raise(ErrorKind::ValueError, "layout size " + std::to_string(sizes[i]) + " in " + to_string(shape) + " is < 1");
    if (strides[i] < 0) {
      raise(ErrorKind::ValueError, "layout stride " + std::to_string(strides[i]) + " in " + to_string(stride) + " is < 0");
    }
    total = detail::checked_mul(total, sizes[i], "layout size");
    last = detail::checked_add(last, detail::checked_mul(sizes[i] - 1, strides[i], "layout extent"), "layout extent");
    if (total > kMaxLayoutExtent || last > kMaxLayoutExtent || strides[i] > kMaxLayoutExtent) {
      raise(ErrorKind::ValueError, "layout " + to_string(shape) + ":" + to_string(stride) +
                                       " is too large: sizes, strides and offsets must stay at or below 2^61");
    }
  }
}

// An int-shaped layout for one leaf, a flat tuple for several: the pycute convention for results of
// coalesce/complement/composition.
Layout from_result_leaves(const std::vector<Leaf>& result) {
  if (result.size() == 1) return {IntTuple(result[0].size), IntTuple(result[0].stride)};
  return from_leaves(result);
}

void leaves_into(const IntTuple& shape, const IntTuple& stride, std::vector<Leaf>& out) {
  if (shape.is_int()) {
    out.push_back({shape.value(), stride.value()});
    return;
  }
  for (std::size_t i = 0; i < shape.rank(); ++i) leaves_into(shape[i], stride[i], out);
}

// Lexicographic composition of a with a single int-shaped layout s:d.
Layout compose_leaf(const Layout& a, std::int64_t s, std::int64_t d) {
  if (d == 0) return {IntTuple(s), IntTuple(0)};
  const auto flat_a = leaves(coalesce(a));
  std::vector<Leaf> result;
  std::int64_t rest_shape = s;
  std::int64_t rest_stride = d;
  for (std::size_t i = flat_a.size(); i-- > 1;) {
    const auto [cur_size, cur_stride] = flat_a[i];
    if (cur_size % rest_stride != 0 && rest_stride % cur_size != 0) {
      raise(ErrorKind::ValueError, "composition of " + to_string(a) + " with " + std::to_string(s) + ":" +
                                       std::to_string(d) + ": stride " + std::to_string(rest_stride) +
                                       " and size " + std::to_string(cur_size) + " do not divide each other");
    }
    const std::int64_t n = std::min(std::max<std::int64_t>(1, cur_size / rest_stride), rest_shape);
    // B's size must split into this leaf's share and the rest; otherwise the result would lose elements.
    if (rest_shape % n != 0) {
      raise(ErrorKind::ValueError, "composition of " + to_string(a) + " with " + std::to_string(s) + ":" +
                                       std::to_string(d) + ": size " + std::to_string(rest_shape) +
                                       " is not divisible by " + std::to_string(n));
    }
    if (n != 1) result.push_back({n, detail::checked_mul(rest_stride, cur_stride, "composition stride")});
    rest_shape /= n;
    rest_stride = (rest_stride + cur_size - 1) / cur_size;
  }
  if (rest_shape != 1 || result.empty()) {
    result.push_back({rest_shape, detail::checked_mul(rest_stride, flat_a.front().stride, "composition stride")});
  }
  std::reverse(result.begin(), result.end());
  return from_result_leaves(result);
}

}  // namespace

// ---- Layout ---------------------------------------------------------------------------------------------

Layout::Layout() : shape_(1), stride_(0) {}

Layout::Layout(IntTuple shape) : shape_(std::move(shape)), stride_(suffix_product(shape_)) {
  check_values(shape_, stride_);
}

Layout::Layout(IntTuple shape, IntTuple stride) : shape_(std::move(shape)), stride_(std::move(stride)) {
  if (!congruent(shape_, stride_)) {
    raise(ErrorKind::ValueError, "sizes " + to_string(shape_) + " and strides " + to_string(stride_) + " don't match");
  }
  check_values(shape_, stride_);
}

std::int64_t Layout::operator()(std::int64_t index) const { return crd2idx(IntTuple(index), shape_, stride_); }

std::int64_t Layout::operator()(const IntTuple& coordinate) const { return crd2idx(coordinate, shape_, stride_); }

// ---- Structure ------------------------------------------------------------------------------------------

std::size_t rank(const Layout& l) noexcept { return l.shape().rank(); }

std::int64_t size(const Layout& l) { return product(l.shape()); }

std::int64_t cosize(const Layout& l) { return l(size(l) - 1) + 1; }

std::vector<std::int64_t> top_level_sizes(const Layout& l) {
  std::vector<std::int64_t> sizes;
  sizes.reserve(rank(l));
  for (std::size_t i = 0; i < rank(l); ++i) sizes.push_back(product(l.shape()[i]));
  return sizes;
}

std::vector<Leaf> leaves(const Layout& l) {
  std::vector<Leaf> out;
  leaves_into(l.shape(), l.stride(), out);
  return out;
}

Layout from_leaves(const std::vector<Leaf>& ls) {
  std::vector<IntTuple> shape;
  std::vector<IntTuple> stride;
  shape.reserve(ls.size());
  stride.reserve(ls.size());
  for (const auto& leaf : ls) {
    shape.emplace_back(leaf.size);
    stride.emplace_back(leaf.stride);
  }
  return {IntTuple::tuple(std::move(shape)), IntTuple::tuple(std::move(stride))};
}

Layout mode(const Layout& l, std::int64_t i) {
  const auto n = static_cast<std::int64_t>(rank(l));
  if (i < -n || i >= n) {
    raise(ErrorKind::IndexError, "Dim " + std::to_string(i) + " is out of range for layout with " +
                                     std::to_string(n) + " dimensions. Expected dim to be in range [" +
                                     std::to_string(-n) + ", " + std::to_string(n - 1) + "].");
  }
  const auto k = static_cast<std::size_t>(i < 0 ? i + n : i);
  return {l.shape()[k], l.stride()[k]};
}

// ---- Coordinates ----------------------------------------------------------------------------------------

std::int64_t crd2idx(const IntTuple& coordinate, const IntTuple& shape, const IntTuple& stride) {
  if (coordinate.is_tuple()) {
    if (!shape.is_tuple() || coordinate.rank() != shape.rank()) {
      raise(ErrorKind::ValueError,
            "coordinate " + to_string(coordinate) + " does not match shape " + to_string(shape));
    }
    std::int64_t sum = 0;
    for (std::size_t i = 0; i < shape.rank(); ++i) sum += crd2idx(coordinate[i], shape[i], stride[i]);
    return sum;
  }
  std::int64_t c = coordinate.value();
  if (shape.is_int()) return detail::checked_mul(c, stride.value(), "layout offset");
  // Split an integer from the right; the leftmost mode takes the unreduced quotient.
  std::int64_t result = 0;
  for (std::size_t i = shape.rank(); i-- > 1;) {
    const std::int64_t n = product(shape[i]);
    result += crd2idx(IntTuple(c % n), shape[i], stride[i]);
    c /= n;
  }
  if (shape.rank() == 0) return 0;
  return result + crd2idx(IntTuple(c), shape[0], stride[0]);
}

namespace {
IntTuple idx2crd_impl(std::int64_t index, const IntTuple& shape, const IntTuple& stride) {
  if (shape.is_int()) return IntTuple((index / stride.value()) % shape.value());
  std::vector<IntTuple> out;
  out.reserve(shape.rank());
  for (std::size_t i = 0; i < shape.rank(); ++i) out.push_back(idx2crd_impl(index, shape[i], stride[i]));
  return IntTuple::tuple(std::move(out));
}
}  // namespace

IntTuple idx2crd(std::int64_t index, const IntTuple& shape) {
  return idx2crd_impl(index, shape, suffix_product(shape));
}

// ---- Algebra --------------------------------------------------------------------------------------------

Layout coalesce(const Layout& l) {
  const auto in = leaves(l);
  std::vector<Leaf> result{{1, 0}};  // built right to left: result.back() is the current head
  for (std::size_t i = in.size(); i-- > 0;) {
    const Leaf leaf = in[i];
    Leaf& head = result.back();
    if (leaf.size == 1) continue;
    if (head.size == 1) {
      head = leaf;
    } else if (head.size * head.stride == leaf.stride) {
      head.size *= leaf.size;
    } else {
      result.push_back(leaf);
    }
  }
  std::reverse(result.begin(), result.end());
  return from_result_leaves(result);
}

Layout filter(const Layout& l) {
  std::vector<Leaf> kept;
  for (const auto& leaf : leaves(l)) {
    if (leaf.size != 1 && leaf.stride != 0) kept.push_back(leaf);
  }
  if (kept.empty()) return {};
  return coalesce(from_leaves(kept));
}

Layout complement(const Layout& l, std::int64_t max_index) {
  if (max_index < 1 || max_index > kMaxLayoutExtent) {
    raise(ErrorKind::ValueError, "complement bound " + std::to_string(max_index) + " is out of range [1, 2^61]");
  }
  auto sorted = leaves(l);
  std::sort(sorted.begin(), sorted.end(),
            [](const Leaf& a, const Leaf& b) { return std::pair(a.stride, a.size) < std::pair(b.stride, b.size); });
  std::vector<Leaf> result;  // ascending strides
  std::int64_t current = 1;
  for (const auto& [size, stride] : sorted) {
    if (stride == 0 || size == 1) continue;
    if (stride % current != 0 || current > size * stride) {
      // `current` is the extent of the leaves before this one in stride order (smaller strides, or equal ones sorted
      // first): a leaf starting inside it overlaps them; one starting past it, off a multiple of it, leaves gaps no
      // layout tiles.
      const bool overlaps = stride < current || current > size * stride;
      const std::string leaf = std::to_string(size) + ":" + std::to_string(stride);
      raise(ErrorKind::ValueError,
            "complement of " + to_string(l) + ": leaf " + leaf +
                (overlaps ? " overlaps the leaves before it in stride order (they span " + std::to_string(current) + ")"
                          : " has stride " + std::to_string(stride) + ", not a multiple of " + std::to_string(current) +
                                ", the span of the leaves before it in stride order") +
                ": no complement exists");
    }
    result.push_back({stride / current, current});
    current = size * stride;
  }
  result.push_back({(max_index + current - 1) / current, current});
  std::reverse(result.begin(), result.end());
  return coalesce(from_leaves(result));
}

Layout composition(const Layout& a, const Layout& b) {
  if (b.shape().is_tuple()) {
    std::vector<Layout> modes;
    modes.reserve(rank(b));
    for (std::size_t i = 0; i < rank(b); ++i) modes.push_back(composition(a, mode(b, static_cast<std::int64_t>(i))));
    return make_layout(modes);
  }
  return compose_leaf(a, b.shape().value(), b.stride().value());
}

Layout composition(const Layout& a, const std::vector<Layout>& b) {
  if (rank(a) < b.size()) {
    raise(ErrorKind::ValueError, "mode-wise composition of " + to_string(a) + " with " + std::to_string(b.size()) +
                                     " layouts: it has only " + std::to_string(rank(a)) + " modes");
  }
  std::vector<Layout> modes;
  for (std::size_t i = 0; i < rank(a); ++i) {
    const Layout ai = mode(a, static_cast<std::int64_t>(i));
    modes.push_back(i < b.size() ? composition(ai, b[i]) : ai);
  }
  return make_layout(modes);
}

Layout right_inverse(const Layout& l) {
  const auto ls = leaves(l);
  std::vector<std::int64_t> sizes;
  for (const auto& leaf : ls) sizes.push_back(leaf.size);
  const auto suffix = flatten(suffix_product(IntTuple::from_ints(sizes)));
  struct Entry {
    std::int64_t stride, size, rstride;
  };
  std::vector<Entry> sorted;
  for (std::size_t i = 0; i < ls.size(); ++i) sorted.push_back({ls[i].stride, ls[i].size, suffix[i]});
  std::sort(sorted.begin(), sorted.end(), [](const Entry& x, const Entry& y) {
    return std::tie(x.stride, x.size, x.rstride) < std::tie(y.stride, y.size, y.rstride);
  });
  std::vector<Leaf> result;
  std::int64_t current = 1;
  for (const auto& e : sorted) {
    if (e.size == 1) continue;
    if (e.stride != current) break;
    result.push_back({e.size, e.rstride});
    current = e.size * e.stride;
  }
  if (result.empty()) return {};
  std::reverse(result.begin(), result.end());
  return coalesce(from_leaves(result));
}

Layout left_inverse(const Layout& l) { return right_inverse(make_layout({complement(l, 1), l})); }

Layout make_layout(const std::vector<Layout>& modes) {
  std::vector<IntTuple> shape;
  std::vector<IntTuple> stride;
  for (const auto& m : modes) {
    shape.push_back(m.shape());
    stride.push_back(m.stride());
  }
  return {IntTuple::tuple(std::move(shape)), IntTuple::tuple(std::move(stride))};
}

Layout nest(const Layout& l) { return make_layout({l}); }

Layout splice(const Layout& l, std::size_t begin, std::size_t end, const Layout& x) {
  const std::size_t n = rank(l);
  if (begin > end || end > n) {
    raise(ErrorKind::IndexError, "splice range [" + std::to_string(begin) + ", " + std::to_string(end) +
                                     ") is out of range for layout " + to_string(l) + " with " + std::to_string(n) +
                                     " modes");
  }
  std::vector<Layout> modes;
  for (std::size_t i = 0; i < begin; ++i) modes.push_back(mode(l, static_cast<std::int64_t>(i)));
  for (std::size_t i = 0; i < rank(x); ++i) modes.push_back(mode(x, static_cast<std::int64_t>(i)));
  for (std::size_t i = end; i < n; ++i) modes.push_back(mode(l, static_cast<std::int64_t>(i)));
  return make_layout(modes);
}

// ---- Offsets and ranks ----------------------------------------------------------------------------------

void for_each_offset(const std::vector<Leaf>& ls, const std::function<void(std::int64_t)>& fn) {
  if (ls.empty()) {
    fn(0);
    return;
  }
  // Odometer over all leaves but the last, with a tight loop over the last (fastest) leaf.
  const std::size_t outer = ls.size() - 1;
  const auto [inner_size, inner_stride] = ls.back();
  std::vector<std::int64_t> counter(outer, 0);
  std::int64_t base = 0;
  while (true) {
    for (std::int64_t j = 0; j < inner_size; ++j) fn(base + j * inner_stride);
    std::size_t k = outer;
    while (k > 0) {
      --k;
      if (++counter[k] < ls[k].size) {
        base += ls[k].stride;
        break;
      }
      base -= (ls[k].size - 1) * ls[k].stride;
      counter[k] = 0;
      if (k == 0) return;
    }
    if (outer == 0) return;
  }
}

std::vector<std::int64_t> codomain(const Layout& l) {
  std::vector<std::int64_t> out;
  out.reserve(static_cast<std::size_t>(size(l)));
  for_each_offset(leaves(l), [&out](std::int64_t o) { out.push_back(o); });
  return out;
}

std::vector<std::vector<std::int64_t>> global_ranks(const Layout& l, std::int64_t world) {
  const auto ranks = codomain(l);
  std::vector<std::vector<std::int64_t>> groups;
  for (auto offset : codomain(complement(l, world))) {
    auto& g = groups.emplace_back();
    g.reserve(ranks.size());
    for (auto r : ranks) g.push_back(offset + r);
  }
  return groups;
}

RankTensor remap(const Layout& l, const std::vector<std::int64_t>& rank_map) {
  const auto n = static_cast<std::int64_t>(rank_map.size());
  if (cosize(l) > n) {
    raise(ErrorKind::ValueError, "layout " + to_string(l) + " has cosize " + std::to_string(cosize(l)) +
                                     " but the rank map holds only " + std::to_string(n) + " ranks");
  }
  const Layout flat = coalesce(l);
  const Layout c = complement(flat, n);
  if (cosize(c) - 1 + cosize(flat) - 1 >= n) {
    raise(ErrorKind::ValueError, "layout " + to_string(l) + " does not tile a rank map of " + std::to_string(n) +
                                     " ranks: its last instance would read position " +
                                     std::to_string(cosize(c) + cosize(flat) - 2));
  }
  RankTensor t;
  t.shape.push_back(size(c));
  for (auto s : top_level_sizes(l)) t.shape.push_back(s);
  if (rank(l) == 0) t.shape.resize(1);
  t.values.reserve(static_cast<std::size_t>(size(c) * size(l)));
  const auto offsets = codomain(flat);
  for_each_offset(leaves(c), [&](std::int64_t base) {
    for (auto o : offsets) t.values.push_back(rank_map[static_cast<std::size_t>(base + o)]);
  });
  return t;
}

// ---- Checks ---------------------------------------------------------------------------------------------

bool is_injective(const Layout& l) {
  auto offsets = codomain(l);
  std::sort(offsets.begin(), offsets.end());
  return std::adjacent_find(offsets.begin(), offsets.end()) == offsets.end();
}

bool is_orthogonal(const Layout& l) {
  auto ls = leaves(coalesce(l));
  std::erase_if(ls, [](const Leaf& leaf) { return leaf.size == 1; });
  if (ls.size() < 2) return true;
  std::sort(ls.begin(), ls.end(),
            [](const Leaf& a, const Leaf& b) { return std::pair(a.stride, a.size) > std::pair(b.stride, b.size); });
  for (std::size_t i = 0; i + 1 < ls.size(); ++i) {
    const std::int64_t span = ls[i + 1].stride * ls[i + 1].size;
    if (span == 0 || ls[i].stride % span != 0) return false;
  }
  return true;
}

bool is_sorted(const Layout& l) {
  auto ls = leaves(coalesce(l));
  std::erase_if(ls, [](const Leaf& leaf) { return leaf.size == 1; });
  for (std::size_t i = 0; i + 1 < ls.size(); ++i) {
    if (ls[i].stride < ls[i + 1].stride) return false;
  }
  return true;
}

// ---- Text -----------------------------------------------------------------------------------------------

std::string to_string(const Layout& l) { return to_string(l.shape()) + ":" + to_string(l.stride()); }

std::ostream& operator<<(std::ostream& os, const Layout& l) { return os << to_string(l); }

Layout parse_layout(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return Layout(parse_int_tuple(text));
  if (text.find(':', colon + 1) != std::string_view::npos) {
    raise(ErrorKind::ValueError, "cannot parse layout '" + std::string(text) + "': more than one ':'");
  }
  return {parse_int_tuple(text.substr(0, colon)), parse_int_tuple(text.substr(colon + 1))};
}

std::size_t hash_value(const Layout& l) noexcept {
  const std::size_t a = hash_value(l.shape());
  return a ^ (hash_value(l.stride()) + 0x9e3779b97f4a7c15ULL + (a << 6) + (a >> 2));
}

}  // namespace meshloom
