// model/scenario: the parser's entry: a YAML text (parse_scenario) or a
// scenario file (load_scenario) -> Scenario, through Parser (parse.h).
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

Scenario Parser::parse(const std::string& text) {
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    ctx_.fail(e.mark, "", "YAML syntax error: " + e.msg);
  }
  if (docs.empty()) ctx_.fail(YAML::Mark::null_mark(), "", "empty file: expected a scenario map");
  if (docs.size() > 1) ctx_.fail(docs[1].Mark(), "", "a scenario file holds exactly one YAML document");
  YAML::Mark top;  // 1:1
  const Field root = make_field(ctx_, docs[0], "", top);
  sc_.file = ctx_.file;
  parse_top(root);
  return std::move(sc_);
}

}  // namespace ernic::scenario_parse

namespace ernic {

Scenario parse_scenario(const std::string& yaml_text, const std::string& display_name) {
  return scenario_parse::Parser(display_name).parse(yaml_text);
}

Scenario load_scenario(const std::string& path) {
  // A scenario is a regular file of sensible size (not a device, a FIFO or
  // a directory): /dev/zero would otherwise be read forever.
  constexpr uintmax_t kMaxBytes = 16u << 20;
  std::error_code ec;
  const auto st = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(st) && !std::filesystem::is_regular_file(st))
    throw ScenarioError(path, 0, 0, "", "not a regular file");
  if (!ec && std::filesystem::is_regular_file(st) && std::filesystem::file_size(path, ec) > kMaxBytes)
    throw ScenarioError(path, 0, 0, "", "larger than 16 MiB: not a scenario file");
  std::ifstream in(path, std::ios::binary);
  if (!in) throw ScenarioError(path, 0, 0, "", std::string("cannot open file: ") + std::strerror(errno));
  std::ostringstream ss;
  ss << in.rdbuf();
  if (in.bad()) throw ScenarioError(path, 0, 0, "", "read error");
  return parse_scenario(ss.str(), path);
}

}  // namespace ernic
