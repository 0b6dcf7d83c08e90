// `meshloom-launch layout <op> <layout> [more]`: a calculator for the layout algebra.
//
// Every result is printed as plain lines on stdout (a layout as shape:stride, a list of ints separated by
// spaces, true/false); a failure prints `error: <Kind>: <message>` on stderr and exits with status 2.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <charconv>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "commands.hpp"
#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"

namespace meshloom::launcher {
namespace {

using Args = std::vector<std::string>;

std::int64_t parse_int(std::string_view text, std::string_view what) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && text.back() == ' ') text.remove_suffix(1);
  std::int64_t value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty()) {
    raise(ErrorKind::ValueError, "expected an integer for " + std::string(what) + ", got '" + std::string(text) + "'");
  }
  return value;
}

// "0,1,2,3" (spaces allowed).
std::vector<std::int64_t> parse_int_list(std::string_view text) {
  std::vector<std::int64_t> out;
  while (true) {
    const auto comma = text.find(',');
    out.push_back(parse_int(text.substr(0, comma), "a rank"));
    if (comma == std::string_view::npos) return out;
    text.remove_prefix(comma + 1);
  }
}

std::string join(const std::vector<std::int64_t>& values) {
  std::string s;
  for (std::size_t i = 0; i < values.size(); ++i) s += (i > 0 ? " " : "") + std::to_string(values[i]);
  return s;
}

// The values of a row-major block of the given dims as nested brackets: [[10,20],[30,40]].
using DimIt = std::vector<std::int64_t>::const_iterator;
std::string nested_list(const std::vector<std::int64_t>& values, std::size_t begin, DimIt dim, DimIt dims_end) {
  if (dim == dims_end) return std::to_string(values[begin]);
  std::int64_t inner = 1;
  for (auto d = dim + 1; d != dims_end; ++d) inner *= *d;
  std::string s = "[";
  for (std::int64_t i = 0; i < *dim; ++i) {
    if (i > 0) s += ',';
    s += nested_list(values, begin + static_cast<std::size_t>(i * inner), dim + 1, dims_end);
  }
  return s + "]";
}

void show(const Layout& l, std::ostream& out) {
  out << "layout: " << l << "\n"
      << "size: " << size(l) << "\n"
      << "cosize: " << cosize(l) << "\n"
      << "rank: " << rank(l) << "\n";
  const auto offsets = codomain(l);
  if (rank(l) != 2) {
    out << "offsets: " << join(offsets) << "\n";
    return;
  }
  // A grid: row r, column c holds L(r, c).
  const auto sizes = top_level_sizes(l);
  std::size_t width = 1;
  for (auto o : offsets) width = std::max(width, std::to_string(o).size());
  out << "offsets:\n";
  for (std::int64_t r = 0; r < sizes[0]; ++r) {
    for (std::int64_t c = 0; c < sizes[1]; ++c) {
      const std::string cell = std::to_string(offsets[static_cast<std::size_t>(r * sizes[1] + c)]);
      out << (c > 0 ? " " : "") << std::string(width - cell.size(), ' ') << cell;
    }
    out << "\n";
  }
}

// One line per instance: the instance's ranks as nested lists of the layout's top-level sizes.
void print_remap(const RankTensor& t, std::ostream& out) {
  const std::size_t per_instance = t.values.size() / static_cast<std::size_t>(std::max<std::int64_t>(1, t.shape[0]));
  for (std::int64_t k = 0; k < t.shape[0]; ++k) {
    out << nested_list(t.values, static_cast<std::size_t>(k) * per_instance, t.shape.begin() + 1, t.shape.end())
        << "\n";
  }
}

struct Operation {
  const char* name;
  const char* usage;  // the arguments after the op
  std::size_t arity;
  std::function<void(const Args&, std::ostream&)> run;
};

std::string tf(bool b) { return b ? "true" : "false"; }

