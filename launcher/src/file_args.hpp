// The files a command reads and writes, checked before it touches any: an output that is one of its inputs would be
// destroyed (a --jsonl stream is created before the inputs are read, an --out replaces the file), so it is refused,
// as is an input given twice where each one counts (two copies of one run are not two runs).
//
//   check_files_apart({{"--records", "v.jsonl"}}, {{"--out", "v.jsonl"}})
//     -> ValueError: --out "v.jsonl" is the same file as --records "v.jsonl": it would overwrite what the command
//        reads; write elsewhere
//   check_inputs_distinct({{"--records", "v.jsonl"}, {"--records", "./v.jsonl"}})
//     -> ValueError: --records "./v.jsonl" is the same file as --records "v.jsonl": give each file once
//   check_output_target({"--out", "/dev/full"})
//     -> ValueError: --out "/dev/full": not a regular file; the output is written to a new file and renamed over it
//   check_output_target({"--out", ""})
//     -> ValueError: --out "": the path names no file
//
// Two paths name the same file when both exist and are one file (std::filesystem::equivalent: links and ./ alike),
// or when one does not exist yet and both resolve to the same absolute path. "-" (standard output) and empty paths
// are never compared.
#pragma once

#include <filesystem>
#include <string>
#include <vector>

namespace meshloom::launcher {

struct FileArg {
  std::string option;  // "--records"
  std::filesystem::path path;
};

[[nodiscard]] bool same_file(const std::filesystem::path& a, const std::filesystem::path& b);

// ValueError naming both options and paths when an output is one of the inputs, or two outputs are one file.
void check_files_apart(const std::vector<FileArg>& inputs, const std::vector<FileArg>& outputs);

// ValueError when two of `inputs` are one file.
void check_inputs_distinct(const std::vector<FileArg>& inputs);

// ValueError when the path is empty (`--out ""`, an unset shell variable): "--out \"\": the path names no file".
void check_names_a_file(const FileArg& output);

// For a file written atomically (a temporary file renamed over it): ValueError when the path is empty or "-" (such
// an output is never standard output), the target exists and is not a regular file (a directory, a device, a
// FIFO), or its directory does not exist or is not writable.
void check_output_target(const FileArg& output);

}  // namespace meshloom::launcher
