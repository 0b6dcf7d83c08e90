// The launcher's subcommands. Each add_*_command registers one CLI11 subcommand on `root`; when that
// subcommand is chosen its callback runs and stores the process exit status in `exit_code`.
#pragma once

namespace CLI {
class App;
}

namespace meshloom::launcher {

void add_layout_command(CLI::App& root, int& exit_code);
void add_mesh_command(CLI::App& root, int& exit_code);
void add_info_command(CLI::App& root, int& exit_code);
void add_plan_command(CLI::App& root, int& exit_code);
void add_bench_command(CLI::App& root, int& exit_code);
void add_calibrate_command(CLI::App& root, int& exit_code);
void add_run_command(CLI::App& root, int& exit_code);
void add_validate_command(CLI::App& root, int& exit_code);
void add_advise_command(CLI::App& root, int& exit_code);
void add_refine_command(CLI::App& root, int& exit_code);
void add_rescore_command(CLI::App& root, int& exit_code);

}  // namespace meshloom::launcher