const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops = {
      {"show", "L", 1, [](const Args& a, std::ostream& o) { show(parse_layout(a[0]), o); }},
      {"coalesce", "L", 1, [](const Args& a, std::ostream& o) { o << coalesce(parse_layout(a[0])) << "\n"; }},
      {"filter", "L", 1, [](const Args& a, std::ostream& o) { o << filter(parse_layout(a[0])) << "\n"; }},
      {"complement", "L N", 2,
       [](const Args& a, std::ostream& o) { o << complement(parse_layout(a[0]), parse_int(a[1], "N")) << "\n"; }},
      {"compose", "A B", 2,
       [](const Args& a, std::ostream& o) { o << composition(parse_layout(a[0]), parse_layout(a[1])) << "\n"; }},
      {"right-inverse", "L", 1, [](const Args& a, std::ostream& o) { o << right_inverse(parse_layout(a[0])) << "\n"; }},
      {"left-inverse", "L", 1, [](const Args& a, std::ostream& o) { o << left_inverse(parse_layout(a[0])) << "\n"; }},
      {"nest", "L", 1, [](const Args& a, std::ostream& o) { o << nest(parse_layout(a[0])) << "\n"; }},
      {"codomain", "L", 1, [](const Args& a, std::ostream& o) { o << join(codomain(parse_layout(a[0]))) << "\n"; }},
      {"global-ranks", "L W", 2,
       [](const Args& a, std::ostream& o) {
         for (const auto& group : global_ranks(parse_layout(a[0]), parse_int(a[1], "W"))) o << join(group) << "\n";
       }},
      {"remap", "L r0,r1,...", 2,
       [](const Args& a, std::ostream& o) { print_remap(remap(parse_layout(a[0]), parse_int_list(a[1])), o); }},
      {"injective", "L", 1, [](const Args& a, std::ostream& o) { o << tf(is_injective(parse_layout(a[0]))) << "\n"; }},
      {"orthogonal", "L", 1,
       [](const Args& a, std::ostream& o) { o << tf(is_orthogonal(parse_layout(a[0]))) << "\n"; }},
  };
  return ops;
}

std::string op_list() {
  std::string s;
  for (const auto& op : operations()) s += std::string(s.empty() ? "" : ", ") + op.name;
  return s;
}

void run(const std::string& name, const Args& args, std::ostream& out) {
  const auto& ops = operations();
  const auto it = std::find_if(ops.begin(), ops.end(), [&name](const Operation& op) { return name == op.name; });
  if (it == ops.end()) {
    raise(ErrorKind::ValueError, "unknown layout operation '" + name + "'; expected one of: " + op_list());
  }
  if (args.size() != it->arity) {
    raise(ErrorKind::ValueError, "'" + name + "' takes " + std::to_string(it->arity) + " argument" +
                                     (it->arity == 1 ? "" : "s") + " (" + it->usage + "), got " +
                                     std::to_string(args.size()));
  }
  // Print only a complete result: an error halfway leaves stdout empty.
  std::ostringstream buffer;
  it->run(args, buffer);
  out << buffer.str();
}

}  // namespace

void add_layout_command(CLI::App& root, int& exit_code) {
  std::string footer = "Operations (L, A, B are layouts written shape:stride, e.g. \"(2,4):(4,1)\"):\n";
  for (const auto& op : operations()) footer += std::string("  ") + op.name + " " + op.usage + "\n";
  CLI::App* cmd =
      root.add_subcommand("layout", "Layout algebra calculator: meshloom-launch layout <op> <layout> [more]");
  cmd->footer(footer);
  auto op = std::make_shared<std::string>();
  auto args = std::make_shared<Args>();
  cmd->add_option("op", *op, "The operation: " + op_list())->required();
  cmd->add_option("args", *args, "The layout, then the operation's other arguments");
  cmd->callback([op, args, &exit_code] {
    try {
      run(*op, *args, std::cout);
      exit_code = 0;
    } catch (const Error& e) {
      std::cerr << "error: " << e.what() << "\n";
      exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "error: RuntimeError: " << e.what() << "\n";
      exit_code = 2;
    }
  });
}

}  // namespace meshloom::launcher
