#include "file_args.hpp"

#include <unistd.h>

#include <system_error>

#include "meshloom/error.hpp"

namespace meshloom::launcher {

namespace fs = std::filesystem;

namespace {

bool comparable(const fs::path& p) { return !p.empty() && p != "-"; }

std::string named(const FileArg& f) { return f.option + " \"" + f.path.string() + "\""; }

}  // namespace

bool same_file(const fs::path& a, const fs::path& b) {
  if (!comparable(a) || !comparable(b)) return false;
  std::error_code ea, eb;
  const bool both = fs::exists(a, ea) && fs::exists(b, eb);
  if (both) {
    std::error_code e;
    const bool same = fs::equivalent(a, b, e);
    if (!e) return same;
  }
  std::error_code ca, cb;
  const fs::path wa = fs::weakly_canonical(fs::absolute(a, ca), ca);
  const fs::path wb = fs::weakly_canonical(fs::absolute(b, cb), cb);
  return !ca && !cb && wa == wb;
}

void check_files_apart(const std::vector<FileArg>& inputs, const std::vector<FileArg>& outputs) {
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    for (const FileArg& in : inputs) {
      if (same_file(outputs[o].path, in.path)) {
        raise(ErrorKind::ValueError, named(outputs[o]) + " is the same file as " + named(in) +
                                         ": it would overwrite what the command reads; write elsewhere");
      }
    }
    for (std::size_t p = 0; p < o; ++p) {
      if (same_file(outputs[o].path, outputs[p].path)) {
        raise(ErrorKind::ValueError, named(outputs[o]) + " is the same file as " + named(outputs[p]) +
                                         ": each output needs a file of its own");
      }
    }
  }
}

void check_inputs_distinct(const std::vector<FileArg>& inputs) {
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (std::size_t j = 0; j < i; ++j) {
      if (same_file(inputs[i].path, inputs[j].path)) {
        raise(ErrorKind::ValueError, named(inputs[i]) + " is the same file as " + named(inputs[j]) +
                                         ": give each file once");
      }
    }
  }
}

void check_names_a_file(const FileArg& output) {
  if (output.path.empty()) raise(ErrorKind::ValueError, named(output) + ": the path names no file");
}

void check_output_target(const FileArg& output) {
  check_names_a_file(output);
  if (output.path == "-") {
    raise(ErrorKind::ValueError, named(output) + ": this output is a file written whole (to a new file renamed over "
                                                 "it), not standard output; give a path");
  }
  std::error_code e;
  const fs::file_status status = fs::status(output.path, e);
  if (!e && fs::exists(status) && !fs::is_regular_file(status)) {
    raise(ErrorKind::ValueError, named(output) +
                                     ": not a regular file; the output is written to a new file and renamed over it");
  }
  fs::path dir = output.path.parent_path();
  if (dir.empty()) dir = ".";
  std::error_code d;
  if (!fs::is_directory(dir, d)) {
    raise(ErrorKind::ValueError, named(output) + ": the directory \"" + dir.string() + "\" does not exist");
  }
  if (::access(dir.c_str(), W_OK) != 0) {
    raise(ErrorKind::ValueError, named(output) + ": the directory \"" + dir.string() + "\" is not writable");
  }
}

}  // namespace meshloom::launcher
