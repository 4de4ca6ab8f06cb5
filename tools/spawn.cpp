// tools: starting a child run (spawn.h).
#include "tools/spawn.h"

#include <fcntl.h>
#include <spawn.h>

#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace ernic {

pid_t spawn_child(const std::vector<std::string>& args, const std::string& out_file, std::string* err) {
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  posix_spawn_file_actions_addclose(&fa, 0);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  std::vector<char*> argv;
  for (const auto& a : args) argv.push_back(const_cast<char*>(a.c_str()));
  argv.push_back(nullptr);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0].c_str(), &fa, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&fa);
  if (rc != 0) {
    *err = fmt::format("cannot start {}: {}", args[0], std::strerror(rc));
    return -1;
  }
  return pid;
}

}  // namespace ernic
