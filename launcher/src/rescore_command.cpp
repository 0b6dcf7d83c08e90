// `meshloom-launch rescore --records V.jsonl [--records ...] --calibration CAL [--calibration ...]`: the plans a
// validate run measured, judged again under other calibrations (rescore.hpp). No MPI: it reads files.
#include <CLI/CLI.hpp>

#include <exception>
#include <filesystem>
#include <iostream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "file_args.hpp"
#include "meshloom/io/atomic_file.hpp"
#include "mpi_command.hpp"
#include "rescore.hpp"
#include "text_format.hpp"
#include "validate_report.hpp"

namespace meshloom::launcher {

namespace {

struct RescoreCliOptions {
  std::vector<std::string> records, calibrations;
  std::optional<std::string> jsonl;  // given (an empty path is refused, not taken for "not given")
  RescoreOptions options;
};

int run(const RescoreCliOptions& o) {
  try {
    std::vector<FileArg> records, inputs;
    for (const std::string& path : o.records) records.push_back({"--records", path});
    check_inputs_distinct(records);  // two copies of one run are not two runs (hindsight would see them agree)
    inputs = records;
    for (const std::string& path : o.calibrations) inputs.push_back({"--calibration", path});
    if (o.jsonl) {
      check_files_apart(inputs, {{"--jsonl", *o.jsonl}});
      check_output_target({"--jsonl", *o.jsonl});
    }
    std::vector<NamedCalibration> calibrations;
    for (const std::string& path : o.calibrations) calibrations.push_back({.name = path, .calibration = load_calibration(path)});
    std::vector<RescoreReport> reports;
    for (const std::string& path : o.records) reports.push_back(rescore_records(read_validate_records(path), calibrations, o.options));
    add_hindsight(reports);
    // Written whole (atomically) before the table: a table on the screen means the file is there too.
    if (o.jsonl) write_file_atomically(*o.jsonl, rescore_jsonl(reports, o.options), "rescore: cannot write --jsonl");
    std::cout << "# meshloom-launch rescore: the plans validate measured, priced again by every calibration; a pick\n"
                 "# is right when it is the measured fastest or ties with it (within max("
              << percent_text(kTieFloor)
              << ", 2 standard errors))\n"
                 "# validated: the run's own picks, as recorded; step times: every step priced by the run's own median\n"
                 "# time of its kind (a reference: what these measurements can tell); unmeasured picks: requests whose\n"
                 "# pick by the calibration's planner did not run (judged by its cheapest measured plan)\n"
              << (reports.size() >= 2 ? "# hindsight: per request, of the plans measured in every file, the one right in the\n"
                                        "# most (a pick made after seeing every run: over these files together, no one\n"
                                        "# calibration whose picks all ran picks right more often)\n"
                                      : "")
              << rescore_table(reports) << std::flush;
    return 0;
  } catch (const std::exception& e) {
    std::cerr << "error: " << what_of(e) << "\n";
  }
  return kExitError;
}

}  // namespace

void add_rescore_command(CLI::App& root, int& exit_code) {
  auto o = std::make_shared<RescoreCliOptions>();
  CLI::App* cmd = root.add_subcommand(
      "rescore", "Judge calibrations on the plans a validate run measured: price every measured plan again and score "
                 "each calibration's picks by validate's rules, with no new run (no MPI)");
  cmd->add_option("--records", o->records, "A validate --jsonl file (repeatable: each judged alone, then all together)")
      ->type_name("FILE")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_option("--calibration", o->calibrations, "A calibration to judge (repeatable)")
      ->type_name("FILE")
      ->required()
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  cmd->add_flag("--extrapolate", o->options.extrapolate,
                "Price group shapes a calibration never measured from the nearest measured one");
  cmd->add_flag("--no-axis-corrections", o->options.no_axis_corrections,
                "Price the calibrated mesh's axes by their group shape's curve alone, without the calibrations' axis "
                "corrections (which hold for records whose ranks sat on the calibrated job's CPUs)");
  cmd->add_flag("--any-transport", o->options.any_transport,
                "Judge calibrations on records made under other transport settings too (refused by default: their "
                "steps cost what the calibration never measured)");
  cmd->add_option("--jsonl", o->jsonl,
                  "Also write the report as JSON Lines to FILE (validate's report records, per file and all together), "
                  "atomically")
      ->type_name("FILE");
  cmd->callback([o, &exit_code] { exit_code = run(*o); });
}

}  // namespace meshloom::launcher
