// The programs' first contact with a user: --help and --version of gpulab and gpulab-cli work on a
// machine without a display and name the build (git describe), and the windows get gpulab's icon.
#include <gtest/gtest.h>

#include <QColor>
#include <QFile>
#include <QFileInfo>
#include <QIcon>
#include <QImage>
#include <QPixmap>
#include <QTemporaryDir>

#include "gpulab_build_version.hpp"
#include "shell/resource_paths.hpp"
#include "support/gui_test_support.hpp"
#include "support/program_runner.hpp"

namespace {

using gpulab::test::environmentWithoutDisplay;
using gpulab::test::ProgramRun;
using gpulab::test::runProgram;

const QString kGui = QStringLiteral(GPULAB_GUI_PATH);
const QString kCli = QStringLiteral(GPULAB_CLI_PATH);

TEST(Startup, GuiHelpNeedsNoDisplay) {
  for (const QString& option : {QStringLiteral("--help"), QStringLiteral("-h")}) {
    SCOPED_TRACE(option.toStdString());
    const ProgramRun run = runProgram(kGui, {option}, environmentWithoutDisplay());
    ASSERT_EQ(run.exitCode, 0) << run.describe();
    EXPECT_TRUE(run.out.startsWith(QStringLiteral("Usage: ") + kGui)) << run.describe();
    EXPECT_TRUE(run.out.contains(QStringLiteral("--screenshot"))) << run.describe();
    EXPECT_TRUE(run.err.isEmpty()) << run.describe();
  }
}

TEST(Startup, GuiVersionNeedsNoDisplay) {
  for (const QString& option : {QStringLiteral("--version"), QStringLiteral("-v")}) {
    SCOPED_TRACE(option.toStdString());
    const ProgramRun run = runProgram(kGui, {option}, environmentWithoutDisplay());
    ASSERT_EQ(run.exitCode, 0) << run.describe();
    EXPECT_EQ(run.out, QStringLiteral("gpulab " GPULAB_VERSION_STRING "\n")) << run.describe();
    EXPECT_TRUE(run.err.isEmpty()) << run.describe();
  }
}

TEST(Startup, UsageErrorsNeedNoDisplay) {
  // One line and exit 2 without a display, as with one (before, Qt aborted first: exit 134).
  for (const QStringList& arguments :
       {QStringList{QStringLiteral("--size"), QStringLiteral("huge")}, QStringList{QStringLiteral("--no-such-option")},
        QStringList{QStringLiteral("a.png"), QStringLiteral("b.png")}}) {
    SCOPED_TRACE(arguments.join(QLatin1Char(' ')).toStdString());
    const ProgramRun run = runProgram(kGui, arguments, environmentWithoutDisplay());
    EXPECT_EQ(run.exitCode, 2) << run.describe();
    EXPECT_TRUE(run.err.startsWith(QStringLiteral("gpulab: "))) << run.describe();
    EXPECT_TRUE(run.err.endsWith(QStringLiteral(" (see 'gpulab --help')\n"))) << run.describe();
    EXPECT_EQ(run.err.count(QLatin1Char('\n')), 1) << run.describe();
  }
  // Qt's own options stay Qt's: with -platform the command line is read after Qt took them out.
  const ProgramRun run = runProgram(
      kGui,
      {QStringLiteral("-platform"), QStringLiteral("offscreen"), QStringLiteral("--size"), QStringLiteral("huge")},
      environmentWithoutDisplay());
  EXPECT_EQ(run.exitCode, 2) << run.describe();
  EXPECT_TRUE(run.err.contains(QStringLiteral("gpulab: --size 'huge'"))) << run.describe();
}

TEST(Startup, CliVersionMatchesTheGui) {
  const ProgramRun run = runProgram(kCli, {QStringLiteral("--version")}, environmentWithoutDisplay());
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_EQ(run.out, QStringLiteral("gpulab-cli " GPULAB_VERSION_STRING "\n")) << run.describe();
}

TEST(Startup, VersionNamesTheCommitItWasBuiltFrom) {
  const QString describe = QStringLiteral(GPULAB_GIT_DESCRIBE);
  const auto git = [](QStringList arguments) {
    return runProgram(QStringLiteral("git"),
                      QStringList{QStringLiteral("-C"), QStringLiteral(GPULAB_SOURCE_DIR)} + arguments);
  };
  if (qEnvironmentVariableIsSet("GPULAB_PACKED_BUILD"))
    GTEST_SKIP() << "a build packed for another machine (scripts/gpu-check.sh): the tree here is not the one it was "
                    "built from, so its commit need not be in this tree's history";
  const ProgramRun top = git({QStringLiteral("rev-parse"), QStringLiteral("--show-toplevel")});
  if (top.exitCode != 0 || !QFileInfo::exists(QStringLiteral(GPULAB_SOURCE_DIR "/.git")))
    GTEST_SKIP() << "the source tree here is not a git checkout (a build packed for another machine), or git is "
                    "missing: "
                 << top.describe();
  EXPECT_EQ(QStringLiteral(GPULAB_VERSION_STRING), QStringLiteral(GPULAB_PROJECT_VERSION " (git ") + describe + ')');
  // `git describe --tags --always --dirty`: [TAG-N-g]HASH[-dirty], HASH a commit of this repository
  // (HEAD when it was built; a later commit does not make it wrong).
  QString hash = describe;
  if (hash.endsWith(QStringLiteral("-dirty"))) hash.chop(6);
  if (const qsizetype g = hash.lastIndexOf(QStringLiteral("-g")); g >= 0) hash = hash.mid(g + 2);
  ASSERT_GE(hash.size(), 4) << describe.toStdString();
  const ProgramRun commit = git({QStringLiteral("rev-parse"), QStringLiteral("--verify"), QStringLiteral("--quiet"),
                                 hash + QStringLiteral("^{commit}")});
  EXPECT_EQ(commit.exitCode, 0) << "'" << describe.toStdString() << "' names no commit here: " << commit.describe();
}

TEST(Startup, OutsideAGitCheckoutTheVersionIsTheProjects) {
  // cmake/WriteBuildVersion.cmake as the build runs it, on a folder that is no git work tree.
  const QString cmake = QStringLiteral(GPULAB_CMAKE);
  if (!QFileInfo(cmake).isExecutable()) GTEST_SKIP() << "no cmake here (" << cmake.toStdString() << ")";
  QTemporaryDir tree;
  ASSERT_TRUE(tree.isValid());
  const QString header = tree.filePath(QStringLiteral("version.hpp"));
  const ProgramRun run =
      runProgram(cmake, {QStringLiteral("-DSOURCE_DIR=") + tree.path(), QStringLiteral("-DOUTPUT=") + header,
                         QStringLiteral("-DPROJECT_VERSION=9.8.7"), QStringLiteral("-P"),
                         QStringLiteral(GPULAB_SOURCE_DIR "/cmake/WriteBuildVersion.cmake")});
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  QFile file(header);
  ASSERT_TRUE(file.open(QIODevice::ReadOnly));
  const QString text = QString::fromUtf8(file.readAll());
  EXPECT_TRUE(text.contains(QStringLiteral("#define GPULAB_VERSION_STRING \"9.8.7\"\n"))) << text.toStdString();
  EXPECT_TRUE(text.contains(QStringLiteral("#define GPULAB_GIT_DESCRIBE \"\"\n"))) << text.toStdString();
}

TEST(Startup, WindowIconIsGpulabsOwn) {
  gpulab::gui::test_support::testApplication("test_startup");
  QFile svg(QStringLiteral(":/gpulab/icons/gpulab.svg"));
  ASSERT_TRUE(svg.open(QIODevice::ReadOnly)) << "the icon is not compiled in";
  EXPECT_TRUE(svg.readAll().contains("<svg"));
  const QIcon icon = gpulab::gui::applicationIcon();
  ASSERT_FALSE(icon.isNull());
  // Drawn from the SVG at any size by Qt's SVG icon engine (Debian's libqt6svg6, which the .deb
  // depends on and scripts/install-deps.sh installs; a build packed for a GPU machine lacks it).
  if (icon.pixmap(16, 16).isNull())
    GTEST_SKIP() << "Qt's SVG icon engine is not installed here (Debian: libqt6svg6): the icon cannot be drawn";
  for (const int side : {32, 48, 256}) {
    SCOPED_TRACE(side);
    const QImage image = icon.pixmap(side, side).toImage().convertToFormat(QImage::Format_ARGB32);
    ASSERT_EQ(image.size(), QSize(side, side));
    // In the SVG's 128-unit square: the lens's sky at (64, 44) is light blue, the corner is
    // transparent, and the top middle pin at (63.5, 12) is gold.
    const auto at = [&](double x, double y) { return image.pixelColor(int(x * side / 128), int(y * side / 128)); };
    const QColor sky = at(64, 44);
    EXPECT_GT(sky.blue(), 150) << sky.name().toStdString();
    EXPECT_GT(sky.blue(), sky.red() + 40) << sky.name().toStdString();
    EXPECT_EQ(at(0, 0).alpha(), 0);
    const QColor pin = at(63.5, 12);
    EXPECT_GT(pin.red(), 150) << pin.name().toStdString();
    EXPECT_LT(pin.blue(), 120) << pin.name().toStdString();
  }
}

}  // namespace
