#include "meshloom/plan/state.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <limits>
#include <utility>

#include "meshloom/error.hpp"

namespace meshloom {

namespace {

constexpr std::array<std::pair<ReduceOp, std::string_view>, 5> kReduceOps{{
    {ReduceOp::Sum, "sum"},
    {ReduceOp::Avg, "avg"},
    {ReduceOp::Max, "max"},
    {ReduceOp::Min, "min"},
    {ReduceOp::Product, "product"},
}};

// Largest dim or shard-order index the parser accepts.
constexpr std::int64_t kMaxIndex = std::numeric_limits<std::int32_t>::max();
// Longest input quoted back in an error message.
constexpr std::size_t kMaxQuoted = 80;

// The text quoted in a message: printable ASCII kept, anything else as \xNN, cut after kMaxQuoted bytes.
std::string quote(std::string_view text) {
  std::string out = "\"";
  const std::size_t n = std::min(text.size(), kMaxQuoted);
  for (std::size_t i = 0; i < n; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c >= 0x20 && c < 0x7f) {
      out += static_cast<char>(c);
    } else {
      std::array<char, 8> buf{};
      std::snprintf(buf.data(), buf.size(), "\\x%02x", static_cast<unsigned>(c));
      out += buf.data();
    }
  }
  out += '"';
  if (text.size() > n) out += "...";
  return out;
}

std::vector<ShardOrderEntry> default_order(const std::vector<Placement>& placements) {
  std::vector<ShardOrderEntry> order;
  for (std::size_t axis = 0; axis < placements.size(); ++axis) {
    const Placement& p = placements[axis];
    if (!p.is_shard()) continue;
    auto it = std::find_if(order.begin(), order.end(), [&](const ShardOrderEntry& e) { return e.dim == p.dim(); });
    if (it == order.end()) {
      order.push_back(ShardOrderEntry{p.dim(), {axis}});
    } else {
      it->axes.push_back(axis);
    }
  }
  std::sort(order.begin(), order.end(), [](const ShardOrderEntry& a, const ShardOrderEntry& b) { return a.dim < b.dim; });
  return order;
}

// One token as the parser read it.
struct Token {
  std::size_t pos = 0;
  std::string_view text;
  Placement placement;
  std::optional<std::int64_t> index;  // [k]
};

struct ParseFailure {
  std::string why;
};

class Parser {
public:
  explicit Parser(std::string_view text) : text_(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    skip_space();
    if (i_ == text_.size()) fail(i_, "", "empty state: expected one placement per mesh axis");
    while (true) {
      out.push_back(token());
      skip_space();
      if (i_ == text_.size()) break;
      if (text_[i_] == ',' || text_[i_] == '|') {
        const std::size_t separator = i_;
        ++i_;
        skip_space();
        if (i_ == text_.size()) fail(separator, text_.substr(separator, 1), "separator at the end: expected a placement after it");
        if (text_[i_] == ',' || text_[i_] == '|')
          fail(i_, text_.substr(i_, 1), "two separators in a row: expected a placement between them");
      }
    }
    return out;
  }

