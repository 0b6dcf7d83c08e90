// Design files on disk: the bundled examples round trip byte for byte, loading errors name the path, and
// saving is atomic.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "meshloom/design/design.hpp"
#include "meshloom/error.hpp"

#ifndef MESHLOOM_EXAMPLES_DIR
#error "MESHLOOM_EXAMPLES_DIR must name resources/examples"
#endif

namespace meshloom {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

void write(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::set<std::string> listing(const fs::path& dir) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir)) names.insert(entry.path().filename().string());
  return names;
}

std::vector<fs::path> examples() {
  std::vector<fs::path> paths;
  for (const auto& entry : fs::directory_iterator(MESHLOOM_EXAMPLES_DIR)) {
    if (entry.path().filename().string().ends_with(".meshloom.json")) paths.push_back(entry.path());
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// A fresh empty directory per test.
class DesignFiles : public ::testing::Test {
protected:
  void SetUp() override {
    std::string pattern = (fs::path(::testing::TempDir()) / "meshloom-design-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    for (const auto& entry : fs::recursive_directory_iterator(dir_, ec)) {
      fs::permissions(entry.path(), fs::perms::owner_all, fs::perm_options::add, ec);
    }
    fs::remove_all(dir_, ec);
  }
  static Design sample() { return load_design(fs::path(MESHLOOM_EXAMPLES_DIR) / "default.meshloom.json"); }
  fs::path dir_;
};

std::string error_of(const std::function<void()>& f, ErrorKind kind) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), kind) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "expected an error";
  return "";
}

TEST(DesignExamples, AllBundledExamplesArePresent) {
  std::set<std::string> names;
  for (const fs::path& path : examples()) names.insert(path.filename().string());
  for (const char* name : {"default.meshloom.json", "hsdp-2d.meshloom.json", "pp-dp-tp-3d.meshloom.json",
                           "torchtitan-4d.meshloom.json", "llama3-405b.meshloom.json", "llama3-8b.meshloom.json",
                           "advisor-2x2.meshloom.json"}) {
    EXPECT_TRUE(names.contains(name)) << name;
  }
}

TEST(DesignExamples, ParseThenSaveReproducesEveryExampleByteForByte) {
  for (const fs::path& path : examples()) {
    SCOPED_TRACE(path.string());
    const std::string text = read(path);
    const Design design = load_design(path);
    EXPECT_EQ(to_json_text(design), text);
    EXPECT_EQ(parse_design(text), design);
  }
}

TEST(DesignExamples, ContentOfTheDefaultAndTheLargest) {
  const Design def = load_design(fs::path(MESHLOOM_EXAMPLES_DIR) / "default.meshloom.json");
  EXPECT_EQ(def.world, 8);
  EXPECT_EQ(def.mesh.shape, (std::vector<std::int64_t>{2, 2, 2}));
  EXPECT_EQ(def.mesh.names, (std::vector<std::string>{"pp", "dp", "tp"}));
  EXPECT_EQ(def.tensors.size(), 2U);

  const Design llama = load_design(fs::path(MESHLOOM_EXAMPLES_DIR) / "llama3-405b.meshloom.json");
  EXPECT_EQ(llama.world, 16384);
  EXPECT_EQ(llama.devices_per_host, 8);
  EXPECT_EQ(llama.mesh.shape, (std::vector<std::int64_t>{128, 16, 1, 8}));
  EXPECT_EQ(llama.mesh.names, (std::vector<std::string>{"dp", "pp", "cp", "tp"}));
  bool ffn = false;
  for (const DesignTensor& t : llama.tensors) {
    ffn = ffn || (t.shape == std::vector<std::int64_t>{16384, 53248} && t.dtype == DType::BFloat16);
  }
  EXPECT_TRUE(ffn);

  const Design titan = load_design(fs::path(MESHLOOM_EXAMPLES_DIR) / "torchtitan-4d.meshloom.json");
  EXPECT_EQ(titan.mesh.names, (std::vector<std::string>{"pp", "dp_replicate", "dp_shard", "tp"}));
  std::set<std::string> flattened;
  for (const FlattenSpec& f : titan.mesh.flattened) flattened.insert(f.name);
  EXPECT_EQ(flattened, (std::set<std::string>{"dp", "dp_shard_cp", "dp_cp"}));
}

TEST_F(DesignFiles, SaveThenLoadRoundTrips) {
  for (const fs::path& example : examples()) {
    const Design design = load_design(example);
    const fs::path path = dir_ / example.filename();
    save_design(design, path);
    EXPECT_EQ(read(path), read(example));
    EXPECT_EQ(load_design(path), design);
  }
  // Overwriting replaces the content, keeps the mode and leaves no temporary file.
  const fs::path path = dir_ / "default.meshloom.json";
  ASSERT_EQ(::chmod(path.c_str(), 0600), 0);
  Design changed = sample();
  changed.name = "changed";
  save_design(changed, path);
  EXPECT_EQ(load_design(path).name, "changed");
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600U);
  EXPECT_EQ(listing(dir_).size(), examples().size());
}

TEST_F(DesignFiles, SaveThroughASymbolicLinkReplacesTheTarget) {
  const fs::path target = dir_ / "real.meshloom.json";
  const fs::path link = dir_ / "link.meshloom.json";
  write(target, "old");
  fs::create_symlink(target.filename(), link);
  save_design(sample(), link);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(target), to_json_text(sample()));
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"real.meshloom.json", "link.meshloom.json"}));
}

