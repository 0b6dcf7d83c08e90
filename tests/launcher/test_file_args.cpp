// The files a command reads and writes (file_args.hpp): an output that is one of its inputs, an input given twice,
// and an output that cannot be written atomically are refused, naming the options and paths.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "file_args.hpp"
#include "launch_support.hpp"
#include "meshloom/error.hpp"
#include "support/expect_error.hpp"

namespace meshloom::launcher {
namespace {

namespace fs = std::filesystem;

const meshloom::test::ScratchDir scratch("meshloom_file_args_");

using testing::error_of;

TEST(FileArgs, OneFileByAnyPathIsTheSameFile) {
  const fs::path v = scratch.write("v.jsonl", "{}\n");
  const fs::path dir = v.parent_path();
  EXPECT_TRUE(same_file(v, dir / "." / "v.jsonl"));
  fs::create_symlink(v, dir / "link.jsonl");
  EXPECT_TRUE(same_file(v, dir / "link.jsonl"));
  EXPECT_FALSE(same_file(v, scratch.write("w.jsonl", "{}\n")));
  // Not written yet: the same absolute path is the same file.
  EXPECT_TRUE(same_file(dir / "new.json", dir / "sub" / ".." / "new.json"));
  EXPECT_FALSE(same_file(dir / "new.json", dir / "other.json"));
  // Standard output and an option not given are never one of the files.
  EXPECT_FALSE(same_file("-", "-"));
  EXPECT_FALSE(same_file("", ""));
}

TEST(FileArgs, AnOutputThatIsAnInputIsRefusedNamingBoth) {
  const fs::path v = scratch.write("records.jsonl", "{}\n");
  EXPECT_EQ(error_of([&] { check_files_apart({{"--calibration", "c.json"}, {"--records", v}}, {{"--out", v}}); }),
            "ValueError: --out \"" + v.string() + "\" is the same file as --records \"" + v.string() +
                "\": it would overwrite what the command reads; write elsewhere");
  EXPECT_EQ(error_of([&] { check_files_apart({}, {{"--jsonl", "a.json"}, {"--out", "./a.json"}}); }),
            "ValueError: --out \"./a.json\" is the same file as --jsonl \"a.json\": each output needs a file of its own");
  EXPECT_EQ(error_of([&] { check_files_apart({{"--records", v}}, {{"--out", scratch.path() / "r.json"}, {"--jsonl", "-"}}); }),
            "no error");
  EXPECT_EQ(error_of([&] { check_inputs_distinct({{"--records", v}, {"--records", v.parent_path() / "./records.jsonl"}}); }),
            "ValueError: --records \"" + (v.parent_path() / "./records.jsonl").string() +
                "\" is the same file as --records \"" + v.string() + "\": give each file once");
  EXPECT_EQ(std::ifstream(v).get(), '{');  // untouched
}

TEST(FileArgs, AnOutputMustBeARegularFileInAWritableDirectory) {
  fs::create_directories(scratch.path());
  EXPECT_EQ(error_of([] { check_output_target({"--out", scratch.path() / "fresh.json"}); }), "no error");
  EXPECT_EQ(error_of([] { check_output_target({"--out", scratch.write("old.json", "x")}); }), "no error");
  EXPECT_EQ(error_of([] { check_output_target({"--out", scratch.path()}); }),
            "ValueError: --out \"" + scratch.path().string() +
                "\": not a regular file; the output is written to a new file and renamed over it");
  const fs::path fifo = scratch.path() / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  EXPECT_NE(error_of([&] { check_output_target({"--jsonl", fifo}); }).find("not a regular file"), std::string::npos);
  // An empty path (an unset shell variable) and "-" name no file to write whole: refused before anything runs.
  EXPECT_EQ(error_of([] { check_output_target({"--out", ""}); }), "ValueError: --out \"\": the path names no file");
  EXPECT_EQ(error_of([] { check_names_a_file({"--jsonl", ""}); }), "ValueError: --jsonl \"\": the path names no file");
  EXPECT_EQ(error_of([] { check_names_a_file({"--jsonl", "-"}); }), "no error");
  EXPECT_EQ(error_of([] { check_output_target({"--out", "-"}); }),
            "ValueError: --out \"-\": this output is a file written whole (to a new file renamed over it), not "
            "standard output; give a path");
  const fs::path missing = scratch.path() / "nodir" / "c.json";
  EXPECT_EQ(error_of([&] { check_output_target({"--out", missing}); }),
            "ValueError: --out \"" + missing.string() + "\": the directory \"" + missing.parent_path().string() +
                "\" does not exist");
}

}  // namespace
}  // namespace meshloom::launcher
