#include "meshloom/layout/int_tuple.hpp"

#include <cctype>
#include <ostream>
#include <utility>

#include "checked.hpp"
#include "meshloom/error.hpp"

namespace meshloom {

IntTuple IntTuple::tuple(std::vector<IntTuple> elements) {
  IntTuple t;
  t.is_int_ = false;
  t.elements_ = std::move(elements);
  return t;
}

IntTuple IntTuple::from_ints(const std::vector<std::int64_t>& values) {
  std::vector<IntTuple> elements(values.begin(), values.end());
  return tuple(std::move(elements));
}

std::int64_t IntTuple::value() const {
  if (!is_int_) raise(ErrorKind::TypeError, "IntTuple " + to_string(*this) + " is a tuple, not an int");
  return value_;
}

const std::vector<IntTuple>& IntTuple::elements() const {
  if (is_int_) raise(ErrorKind::TypeError, "IntTuple " + to_string(*this) + " is an int, not a tuple");
  return elements_;
}

const IntTuple& IntTuple::operator[](std::size_t i) const {
  if (i >= rank()) {
    raise(ErrorKind::IndexError, "mode " + std::to_string(i) + " is out of range for " + to_string(*this) +
                                     " of rank " + std::to_string(rank()));
  }
  return is_int_ ? *this : elements_[i];
}

bool operator==(const IntTuple& a, const IntTuple& b) noexcept {
  if (a.is_int_ != b.is_int_) return false;
  return a.is_int_ ? a.value_ == b.value_ : a.elements_ == b.elements_;
}

std::int64_t product(const IntTuple& t) {
  if (t.is_int()) return t.value();
  std::int64_t p = 1;
  for (const auto& e : t.elements()) p = detail::checked_mul(p, product(e), "product of an IntTuple");
  return p;
}

namespace {
void flatten_into(const IntTuple& t, std::vector<std::int64_t>& out) {
  if (t.is_int()) {
    out.push_back(t.value());
    return;
  }
  for (const auto& e : t.elements()) flatten_into(e, out);
}

std::int64_t suffix_product_into(const IntTuple& shape, std::int64_t init, IntTuple& out) {
  // Fills `out` with the strides of `shape` given that everything to its right spans `init`; returns the span
  // of shape * init.
  if (shape.is_int()) {
    out = IntTuple(init);
    return detail::checked_mul(init, shape.value(), "suffix product");
  }
  std::vector<IntTuple> strides(shape.rank());
  std::int64_t running = init;
  for (std::size_t i = shape.rank(); i-- > 0;) running = suffix_product_into(shape[i], running, strides[i]);
  out = IntTuple::tuple(std::move(strides));
  return running;
}
}  // namespace

std::vector<std::int64_t> flatten(const IntTuple& t) {
  std::vector<std::int64_t> out;
  flatten_into(t, out);
  return out;
}

bool congruent(const IntTuple& a, const IntTuple& b) noexcept {
  if (a.is_int() || b.is_int()) return a.is_int() && b.is_int();
  const auto& ea = a.elements();
  const auto& eb = b.elements();
  if (ea.size() != eb.size()) return false;
  for (std::size_t i = 0; i < ea.size(); ++i) {
    if (!congruent(ea[i], eb[i])) return false;
  }
  return true;
}

IntTuple suffix_product(const IntTuple& shape, std::int64_t init) {
  IntTuple out;
  suffix_product_into(shape, init, out);
  return out;
}

std::int64_t inner_product(const IntTuple& a, const IntTuple& b) {
  if (!congruent(a, b)) {
    raise(ErrorKind::ValueError, "inner_product of " + to_string(a) + " and " + to_string(b) + ": not congruent");
  }
  if (a.is_int()) return detail::checked_mul(a.value(), b.value(), "inner product");
  std::int64_t sum = 0;
  for (std::size_t i = 0; i < a.rank(); ++i) sum = detail::checked_add(sum, inner_product(a[i], b[i]), "inner product");
  return sum;
}

std::string to_string(const IntTuple& t) {
  if (t.is_int()) return std::to_string(t.value());
  std::string s = "(";
  const auto& e = t.elements();
  for (std::size_t i = 0; i < e.size(); ++i) {
    if (i > 0) s += ',';
    s += to_string(e[i]);
  }
  if (e.size() == 1) s += ',';
  s += ')';
  return s;
}

std::ostream& operator<<(std::ostream& os, const IntTuple& t) { return os << to_string(t); }

namespace {
class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  IntTuple parse_all() {
    IntTuple t = parse();
    skip_spaces();
    if (pos_ != text_.size()) fail("unexpected trailing text");
    return t;
  }

private:
  IntTuple parse() {
    skip_spaces();
    if (pos_ >= text_.size()) fail("expected an int or '(' but the text ended");
    if (text_[pos_] == '(') {
      if (++depth_ > kMaxIntTupleDepth) fail("nested deeper than " + std::to_string(kMaxIntTupleDepth) + " levels");
      ++pos_;
      std::vector<IntTuple> elements;
      skip_spaces();
      if (peek() == ')') {
        ++pos_;
        --depth_;
        return IntTuple::tuple({});
      }
      while (true) {
        elements.push_back(parse());
        skip_spaces();
        if (peek() == ',') {
          ++pos_;
          skip_spaces();
          if (peek() == ')') {
            ++pos_;
            break;
          }
          continue;
        }
        if (peek() == ')') {
          ++pos_;
          break;
        }
        fail("expected ',' or ')'");
      }
      --depth_;
      return IntTuple::tuple(std::move(elements));
    }
    return IntTuple(parse_int());
  }

  std::int64_t parse_int() {
    std::size_t start = pos_;
    bool negative = false;
    if (peek() == '-') {
      negative = true;
      ++pos_;
    }
    if (pos_ >= text_.size() || !std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      pos_ = start;
      fail("expected an int or '('");
    }
    std::int64_t v = 0;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) {
      const int digit = text_[pos_] - '0';
      if (v > (INT64_MAX - digit) / 10) {
        pos_ = start;
        fail("integer out of range");
      }
      v = v * 10 + digit;
      ++pos_;
    }
    return negative ? -v : v;
  }

  [[nodiscard]] char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_spaces() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  [[noreturn]] void fail(const std::string& why) const {
    raise(ErrorKind::ValueError, "cannot parse IntTuple '" + std::string(text_) + "' at position " +
                                     std::to_string(pos_) + ": " + why);
  }

  std::string_view text_;
  std::size_t pos_ = 0;
  std::size_t depth_ = 0;
};
}  // namespace

IntTuple parse_int_tuple(std::string_view text) { return Parser(text).parse_all(); }

std::size_t hash_value(const IntTuple& t) noexcept {
  // FNV-style mixing over a depth-first walk, with markers for tuple boundaries so (2,(3,)) and ((2,),3) differ.
  std::size_t h = 1469598103934665603ULL;
  auto mix = [&h](std::uint64_t v) {
    h ^= v + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  };
  if (t.is_int()) {
    mix(static_cast<std::uint64_t>(t.value()));
    return h;
  }
  mix(0xfeedULL);
  for (const auto& e : t.elements()) mix(hash_value(e));
  mix(0xbeefULL + t.rank());
  return h;
}

}  // namespace meshloom
