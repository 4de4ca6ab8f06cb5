// model/scenario: where something was written in a scenario file
// (SourceLoc) and the error that points there (ScenarioError); part of the
// scenario API (scenario.h includes it). Plain C++17.
#pragma once

#include <stdexcept>
#include <string>

namespace ernic {

// Where something was written: file (display name), 1-based line and column.
// line == 0 means "no position" (e.g. the file could not be read).
struct SourceLoc {
  std::string file;
  int line = 0;
  int column = 0;
  std::string str() const;  // "file:line:column" (or "file" without position)
};

// A scenario file error. what() is "FILE:LINE:COLUMN: key 'KEY': message";
// the "key '...': " part is left out when key() is empty (YAML syntax errors,
// unreadable files), and ":LINE:COLUMN" when line() is 0.
class ScenarioError : public std::runtime_error {
 public:
  ScenarioError(std::string file, int line, int column, std::string key, std::string message);
  const std::string& file() const { return file_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& key() const { return key_; }
  const std::string& message() const { return message_; }
  SourceLoc loc() const { return SourceLoc{file_, line_, column_}; }

 private:
  std::string file_;
  int line_;
  int column_;
  std::string key_;
  std::string message_;
};

}  // namespace ernic
