// `meshloom-launch mesh`: draw a DeviceMesh for people, or answer DeviceMesh scripts with --batch.
// The work is in mesh_batch.cpp (the JSON Lines interface) and mesh_render.cpp (the human output).
#include <CLI/CLI.hpp>

#include <cstdio>
#include <exception>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "mesh_batch.hpp"
#include "mesh_render.hpp"
#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

struct MeshOptions {
  bool batch = false;
  std::string max_output_ranks;
  std::string shape, names, world, design, rank;
  std::vector<std::string> unflatten, flatten, slice;
};

int run(const MeshOptions& o, const CLI::App& cmd) {
  auto given = [&cmd](const char* name) { return cmd.count(name) > 0; };
  return status_or_error(std::cerr, [&]() -> int {
    if (o.batch) {
      for (const char* name : {"--shape", "--names", "--world", "--design", "--rank", "--unflatten", "--flatten",
                               "--slice"}) {
        if (given(name)) raise(ErrorKind::ValueError, std::string("--batch reads everything from standard input; ") +
                                                          name + " cannot be combined with it");
      }
      MeshBatchLimits limits;
      if (given("--max-output-ranks")) {
        limits.max_output_ranks = parse_int(o.max_output_ranks, "--max-output-ranks");
        if (limits.max_output_ranks < 1) {
          raise(ErrorKind::ValueError, "--max-output-ranks \"" + o.max_output_ranks + "\": must be >= 1");
        }
      }
      // Read standard input through C++'s own file buffer rather than one getc per character. libstdc++'s file
      // buffer then throws on a read error, which run_mesh_batch turns into status 1; a library whose buffer reads
      // through stdio instead leaves the error on stdin's FILE, checked below. A failing standard input or output
      // is told by the exit status alone (see docs/05-launcher.md).
      std::ios::sync_with_stdio(false);
      const int status = run_mesh_batch(std::cin, std::cout, limits);
      return std::ferror(stdin) != 0 ? 1 : status;
    }
    if (given("--max-output-ranks")) raise(ErrorKind::ValueError, "--max-output-ranks goes with --batch");
    MeshRequest request;
    if (given("--shape")) request.shape = o.shape;
    if (given("--names")) request.names = o.names;
    if (given("--world")) request.world = o.world;
    if (given("--rank")) request.rank = o.rank;
    if (given("--design")) {
      if (given("--shape")) raise(ErrorKind::ValueError, "give either --shape or --design, not both");
      const Design design = load_design(o.design);
      request.spec = design.mesh;
      request.spec_world = design.world;
    }
    request.unflatten = o.unflatten;
    request.flatten = o.flatten;
    request.slice = o.slice;
    return run_mesh_request(request, std::cout, std::cerr);
  });
}

}  // namespace

void add_mesh_command(CLI::App& root, int& exit_code) {
  auto options = std::make_shared<MeshOptions>();
  CLI::App* cmd = root.add_subcommand("mesh", "Draw a DeviceMesh (rank grid, slices, flattened axes, one rank's view), "
                                              "or answer DeviceMesh scripts as JSON Lines with --batch");
  cmd->add_flag("--batch", options->batch,
                "Read JSON Lines from standard input and answer one JSON line per input line (see the docs)");
  cmd->add_option("--max-output-ranks", options->max_output_ranks,
                  "With --batch: most ranks written in one output line (default 67108864)")
      ->type_name("N");
  cmd->add_option("--shape", options->shape, "Mesh shape, outer to inner, e.g. 2,4")
      ->type_name("SIZES");
  cmd->add_option("--names", options->names, "Axis names, e.g. dp,tp")
      ->type_name("NAMES");
  cmd->add_option("--world", options->world, "World size (default: the number of ranks in the mesh)")
      ->type_name("W");
  cmd->add_option("--design", options->design, "Take the mesh (and world) from a *.meshloom.json design")
      ->type_name("FILE");
  cmd->add_option("--unflatten", options->unflatten,
                  "Split an axis: AXIS=SIZES:NAMES, e.g. dp=2,2:dp_replicate,dp_shard (repeatable)")
      ->type_name("AXIS=SIZES:NAMES")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--flatten", options->flatten, "Flatten axes: AXES[:NAME], e.g. dp,tp or dp,tp:dp_tp (repeatable)")
      ->type_name("AXES[:NAME]")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--slice", options->slice, "Show the groups of a slice, e.g. tp or dp,tp (repeatable)")
      ->type_name("NAMES")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--rank", options->rank, "Show one rank: coordinate, local ranks and groups")
      ->type_name("R");
  cmd->callback([options, cmd, &exit_code] { exit_code = run(*options, *cmd); });
}

}  // namespace meshloom::launcher
