// `cmake --install` as a user or a packager runs it: the build tree installed into a temporary
// prefix holds both programs, the resources where gpulab looks for them, the desktop entry, icon
// and AppStream data (valid), and the installed programs run from there without a display.
#include <gtest/gtest.h>

#include <QColor>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QImage>
#include <QTemporaryDir>

#include "support/program_runner.hpp"

namespace {

using gpulab::test::environmentWithoutDisplay;
using gpulab::test::ProgramRun;
using gpulab::test::runProgram;

/// The build tree installed into a fresh temporary prefix.
class Install : public testing::Test {
 protected:
  void SetUp() override {
    if (!QFileInfo::exists(QStringLiteral(GPULAB_BINARY_DIR "/cmake_install.cmake")) ||
        !QFileInfo(QStringLiteral(GPULAB_CMAKE)).isExecutable())
      GTEST_SKIP() << "the build tree " GPULAB_BINARY_DIR " or cmake is not here (a build packed for another machine)";
    ASSERT_TRUE(prefix_.isValid());
    const ProgramRun run = runProgram(
        QStringLiteral(GPULAB_CMAKE),
        {QStringLiteral("--install"), QStringLiteral(GPULAB_BINARY_DIR), QStringLiteral("--prefix"), prefix_.path()});
    ASSERT_EQ(run.exitCode, 0) << run.describe();
  }

  QString path(const QString& relative) const { return QDir(prefix_.path()).filePath(relative); }

  QTemporaryDir prefix_;
};

TEST_F(Install, HoldsBothProgramsTheResourcesAndTheDesktopFiles) {
  for (const char* file : {"bin/gpulab", "bin/gpulab-cli"}) {
    const QFileInfo info(path(QString::fromLatin1(file)));
    EXPECT_TRUE(info.isFile() && info.isExecutable()) << file;
  }
  for (const char* file :
       {"share/gpulab/photos/coffee.png", "share/gpulab/photos/astronaut.png", "share/gpulab/CREDITS.md",
        "share/applications/org.gpulab.gpulab.desktop", "share/icons/hicolor/scalable/apps/org.gpulab.gpulab.svg",
        "share/metainfo/org.gpulab.gpulab.metainfo.xml", "share/doc/gpulab/LICENSE", "share/doc/gpulab/README.md"})
    EXPECT_TRUE(QFileInfo(path(QString::fromLatin1(file))).isFile()) << file;
  EXPECT_FALSE(QFileInfo::exists(path(QStringLiteral("share/gpulab/icons"))))
      << "the icon is compiled in and installed under its freedesktop name";
  const auto contents = [](const QString& file) {
    QFile f(file);
    return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray();
  };
  const QByteArray icon = contents(path(QStringLiteral("share/icons/hicolor/scalable/apps/org.gpulab.gpulab.svg")));
  EXPECT_TRUE(icon.contains("<svg"));
  EXPECT_EQ(icon, contents(QStringLiteral(GPULAB_SOURCE_DIR "/resources/icons/gpulab.svg")));
}

TEST_F(Install, InstalledProgramsRunWithoutADisplay) {
  const QProcessEnvironment env = environmentWithoutDisplay();
  ProgramRun run = runProgram(path(QStringLiteral("bin/gpulab-cli")), {QStringLiteral("info")}, env);
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_TRUE(run.out.contains(QStringLiteral("CUDA runtime"))) << run.describe();
  run = runProgram(path(QStringLiteral("bin/gpulab-cli")), {QStringLiteral("--version")}, env);
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_TRUE(run.out.startsWith(QStringLiteral("gpulab-cli "))) << run.describe();
  const QString cliVersion = run.out.mid(int(qstrlen("gpulab-cli ")));
  run = runProgram(path(QStringLiteral("bin/gpulab")), {QStringLiteral("--version")}, env);
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_EQ(run.out, QStringLiteral("gpulab ") + cliVersion) << run.describe();
  run = runProgram(path(QStringLiteral("bin/gpulab")), {QStringLiteral("--help")}, env);
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_TRUE(run.out.contains(QStringLiteral("--screenshot"))) << run.describe();
}

TEST_F(Install, InstalledGuiOpensThePhotoFromItsShareFolder) {
  // Swap the installed bundled photo for a plain magenta one: the window must show magenta, so the
  // photo came from <prefix>/share/gpulab and not from the source tree the build also knows.
  const QString photo = path(QStringLiteral("share/gpulab/photos/coffee.png"));
  QImage magenta(600, 400, QImage::Format_RGB888);
  magenta.fill(QColor(255, 0, 255));
  ASSERT_TRUE(QFile::remove(photo));
  ASSERT_TRUE(magenta.save(photo));

  QProcessEnvironment env = environmentWithoutDisplay();
  env.insert(QStringLiteral("QT_QPA_PLATFORM"), QStringLiteral("offscreen"));
  env.remove(QStringLiteral("GPULAB_RESOURCES"));
  QTemporaryDir config;  // the GUI's remembered settings stay out of the user's
  env.insert(QStringLiteral("XDG_CONFIG_HOME"), config.path());
  const QString shot = QDir(config.path()).filePath(QStringLiteral("shot.png"));
  const ProgramRun run = runProgram(path(QStringLiteral("bin/gpulab")),
                                    {QStringLiteral("--screenshot"), shot, QStringLiteral("--tab"),
                                     QStringLiteral("Photo"), QStringLiteral("--size"), QStringLiteral("1000x700")},
                                    env);
  ASSERT_EQ(run.exitCode, 0) << run.describe();
  const QImage image = QImage(shot).convertToFormat(QImage::Format_RGB32);
  ASSERT_FALSE(image.isNull());
  qint64 magentaPixels = 0;
  for (int y = 0; y < image.height(); ++y)
    for (int x = 0; x < image.width(); ++x) magentaPixels += image.pixel(x, y) == qRgb(255, 0, 255);
  EXPECT_GT(magentaPixels, image.width() * image.height() / 10) << "the photo shown is not the installed one";
}

TEST_F(Install, DesktopEntryAndAppStreamDataAreValid) {
  const QString desktopFileValidate = QStringLiteral(GPULAB_DESKTOP_FILE_VALIDATE);
  const QString appstreamcli = QStringLiteral(GPULAB_APPSTREAMCLI);
  if (desktopFileValidate.isEmpty() || appstreamcli.isEmpty())
    GTEST_SKIP() << "desktop-file-validate (desktop-file-utils) or appstreamcli (appstream) was not found when "
                    "configuring; scripts/install-deps.sh installs both";
  ProgramRun run =
      runProgram(desktopFileValidate, {path(QStringLiteral("share/applications/org.gpulab.gpulab.desktop"))});
  EXPECT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_TRUE(run.out.isEmpty()) << "desktop-file-validate prints hints and warnings: " << run.describe();
  run = runProgram(appstreamcli, {QStringLiteral("validate"), QStringLiteral("--no-net"), QStringLiteral("--pedantic"),
                                  path(QStringLiteral("share/metainfo/org.gpulab.gpulab.metainfo.xml"))});
  EXPECT_EQ(run.exitCode, 0) << run.describe();
  EXPECT_FALSE(run.out.contains(QStringLiteral("P: "))) << "pedantic notes: " << run.describe();
}

}  // namespace
