// The saving policy of writeFileAtomically (engine/src/io/files.cpp), through saveImage: a replaced
// file keeps its permission bits; a symbolic link is followed and its target replaced in the
// target's folder (the link stays a link), a dangling link is refused; stale temporary files of
// saves whose process is gone are removed by the next save, live ones and other files are not; a
// failed save leaves the old file intact and no temporary file behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gpulab/io/image_io.hpp"
#include "support/gpu_test.hpp"

using namespace gpulab;
namespace fs = std::filesystem;

namespace {

/// A fresh folder per test, removed afterwards.
class SaveFiles : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gpulab-test-files-" + std::to_string(::getpid()) + "-" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::permissions(dir_, fs::perms::owner_all, fs::perm_options::add, ec);
    fs::remove_all(dir_, ec);
  }
  fs::path dir_;
};

Image smallImage(unsigned seed) { return test::randomImage(7, 5, 3, PixelType::U8, seed); }

std::string slurp(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

mode_t modeOf(const fs::path& path) {
  struct stat info {};
  EXPECT_EQ(::stat(path.c_str(), &info), 0) << path;
  return info.st_mode & 07777;
}

/// The names in `dir` that start with ".gpulab-save-".
std::vector<std::string> tempFiles(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(dir))
    if (entry.path().filename().string().starts_with(".gpulab-save-")) names.push_back(entry.path().filename());
  return names;
}

/// A pid that no process has: a child that has exited and been reaped.
pid_t deadPid() {
  const pid_t child = ::fork();
  if (child == 0) ::_exit(0);
  int status = 0;
  ::waitpid(child, &status, 0);
  return child;
}

void writeFile(const fs::path& path, const std::string& text) { std::ofstream(path, std::ios::binary) << text; }

void makeOld(const fs::path& path) {  // two minutes old
  const timeval past[2] = {{::time(nullptr) - 120, 0}, {::time(nullptr) - 120, 0}};
  ASSERT_EQ(::utimes(path.c_str(), past), 0);
}

}  // namespace

TEST_F(SaveFiles, ReplacedFileKeepsItsPermissionBits) {
  const fs::path path = dir_ / "private.png";
  for (mode_t mode : {0600, 0640, 0755, 0444}) {
    saveImage(smallImage(1), path);
    ASSERT_EQ(::chmod(path.c_str(), mode), 0);
    saveImage(smallImage(2), path);
    EXPECT_EQ(modeOf(path), mode) << std::oct << mode;
    EXPECT_TRUE(test::imagesNear(smallImage(2), loadImage(path), 0));
    ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  }
}

TEST_F(SaveFiles, NewFileGetsTheUmaskedDefault) {
  const mode_t old = ::umask(027);
  saveImage(smallImage(3), dir_ / "new.png");
  ::umask(old);
  EXPECT_EQ(modeOf(dir_ / "new.png"), 0640u);
}

TEST_F(SaveFiles, SymlinkIsFollowedAndStaysALink) {
  fs::create_directories(dir_ / "elsewhere");
  const fs::path target = dir_ / "elsewhere" / "real.png", link = dir_ / "link.png";
  saveImage(smallImage(4), target);
  ASSERT_EQ(::chmod(target.c_str(), 0600), 0);
  fs::create_symlink(fs::path("elsewhere") / "real.png", link);  // relative, as people make them
  saveImage(smallImage(5), link);
  EXPECT_TRUE(fs::is_symlink(link));
  EXPECT_EQ(fs::read_symlink(link), fs::path("elsewhere") / "real.png");
  EXPECT_TRUE(test::imagesNear(smallImage(5), loadImage(target), 0));
  EXPECT_EQ(modeOf(target), 0600u);
  EXPECT_TRUE(tempFiles(dir_).empty());
  EXPECT_TRUE(tempFiles(dir_ / "elsewhere").empty());

  // A chain of links ends at the same file.
  fs::create_symlink(link, dir_ / "chain.png");
  saveImage(smallImage(6), dir_ / "chain.png");
  EXPECT_TRUE(fs::is_symlink(dir_ / "chain.png") && fs::is_symlink(link));
  EXPECT_TRUE(test::imagesNear(smallImage(6), loadImage(target), 0));
}

TEST_F(SaveFiles, DanglingSymlinkAndLoopAreRefusedWithAMessage) {
  const fs::path link = dir_ / "dangling.png";
  fs::create_symlink(dir_ / "missing.png", link);
  try {
    saveImage(smallImage(7), link);
    ADD_FAILURE() << "a dangling link was written through";
  } catch (const ImageIoError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("symbolic link"), std::string::npos) << what;
    EXPECT_NE(what.find("missing.png"), std::string::npos) << what;
    EXPECT_NE(what.find("does not exist"), std::string::npos) << what;
  }
  EXPECT_FALSE(fs::exists(dir_ / "missing.png"));
  EXPECT_TRUE(fs::is_symlink(link));

  fs::create_symlink("b.png", dir_ / "a.png");
  fs::create_symlink("a.png", dir_ / "b.png");
  EXPECT_THROW(saveImage(smallImage(8), dir_ / "a.png"), ImageIoError);
  EXPECT_TRUE(tempFiles(dir_).empty());
}

