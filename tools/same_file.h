// tools: whether two output paths name the same file (the run's output
// checks: `run`, `run --split`).
#pragma once
#include <filesystem>
#include <string>

namespace ernic {

// Lexically (as written, normalised), or, when both exist, as the same
// inode (symlinks, hard links, ./x vs x); else the absolute paths with
// symlinks resolved as far as they exist.
inline bool same_file(const std::string& a, const std::string& b) {
  namespace fs = std::filesystem;
  if (fs::path(a).lexically_normal() == fs::path(b).lexically_normal()) return true;
  std::error_code ec;
  if (fs::equivalent(a, b, ec) && !ec) return true;
  ec.clear();
  const auto ca = fs::weakly_canonical(a, ec);
  if (ec) return false;
  const auto cb = fs::weakly_canonical(b, ec);
  return !ec && ca == cb;
}

}  // namespace ernic
