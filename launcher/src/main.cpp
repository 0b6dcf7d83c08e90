// meshloom-launch: the headless program. A thin main over the engine (and, for live runs, the backends).
#include <CLI/CLI.hpp>

#include <exception>
#include <iostream>

#include "commands.hpp"

int main(int argc, char** argv) {
  CLI::App app{"meshloom-launch: device meshes, layouts and redistribution plans, headless and scriptable"};
  app.set_version_flag("--version", std::string("meshloom-launch ") + MESHLOOM_VERSION);
  app.require_subcommand(1);
  int exit_code = 0;
  meshloom::launcher::add_layout_command(app, exit_code);
  meshloom::launcher::add_mesh_command(app, exit_code);
  meshloom::launcher::add_plan_command(app, exit_code);
  meshloom::launcher::add_bench_command(app, exit_code);
  meshloom::launcher::add_calibrate_command(app, exit_code);
  meshloom::launcher::add_run_command(app, exit_code);
  meshloom::launcher::add_validate_command(app, exit_code);
  meshloom::launcher::add_refine_command(app, exit_code);
  meshloom::launcher::add_rescore_command(app, exit_code);
  meshloom::launcher::add_advise_command(app, exit_code);
  meshloom::launcher::add_info_command(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    exit_code = app.exit(e);  // --help and --version print to standard output, checked below too
  } catch (const std::exception& e) {
    std::cerr << "meshloom-launch: " << e.what() << "\n";
    return 2;
  }
  // Output that never arrived (a full disk, a closed pipe) is a failure, not "did what was asked": status 1, as a
  // --batch command whose standard output fails (which sees it itself, and says nothing more).
  std::cout.flush();
  if (!std::cout && exit_code == 0) {
    std::cerr << "meshloom-launch: error: RuntimeError: cannot write standard output\n";
    return 1;
  }
  return exit_code;
}
