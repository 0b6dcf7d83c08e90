// `meshloom-launch refine --calibration CAL --records R.jsonl [--records ...] --out REFINED`: the calibration with
// every curve corrected by what plans measured when they ran for real (refine.hpp). No MPI: it reads files.
#include <CLI/CLI.hpp>

#include <algorithm>
#include <exception>
#include <iostream>
#include <memory>
#include <string>
#include <vector>

#include "commands.hpp"
#include "file_args.hpp"
#include "meshloom/io/atomic_file.hpp"
#include "meshloom/plan/cost_model.hpp"
#include "mpi_command.hpp"
#include "refine.hpp"
#include "text_format.hpp"

namespace meshloom::launcher {

namespace {

struct RefineOptions {
  std::string calibration, out;
  std::vector<std::string> records;
  std::string min_steps = std::to_string(kDefaultMinSteps);  // parse_int: CLI11 saturates out-of-range integers
  bool any_level = false;
  bool any_transport = false;
};

int run(const RefineOptions& o) {
  try {
    const std::int64_t min_steps = parse_int(o.min_steps, "--min-steps");
    if (min_steps < 1) raise(ErrorKind::ValueError, "--min-steps " + std::to_string(min_steps) + ": must be >= 1");
    std::vector<FileArg> inputs{{"--calibration", o.calibration}};
    for (const auto& path : o.records) inputs.push_back({"--records", path});
    check_inputs_distinct(inputs);
    check_files_apart(inputs, {{"--out", o.out}});
    check_output_target({"--out", o.out});
    const Calibration base = load_calibration(o.calibration);
    std::vector<StepRecords> records;
    records.reserve(o.records.size());
    for (const auto& path : o.records) records.push_back(read_step_records(path));
    const RefineReport report = refine_calibration(base, records, min_steps, o.any_level, o.any_transport);
    std::cout << "# meshloom-launch refine " << o.calibration << ": backend " << base.backend << ", "
              << base.groups.size() << " curves\n"
              << refine_table(report);
    std::size_t corrected = 0;
    for (const AsRunCurve& c : report.curves) corrected += c.points.empty() ? 0U : 1U;
    if (corrected == 0) {
      const bool all_left_out = std::none_of(report.levels.begin(), report.levels.end(),
                                             [](const RecordsLevel& l) { return l.used; });
      const std::string why = all_left_out ? "every records file was measured at another level than the calibration "
                                       "(--any-level uses them)"
                        : report.steps_used == 0
                            ? "no measured collective of the records has a curve in the calibration"
                            : "no size of a curve has --min-steps " + std::to_string(min_steps) + " measured collectives";
      raise(ErrorKind::ValueError, why + "; " + o.out + " not written");
    }
    write_file_atomically(o.out, to_json_text(report.calibration));
    std::size_t axes = 0;
    for (const AsRunAxis& a : report.axes) axes += a.points.empty() ? 0U : 1U;
    std::cout << "# wrote " << o.out << " (" << corrected << " of " << base.groups.size() << " curves corrected"
              << (base.axis_corrections.empty() ? std::string()
                                                : ", " + std::to_string(axes) + " of " +
                                                      std::to_string(base.axis_corrections.size()) + " axes by their own")
              << ")\n"
              << std::flush;
    return 0;
  } catch (const std::exception& e) {
    std::cout << std::flush;  // the table first, then why nothing was written
    std::cerr << "error: " << what_of(e) << "\n";
  }
  return kExitError;
}

}  // namespace

void add_refine_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<RefineOptions>();
  CLI::App* cmd = root.add_subcommand(
      "refine", "Correct a calibration's curves by what plans' collectives measured when they ran for real (the step "
                "records of run --jsonl and validate --jsonl) and write the corrected calibration (no MPI)");
  cmd->add_option("--calibration", o->calibration, "The calibration to correct (curves by group shape)")
      ->type_name("FILE")
      ->required();
  cmd->add_option("--records", o->records, "A run or validate --jsonl file (repeatable; two or more give a held-out "
                                           "error, each file priced by the others' correction)")
      ->type_name("FILE")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--out", o->out, "The corrected calibration to write (atomically; replaces any earlier correction)")
      ->type_name("FILE")
      ->required();
  cmd->add_option("--min-steps", o->min_steps,
                  "Measured collectives a size needs before it gets a factor (default " +
                      std::to_string(kDefaultMinSteps) + ")")
      ->type_name("N");
  cmd->add_flag("--any-level", o->any_level,
                "Use validate records whose drift anchors sit outside 1/1.15-1.15x the calibration's curves too (the "
                "machine ran faster or slower then than when calibrated; left out by default)");
  cmd->add_flag("--any-transport", o->any_transport,
                "Use records made under other transport settings than the calibration's, or than each other's "
                "(refused by default: their steps cost what the calibration never measured)");
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace meshloom::launcher
