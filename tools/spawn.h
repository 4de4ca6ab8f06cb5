// tools: starting a child run (regress, experiment): the program and its
// arguments, stdout and stderr into out_file, stdin from /dev/null.
#pragma once
#include <sys/types.h>

#include <string>
#include <vector>

namespace ernic {

// The child's pid, or -1 with *err naming the program and the cause.
pid_t spawn_child(const std::vector<std::string>& args, const std::string& out_file, std::string* err);

}  // namespace ernic