  [[noreturn]] static void fail(std::size_t pos, std::string_view token, const std::string& why) {
    throw ParseFailure{"position " + std::to_string(pos) + ", token " + quote(token) + ": " + why};
  }

private:
  static bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
  static bool is_alpha(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'); }
  static bool is_digit(char c) { return c >= '0' && c <= '9'; }

  void skip_space() {
    while (i_ < text_.size() && is_space(text_[i_])) ++i_;
  }
  bool starts_with(std::string_view word) const { return text_.substr(i_).starts_with(word); }
  bool at(char c) const { return i_ < text_.size() && text_[i_] == c; }
  std::string_view so_far(std::size_t start) const { return text_.substr(start, i_ - start); }
  // The token for an error at start: what was read, plus the rest of a run of letters, digits and brackets.
  std::string_view up_to_here(std::size_t start) const {
    std::size_t end = i_;
    while (end < text_.size() && end - start < 32 &&
           (is_alpha(text_[end]) || is_digit(text_[end]) || text_[end] == '(' || text_[end] == ')' ||
            text_[end] == '[' || text_[end] == ']' || text_[end] == '=' || text_[end] == '-')) {
      ++end;
    }
    return text_.substr(start, std::max(end, start + 1) - start);
  }

  // Digits up to `close`; returns the value.
  std::int64_t number(std::size_t start, char close, std::string_view what) {
    const std::size_t digits_at = i_;
    std::int64_t value = 0;
    while (i_ < text_.size() && is_digit(text_[i_])) {
      value = value * 10 + (text_[i_] - '0');
      ++i_;
      if (value > kMaxIndex) fail(start, up_to_here(start), std::string(what) + " is too large (at most " + std::to_string(kMaxIndex) + ")");
    }
    if (i_ == digits_at) {
      if (at('-')) fail(start, up_to_here(start), std::string(what) + " must not be negative");
      fail(start, up_to_here(start), "expected a non-negative integer " + std::string(what) + " after '" + text_[digits_at - 1] + "'");
    }
    if (!at(close)) fail(start, up_to_here(start), std::string("missing '") + close + "' after the " + std::string(what));
    ++i_;
    return value;
  }

  Token token() {
    Token t;
    t.pos = i_;
    const std::size_t start = i_;
    if (starts_with("Replicate")) {
      i_ += 9;
      if (!starts_with("()")) fail(start, up_to_here(start), "expected Replicate()");
      i_ += 2;
      t.placement = Placement::replicate();
    } else if (starts_with("Shard") || at('S')) {
      i_ += starts_with("Shard") ? 5U : 1U;
      if (!at('(')) fail(start, up_to_here(start), "a shard needs a tensor dim: S(d) or Shard(d)");
      ++i_;
      if (text_[start + 1] == 'h' && starts_with("dim=")) i_ += 4;
      t.placement = Placement::shard(number(start, ')', "dim"));
      if (at('[')) {
        ++i_;
        t.index = number(start, ']', "shard-order index");
      }
    } else if (starts_with("Partial") || at('P')) {
      const bool long_form = starts_with("Partial");
      i_ += long_form ? 7U : 1U;
      if (!at('(')) {
        if (long_form) fail(start, up_to_here(start), "expected Partial(op) with op one of sum, avg, max, min, product");
        t.placement = Placement::partial(ReduceOp::Sum);
      } else {
        ++i_;
        const std::size_t op_at = i_;
        while (i_ < text_.size() && is_alpha(text_[i_])) ++i_;
        const std::string_view op_text = text_.substr(op_at, i_ - op_at);
        const auto op = reduce_op_from_string(op_text);
        if (!op) {
          fail(start, up_to_here(start), "unknown reduce op " + quote(op_text) + ": expected one of sum, avg, max, min, product");
        }
        if (!at(')')) fail(start, up_to_here(start), "missing ')' after the reduce op");
        ++i_;
        t.placement = Placement::partial(*op);
      }
    } else if (at('R')) {
      ++i_;
      t.placement = Placement::replicate();
    } else if (at('[')) {
      fail(start, up_to_here(start), "a shard-order index [k] may only follow S(d)");
    } else {
      fail(start, up_to_here(start),
           "expected a placement: R, S(d), S(d)[k], P, P(op), Replicate(), Shard(d) or Partial(op)");
    }
    if (at('[')) {
      const std::size_t bracket = i_;
      ++i_;
      fail(bracket, up_to_here(bracket),
           t.index ? "a second shard-order index after " + std::string(so_far(start).substr(0, bracket - start))
                   : "a shard-order index [k] may only follow S(d), not " + to_string(t.placement));
    }
    t.text = so_far(start);
    return t;
  }

  std::string_view text_;
  std::size_t i_ = 0;
};

std::string token_ref(const Token& t) { return std::string(t.text) + " at position " + std::to_string(t.pos); }

State build(const std::vector<Token>& tokens) {
  std::vector<Placement> placements;
  placements.reserve(tokens.size());
  for (const Token& t : tokens) placements.push_back(t.placement);

  std::vector<ShardOrderEntry> order = default_order(placements);
  for (ShardOrderEntry& entry : order) {
    const std::size_t n = entry.axes.size();
    const Token* with = nullptr;
    const Token* without = nullptr;
    for (std::size_t axis : entry.axes) {
      const Token& t = tokens[axis];
      if (t.index && with == nullptr) with = &t;
      if (!t.index && without == nullptr) without = &t;
    }
    if (with == nullptr) continue;  // default order
    const std::string d = "S(" + std::to_string(entry.dim) + ")";
    if (without != nullptr) {
      const Token& bad = tokens[entry.axes[0]].index ? *without : *with;
      const Token& good = tokens[entry.axes[0]].index ? *with : *without;
      Parser::fail(bad.pos, bad.text,
                   "every " + d + " must carry a shard-order index [k] or none may; " + token_ref(good) +
                       (good.index ? " does, this one does not" : " does not, this one does"));
    }
    std::vector<std::size_t> axes(n, n);
    for (std::size_t axis : entry.axes) {
      const Token& t = tokens[axis];
      const auto k = static_cast<std::size_t>(*t.index);
      if (k >= n) {
        Parser::fail(t.pos, t.text,
                     "shard-order index " + std::to_string(k) + " is out of range: dim " + std::to_string(entry.dim) +
                         " is sharded by " + std::to_string(n) + (n == 1 ? " axis, so k must be 0" : " axes, so k must be in 0.." + std::to_string(n - 1)));
      }
      if (axes[k] != n) {
        Parser::fail(t.pos, t.text,
                     "shard-order index " + std::to_string(k) + " of dim " + std::to_string(entry.dim) +
                         " is used twice (also " + token_ref(tokens[axes[k]]) + ")");
      }
      axes[k] = axis;
    }
    entry.axes = std::move(axes);
  }
  return State(std::move(placements), std::move(order));
}

}  // namespace

std::string_view to_string(ReduceOp op) noexcept {
  for (const auto& [value, name] : kReduceOps) {
    if (value == op) return name;
  }
  return "sum";
}

std::optional<ReduceOp> reduce_op_from_string(std::string_view text) noexcept {
  for (const auto& [value, name] : kReduceOps) {
    if (name == text) return value;
  }
  return std::nullopt;
}

Placement Placement::shard(std::int64_t dim) {
  if (dim < 0) raise(ErrorKind::ValueError, "Shard(" + std::to_string(dim) + "): the tensor dim must be >= 0");
  return Placement(Kind::Shard, dim, ReduceOp::Sum);
}

std::string to_string(const Placement& placement) {
  switch (placement.kind()) {
    case Placement::Kind::Replicate: return "R";
    case Placement::Kind::Shard: return "S(" + std::to_string(placement.dim()) + ")";
    case Placement::Kind::Partial: return "P(" + std::string(to_string(placement.op())) + ")";
  }
  return "R";
}

State::State(std::vector<Placement> placements) : placements_(std::move(placements)) {
  shard_order_ = default_order(placements_);
}

State::State(std::vector<Placement> placements, std::vector<ShardOrderEntry> shard_order)
    : placements_(std::move(placements)), shard_order_(std::move(shard_order)) {
  std::sort(shard_order_.begin(), shard_order_.end(),
            [](const ShardOrderEntry& a, const ShardOrderEntry& b) { return a.dim < b.dim; });
  std::vector<bool> seen(placements_.size(), false);
  for (std::size_t e = 0; e < shard_order_.size(); ++e) {
    const ShardOrderEntry& entry = shard_order_[e];
    const std::string d = "dim " + std::to_string(entry.dim);
    if (e > 0 && shard_order_[e - 1].dim == entry.dim) raise(ErrorKind::ValueError, "shard order lists " + d + " twice");
    if (entry.axes.empty()) raise(ErrorKind::ValueError, "shard order of " + d + " lists no axis");
    for (std::size_t axis : entry.axes) {
      if (axis >= placements_.size()) {
        raise(ErrorKind::ValueError, "shard order of " + d + " names axis " + std::to_string(axis) + " but the state has " +
                                         std::to_string(placements_.size()) + " axes");
      }
      if (seen[axis]) raise(ErrorKind::ValueError, "shard order of " + d + " lists axis " + std::to_string(axis) + " twice");
      seen[axis] = true;
      const Placement& p = placements_[axis];
      if (!p.is_shard() || p.dim() != entry.dim) {
        raise(ErrorKind::ValueError, "shard order of " + d + " lists axis " + std::to_string(axis) + " whose placement is " +
                                         to_string(p));
      }
    }
  }
  for (std::size_t axis = 0; axis < placements_.size(); ++axis) {
    if (placements_[axis].is_shard() && !seen[axis]) {
      raise(ErrorKind::ValueError, "axis " + std::to_string(axis) + " is " + to_string(placements_[axis]) +
                                       " but the shard order of dim " + std::to_string(placements_[axis].dim()) +
                                       " does not list it");
    }
  }
}

const Placement& State::placement(std::size_t axis) const {
  if (axis >= placements_.size()) {
    raise(ErrorKind::IndexError, "axis " + std::to_string(axis) + " is out of range for a state of " +
                                     std::to_string(placements_.size()) + " axes");
  }
  return placements_[axis];
}

std::vector<std::size_t> State::shard_axes(std::int64_t dim) const {
  for (const ShardOrderEntry& entry : shard_order_) {
    if (entry.dim == dim) return entry.axes;
  }
  return {};
}

bool State::has_default_shard_order() const noexcept {
  return std::all_of(shard_order_.begin(), shard_order_.end(),
                     [](const ShardOrderEntry& e) { return std::is_sorted(e.axes.begin(), e.axes.end()); });
}

std::string to_string(const State& state) {
  std::string out;
  for (std::size_t axis = 0; axis < state.ndim(); ++axis) {
    const Placement& p = state.placements()[axis];
    out += to_string(p);
    if (!p.is_shard()) continue;
    for (const ShardOrderEntry& entry : state.shard_order()) {
      if (entry.dim != p.dim() || entry.axes.size() < 2) continue;
      const auto k = std::find(entry.axes.begin(), entry.axes.end(), axis) - entry.axes.begin();
      out += "[" + std::to_string(k) + "]";
    }
  }
  return out;
}

std::optional<State> try_parse_state(std::string_view text, std::string* why) {
  try {
    Parser parser(text);
    return build(parser.tokens());
  } catch (const ParseFailure& failure) {
    if (why != nullptr) *why = failure.why;
    return std::nullopt;
  }
}

State parse_state(std::string_view text) {
  std::string why;
  std::optional<State> state = try_parse_state(text, &why);
  if (!state) raise(ErrorKind::ValueError, "cannot parse state " + quote(text) + ": " + why);
  return std::move(*state);
}

std::optional<std::string> state_misfit(const State& state, std::size_t mesh_ndim, std::int64_t tensor_rank) {
  if (state.ndim() != mesh_ndim) {
    return std::to_string(state.ndim()) + (state.ndim() == 1 ? " placement" : " placements") + " for a mesh of " +
           std::to_string(mesh_ndim) + (mesh_ndim == 1 ? " axis" : " axes");
  }
  for (std::size_t axis = 0; axis < state.ndim(); ++axis) {
    const Placement& p = state.placements()[axis];
    if (p.is_shard() && p.dim() >= tensor_rank) {
      std::string range = tensor_rank <= 0 ? "none" : "0.." + std::to_string(tensor_rank - 1);
      return to_string(p) + " on axis " + std::to_string(axis) + " shards dim " + std::to_string(p.dim()) +
             " but the tensor has " + std::to_string(tensor_rank) + (tensor_rank == 1 ? " dim" : " dims") + " (" + range +
             ")";
    }
  }
  return std::nullopt;
}

void check_state(const State& state, std::size_t mesh_ndim, std::int64_t tensor_rank) {
  if (auto why = state_misfit(state, mesh_ndim, tensor_rank)) {
    raise(ErrorKind::ValueError, "state " + quote(to_string(state)) + " does not fit: " + *why);
  }
}

}  // namespace meshloom

namespace {
std::size_t mix(std::size_t seed, std::size_t value) noexcept {
  return seed ^ (value + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}
}  // namespace

std::size_t std::hash<meshloom::Placement>::operator()(const meshloom::Placement& placement) const noexcept {
  std::size_t h = static_cast<std::size_t>(placement.kind());
  h = mix(h, static_cast<std::size_t>(placement.dim()));
  return mix(h, static_cast<std::size_t>(placement.op()));
}

std::size_t std::hash<meshloom::State>::operator()(const meshloom::State& state) const noexcept {
  std::size_t h = state.ndim();
  for (const meshloom::Placement& p : state.placements()) h = mix(h, std::hash<meshloom::Placement>{}(p));
  for (const meshloom::ShardOrderEntry& e : state.shard_order()) {
    h = mix(h, static_cast<std::size_t>(e.dim));
    for (std::size_t axis : e.axes) h = mix(h, axis);
  }
  return h;
}
