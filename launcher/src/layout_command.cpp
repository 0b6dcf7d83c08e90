// `meshloom-launch layout <op> <layout> [more]`: a calculator for the layout algebra.
//
// Every result is printed as plain lines on stdout (a layout as shape:stride, a list of ints separated by
// spaces, true/false); a failure prints `error: <Kind>: <message>` on stderr and exits with status 2. The ops
// that enumerate offsets or ranks (show, codomain, global-ranks, remap, injective) first check how many they
// would produce against --max-output (default 2^24), so an absurd layout is refused instead of exhausting memory.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <iostream>
#include <limits>
#include <memory>
#include <new>
#include <span>
#include <sstream>
#include <string>
#include <vector>

#include "commands.hpp"
#include "meshloom/error.hpp"
#include "meshloom/layout/layout.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {
namespace {

using Args = std::vector<std::string>;

// Enumerating ops are refused above this many values unless --max-output says otherwise.
constexpr std::int64_t kDefaultMaxOutput = std::int64_t{1} << 24;

// Fails with a ValueError, before anything is enumerated, when `count * per` values (both >= 1) would pass
// `limit`. `what` is the op and its layout ("show (2,4):(4,1)"), `unit` what is counted.
void check_output(const std::string& what, std::int64_t count, std::int64_t per, const char* unit,
                  std::int64_t limit) {
  if (count <= limit / per) return;
  const std::string total = count <= std::numeric_limits<std::int64_t>::max() / per
                                ? std::to_string(count * per)
                                : std::to_string(count) + " x " + std::to_string(per);
  raise(ErrorKind::ValueError, what + " would enumerate " + total + " " + unit + ", over the limit of " +
                                   std::to_string(limit) + " (--max-output N raises it)");
}

// The values of codomain(l), after checking their count.
std::vector<std::int64_t> checked_codomain(const char* op, const Layout& l, std::int64_t limit) {
  check_output(std::string(op) + " " + to_string(l), size(l), 1, "offsets", limit);
  return codomain(l);
}

void show(const Layout& l, std::int64_t limit, std::ostream& out) {
  const auto offsets = checked_codomain("show", l, limit);
  out << "layout: " << l << "\n"
      << "size: " << size(l) << "\n"
      << "cosize: " << cosize(l) << "\n"
      << "rank: " << rank(l) << "\n";
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
    std::string line;
    std::size_t pos = static_cast<std::size_t>(k) * per_instance;
    append_nested(line, std::span<const std::int64_t>(t.shape).subspan(1), t.values, pos);
    out << line << "\n";
  }
}

struct Operation {
  const char* name;
  const char* usage;  // the arguments after the op
  std::size_t arity;
  std::function<void(const Args&, std::int64_t max_output, std::ostream&)> run;
};

std::string tf(bool b) { return b ? "true" : "false"; }

const std::vector<Operation>& operations() {
  static const std::vector<Operation> ops = {
      {"show", "L", 1,
       [](const Args& a, std::int64_t limit, std::ostream& o) { show(parse_layout(a[0]), limit, o); }},
      {"coalesce", "L", 1,
       [](const Args& a, std::int64_t, std::ostream& o) { o << coalesce(parse_layout(a[0])) << "\n"; }},
      {"filter", "L", 1,
       [](const Args& a, std::int64_t, std::ostream& o) { o << filter(parse_layout(a[0])) << "\n"; }},
      {"complement", "L N", 2,
       [](const Args& a, std::int64_t, std::ostream& o) {
         o << complement(parse_layout(a[0]), parse_int(a[1], "N")) << "\n";
       }},
      {"compose", "A B", 2,
       [](const Args& a, std::int64_t, std::ostream& o) {
         o << composition(parse_layout(a[0]), parse_layout(a[1])) << "\n";
       }},
      {"right-inverse", "L", 1,
       [](const Args& a, std::int64_t, std::ostream& o) { o << right_inverse(parse_layout(a[0])) << "\n"; }},
      {"left-inverse", "L", 1,
       [](const Args& a, std::int64_t, std::ostream& o) { o << left_inverse(parse_layout(a[0])) << "\n"; }},
      {"nest", "L", 1, [](const Args& a, std::int64_t, std::ostream& o) { o << nest(parse_layout(a[0])) << "\n"; }},
      {"codomain", "L", 1,
       [](const Args& a, std::int64_t limit, std::ostream& o) {
         o << join(checked_codomain("codomain", parse_layout(a[0]), limit)) << "\n";
       }},
      {"global-ranks", "L W", 2,
       [](const Args& a, std::int64_t limit, std::ostream& o) {
         const Layout l = parse_layout(a[0]);
         const std::int64_t world = parse_int(a[1], "W");
         // One group of size(l) ranks per offset of the complement (which global_ranks computes the same way).
         check_output("global-ranks " + to_string(l) + " " + std::to_string(world), size(complement(l, world)),
                      size(l), "ranks", limit);
         for (const auto& group : global_ranks(l, world)) o << join(group) << "\n";
       }},
      {"remap", "L r0,r1,...", 2,
       [](const Args& a, std::int64_t limit, std::ostream& o) {
         const Layout l = parse_layout(a[0]);
         const auto ranks = parse_int_list(a[1], "the ranks");
         const auto n = static_cast<std::int64_t>(ranks.size());
         // One instance of size(l) ranks per offset of the complement in the rank list, as remap computes it.
         // (A layout that does not fit the list is left to remap's own error.)
         if (cosize(l) <= n) {
           check_output("remap " + to_string(l), size(complement(coalesce(l), n)), size(l), "ranks", limit);
         }
         print_remap(remap(l, ranks), o);
       }},
      {"injective", "L", 1,
       [](const Args& a, std::int64_t limit, std::ostream& o) {
         const Layout l = parse_layout(a[0]);
         check_output("injective " + to_string(l), size(l), 1, "offsets", limit);
         o << tf(is_injective(l)) << "\n";
       }},
      {"orthogonal", "L", 1,
       [](const Args& a, std::int64_t, std::ostream& o) { o << tf(is_orthogonal(parse_layout(a[0]))) << "\n"; }},
  };
  return ops;
}

std::string op_list() {
  std::string s;
  for (const auto& op : operations()) s += std::string(s.empty() ? "" : ", ") + op.name;
  return s;
}

void run(const std::string& name, const Args& args, std::int64_t max_output, std::ostream& out) {
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
  it->run(args, max_output, buffer);
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
  auto max_output = std::make_shared<std::string>();
  cmd->add_option("--max-output", *max_output,
                  "Most offsets or ranks an operation may enumerate (default " + std::to_string(kDefaultMaxOutput) + ")")
      ->type_name("N");
  cmd->callback([op, args, max_output, cmd, &exit_code] {
    try {
      std::int64_t limit = kDefaultMaxOutput;
      if (cmd->count("--max-output") > 0) {
        limit = parse_int(*max_output, "--max-output");
        if (limit < 1) raise(ErrorKind::ValueError, "--max-output \"" + *max_output + "\": must be >= 1");
      }
      run(*op, *args, limit, std::cout);
      exit_code = 0;
    } catch (const Error& e) {
      std::cerr << "error: " << e.text() << "\n";
      exit_code = 2;
    } catch (const std::bad_alloc&) {
      std::cerr << "error: RuntimeError: out of memory\n";
      exit_code = 2;
    } catch (const std::exception& e) {
      std::cerr << "error: RuntimeError: " << e.what() << "\n";
      exit_code = 2;
    }
  });
}

}  // namespace meshloom::launcher
