// Durable whole-file writes: the design save and the launcher's calibration file.
#pragma once

#include <filesystem>
#include <string_view>

namespace meshloom {

// Writes `content` to `path` atomically: a temporary file in the same directory, fsync, rename over `path`, then
// fsync of the directory (a directory that cannot be synced is not an error). The mode of the file being
// replaced is kept (a new file gets rw-r--r--); when `path` is a symbolic link (or a chain of them), the file it
// ends at is replaced, or created where the last link dangles, and the links kept (40 links at most). On failure `path` keeps its old content, the temporary file is removed, and a
// RuntimeError "<what> <quoted path>: <cause>" is raised.
void write_file_atomically(const std::filesystem::path& path, std::string_view content,
                           std::string_view what = "cannot write");

}  // namespace meshloom