// A link whose target does not exist yet is written through (its target created), not replaced by a file; a loop
// of links is refused and leaves both links as they were.
TEST_F(DesignFiles, SaveThroughADanglingLinkCreatesItsTarget) {
  const fs::path link = dir_ / "link.meshloom.json";
  fs::create_symlink("sub/../real.meshloom.json", link);
  fs::create_directory(dir_ / "sub");
  save_design(sample(), link);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(read(dir_ / "real.meshloom.json"), to_json_text(sample()));

  const fs::path a = dir_ / "a.json";
  const fs::path b = dir_ / "b.json";
  fs::create_symlink(b.filename(), a);
  fs::create_symlink(a.filename(), b);
  const std::string message = error_of([&] { save_design(sample(), a); }, ErrorKind::RuntimeError);
  EXPECT_NE(message.find("too many levels of symbolic links"), std::string::npos) << message;
  EXPECT_TRUE(fs::is_symlink(a) && fs::is_symlink(b));
}

TEST_F(DesignFiles, SaveIntoAMissingDirectoryFails) {
  const fs::path path = dir_ / "missing" / "x.meshloom.json";
  const std::string message = error_of([&] { save_design(sample(), path); }, ErrorKind::RuntimeError);
  EXPECT_NE(message.find("RuntimeError: cannot save design to \"" + path.string() + "\": cannot create a temporary file in \"" +
                         (dir_ / "missing").string() + "\": No such file or directory"),
            std::string::npos)
      << message;
  EXPECT_TRUE(listing(dir_).empty());
}

TEST_F(DesignFiles, SaveUnderARegularFileFails) {
  write(dir_ / "file", "x");
  const fs::path path = dir_ / "file" / "x.meshloom.json";
  const std::string message = error_of([&] { save_design(sample(), path); }, ErrorKind::RuntimeError);
  EXPECT_NE(message.find(path.string()), std::string::npos) << message;
  EXPECT_NE(message.find("Not a directory"), std::string::npos) << message;
  EXPECT_EQ(read(dir_ / "file"), "x");
}

TEST_F(DesignFiles, FailedRenameRemovesTheTemporaryFile) {
  // The path is a non-empty directory: the temporary file is written, the rename fails.
  fs::create_directory(dir_ / "taken.meshloom.json");
  write(dir_ / "taken.meshloom.json" / "keep", "k");
  const std::string message =
      error_of([&] { save_design(sample(), dir_ / "taken.meshloom.json"); }, ErrorKind::RuntimeError);
  EXPECT_NE(message.find("cannot replace the file"), std::string::npos) << message;
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"taken.meshloom.json"}));
  EXPECT_EQ(read(dir_ / "taken.meshloom.json" / "keep"), "k");
}

TEST_F(DesignFiles, SaveIntoAReadOnlyDirectoryLeavesTheOldFile) {
  if (::geteuid() == 0) GTEST_SKIP() << "root ignores directory permissions";
  const fs::path path = dir_ / "x.meshloom.json";
  write(path, "old content");
  ASSERT_EQ(::chmod(dir_.c_str(), 0555), 0);
  const std::string message = error_of([&] { save_design(sample(), path); }, ErrorKind::RuntimeError);
  ::chmod(dir_.c_str(), 0755);
  EXPECT_NE(message.find("cannot save design to \"" + path.string() + "\""), std::string::npos) << message;
  EXPECT_NE(message.find("Permission denied"), std::string::npos) << message;
  EXPECT_EQ(read(path), "old content");
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"x.meshloom.json"}));
}

TEST_F(DesignFiles, InvalidDesignIsNotWritten) {
  const fs::path path = dir_ / "x.meshloom.json";
  write(path, "old content");
  Design bad = sample();
  bad.world = 3;
  const std::string message = error_of([&] { save_design(bad, path); }, ErrorKind::ValueError);
  EXPECT_NE(message.find("devices_per_host = 8: does not divide world = 3"), std::string::npos) << message;
  EXPECT_EQ(read(path), "old content");
  EXPECT_EQ(listing(dir_), (std::set<std::string>{"x.meshloom.json"}));
}

TEST_F(DesignFiles, LoadErrorsNameThePath) {
  const fs::path missing = dir_ / "missing.meshloom.json";
  EXPECT_EQ(error_of([&] { (void)load_design(missing); }, ErrorKind::RuntimeError),
            "RuntimeError: cannot read design \"" + missing.string() + "\": No such file or directory");
  EXPECT_NE(error_of([&] { (void)load_design(dir_); }, ErrorKind::RuntimeError).find("Is a directory"), std::string::npos);

  const fs::path bad = dir_ / "bad.meshloom.json";
  write(bad, R"({"format": "meshloom-design", "version": 3})");
  EXPECT_EQ(error_of([&] { (void)load_design(bad); }, ErrorKind::ValueError),
            "ValueError: \"" + bad.string() + "\": version = 3: unsupported version; this build reads versions 1 and 2");

  const fs::path big = dir_ / "big.meshloom.json";
  write(big, std::string(kMaxDesignFileBytes + 10, ' '));
  EXPECT_EQ(error_of([&] { (void)load_design(big); }, ErrorKind::ValueError),
            "ValueError: \"" + big.string() + "\": the file is larger than 16777216 bytes (16 MiB)");
}

}  // namespace
}  // namespace meshloom