TEST_F(SaveFiles, StaleTemporaryFilesOfGoneProcessesAreRemoved) {
  const pid_t dead = deadPid();
  const fs::path stale = dir_ / (".gpulab-save-" + std::to_string(dead) + "-3.tmp");
  const fs::path fresh = dir_ / (".gpulab-save-" + std::to_string(dead) + "-4.tmp");        // gone, but just written
  const fs::path live = dir_ / (".gpulab-save-" + std::to_string(::getppid()) + "-0.tmp");  // a live process
  const fs::path other = dir_ / ".gpulab-save-notes.tmp";                                   // not our pattern
  const fs::path user = dir_ / "holiday.png";
  for (const fs::path& p : {stale, fresh, live, other, user}) writeFile(p, "partial");
  for (const fs::path& p : {stale, live, other, user}) makeOld(p);

  saveImage(smallImage(9), dir_ / "out.png");
  EXPECT_FALSE(fs::exists(stale)) << "a stale temporary file of a gone process stayed";
  EXPECT_TRUE(fs::exists(fresh)) << "a temporary file modified in the last minute was removed";
  EXPECT_TRUE(fs::exists(live)) << "a live process's temporary file was removed";
  EXPECT_TRUE(fs::exists(other));
  EXPECT_TRUE(fs::exists(user));
  EXPECT_TRUE(test::imagesNear(smallImage(9), loadImage(dir_ / "out.png"), 0));
}

TEST_F(SaveFiles, KilledSaveLeavesATempFileTheNextSaveRemoves) {
  // A child saves a large image and is killed mid-write; its temporary file is what a crash leaves.
  const fs::path path = dir_ / "big.npy";
  saveImage(smallImage(10), dir_ / "keep.png");
  const pid_t child = ::fork();
  if (child == 0) {
    Image big(4096, 4096, 4, PixelType::F32);  // 256 MiB: long enough to be caught writing
    saveImage(big, path);
    ::_exit(0);
  }
  for (int i = 0; i < 2000 && tempFiles(dir_).empty(); ++i) ::usleep(1000);
  ::kill(child, SIGKILL);
  int status = 0;
  ::waitpid(child, &status, 0);
  const std::vector<std::string> left = tempFiles(dir_);
  if (left.empty() && fs::exists(path)) GTEST_SKIP() << "the child finished its save before it was killed";
  ASSERT_EQ(left.size(), 1u);
  EXPECT_FALSE(fs::exists(path));
  makeOld(dir_ / left.front());
  saveImage(smallImage(11), dir_ / "keep.png");
  EXPECT_TRUE(tempFiles(dir_).empty());
}

TEST_F(SaveFiles, FailedWriteLeavesTheOldFileAndNoTemporaryFile) {
  // A file size limit makes write() fail (EFBIG) even for root, who ignores folder permissions.
  const fs::path path = dir_ / "photo.npy";
  saveImage(smallImage(12), path);
  const std::string before = slurp(path);
  const pid_t child = ::fork();
  if (child == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    try {
      saveImage(Image(256, 256, 1, PixelType::F32), path);
    } catch (const ImageIoError& e) {
      const std::string what = e.what();
      ::_exit(what.find("writing failed") != std::string::npos && what.find('\n') == std::string::npos ? 0 : 2);
    }
    ::_exit(3);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: the save did not fail; 2: its message was not the expected one";
  EXPECT_EQ(slurp(path), before);
  EXPECT_TRUE(tempFiles(dir_).empty());
}

TEST_F(SaveFiles, ReadOnlyFolderFailsCleanly) {
  // Root writes into any folder: as root, the save runs in a child that has become nobody (65534).
  const fs::path path = dir_ / "photo.png";
  saveImage(smallImage(13), path);
  const std::string before = slurp(path);
  const bool root = ::geteuid() == 0;
  if (root) {
    ASSERT_EQ(::chown(dir_.c_str(), 65534, 65534), 0);
    ASSERT_EQ(::chown(path.c_str(), 65534, 65534), 0);
  }
  fs::permissions(dir_, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                            fs::perms::others_read | fs::perms::others_exec);
  const pid_t child = ::fork();
  if (child == 0) {
    if (root && (::setgid(65534) != 0 || ::setuid(65534) != 0)) ::_exit(4);
    try {
      saveImage(smallImage(14), path);
    } catch (const ImageIoError& e) {
      const std::string what = e.what();
      ::_exit(what.find("cannot create a file in") != std::string::npos ? 0 : 2);
    }
    ::_exit(3);
  }
  int status = 0;
  ::waitpid(child, &status, 0);
  fs::permissions(dir_, fs::perms::owner_all);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "3: the save did not fail; 2: another message; 4: could not become nobody";
  EXPECT_EQ(slurp(path), before);
  EXPECT_TRUE(tempFiles(dir_).empty());
}
