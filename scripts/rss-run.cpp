// rss-run CMD ARGS...: runs CMD, then prints its wall time, CPU time and peak resident memory (wait4's
// ru_maxrss): /usr/bin/time -v for machines without it.  g++ -O2 -o .bench/rss-run scripts/rss-run.cpp
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
int main(int argc, char** argv) {
  if (argc < 2) return 2;
  const auto t0 = std::chrono::steady_clock::now();
  const pid_t pid = fork();
  if (pid == 0) {
    execvp(argv[1], argv + 1);
    _exit(127);
  }
  int status = 0;
  rusage ru{};
  wait4(pid, &status, 0, &ru);
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  std::fprintf(stderr, "rss-run: wall %.3f s, user %.2f s, sys %.2f s, max RSS %ld MiB, exit %d\n", s,
               ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6, ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6,
               ru.ru_maxrss / 1024, WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
