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
    return app.exit(e);
  } catch (const std::exception& e) {
    std::cerr << "meshloom-launch: " << e.what() << "\n";
    return 2;
  }
  return exit_code;
}
