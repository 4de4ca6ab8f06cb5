// model/scenario: the parser's entry: a YAML text (parse_scenario) or a
// scenario file (load_scenario) -> Scenario, through Parser (parse.h).
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <yaml-cpp/eventhandler.h>

#include "model/scenario/parse.h"

namespace ernic::scenario_parse {

namespace {

// Records where each document starts, and its root node; builds nothing.
// Also refuses what would make the node graph yaml-cpp builds loop or run
// deep: an alias inside the node its anchor names ("- &a {repeat: {steps:
// [*a]}}" builds a node that contains itself, and every walk over it
// recursed until the stack ran out: found by fuzzing, issue 20), and
// collections nested more than kMaxYamlDepth deep.
struct DocStarts : YAML::EventHandler {
  std::vector<YAML::Mark> starts, roots;
  std::vector<YAML::anchor_t> open;  // anchors of the collections being read (0: none)
  bool looped = false, too_deep = false;
  YAML::Mark where;  // the alias that loops, or the collection too deep
  void node(const YAML::Mark& m) {
    if (roots.size() < starts.size()) roots.push_back(m);
  }
  void start(const YAML::Mark& m, YAML::anchor_t a) {
    node(m);
    open.push_back(a);
    if (open.size() > kMaxYamlDepth && !too_deep && !looped) too_deep = true, where = m;
  }
  void OnDocumentStart(const YAML::Mark& m) override { starts.push_back(m); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t a) override {
    node(m);
    if (!looped && !too_deep && std::find(open.begin(), open.end(), a) != open.end()) looped = true, where = m;
  }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { node(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a,
                       YAML::EmitterStyle::value) override {
    start(m, a);
  }
  void OnSequenceEnd() override { open.pop_back(); }
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t a, YAML::EmitterStyle::value) override {
    start(m, a);
  }
  void OnMapEnd() override { open.pop_back(); }
};

// What a character at a stuck position is, for the message.
std::string token_text(const std::string& text, const YAML::Mark& m) {
  if (m.pos < 0 || size_t(m.pos) >= text.size()) return "this token";
  const char c = text[size_t(m.pos)];
  if (c == ',') return "',' (a separator of [ ] and { } lists, here outside one)";
  return fmt::format("'{}'", c);
}

}  // namespace

// Before yaml-cpp builds the documents, two inputs it mishandles:
// - a lone CR (classic Mac line ends): yaml-cpp does not break lines there,
//   so a file of CR-only lines read as one comment line, "empty file";
// - a token that cannot start a node where a document starts (a ',' outside
//   [ ] and { }: ",a", or "- a\n,b"): yaml-cpp 0.7's LoadAll neither consumes
//   nor rejects it and appends empty documents without end (a 3-byte file
//   allocated gigabytes; jbeder/yaml-cpp#1040, fixed upstream in #1319).
//   A first pass with an event handler that builds nothing stops at the
//   second document, or where a document starts at the same place as the
//   one before (nothing consumed).
void Parser::precheck(const std::string& text) {
  int line = 1;
  for (size_t i = 0, col = 1; i < text.size(); ++i, ++col) {
    if (text[i] == '\n') {
      ++line;
      col = 0;
    } else if (text[i] == '\r' && (i + 1 == text.size() || text[i + 1] != '\n')) {
      throw ScenarioError(ctx_.file, line, int(col), "",
                          "line ends with a lone carriage return (CR, classic Mac line ends), which YAML readers "
                          "here do not take as a line break: use LF or CR LF line ends");
    }
  }
  std::istringstream in(text);
  DocStarts h;
  try {
    YAML::Parser p(in);
    while (h.starts.size() < 3 && p.HandleNextDocument(h)) {
      const size_t n = h.starts.size();
      if (n >= 2 && h.starts[n - 1].pos == h.starts[n - 2].pos)
        ctx_.fail(h.starts[n - 1], "", "YAML syntax error: unexpected " + token_text(text, h.starts[n - 1]));
    }
  } catch (const YAML::Exception& e) {
    // yaml-cpp's own depth limit ("bad file") comes after ours.
    if (!h.looped && !h.too_deep) ctx_.fail(e.mark, "", "YAML syntax error: " + e.msg);
  }
  if (h.looped)
    ctx_.fail(h.where, "",
              "this alias is inside the node its anchor names: the node would contain itself (a loop): refused");
  if (h.too_deep)
    ctx_.fail(h.where, "", fmt::format("lists and maps nested more than {} deep: refused", kMaxYamlDepth));
  if (h.starts.size() > 1)
    ctx_.fail(h.roots.size() > 1 ? h.roots[1] : h.starts[1], "", "a scenario file holds exactly one YAML document");
}

Scenario Parser::parse(const std::string& text) {
  precheck(text);
  ctx_.max_nodes = max_yaml_nodes(text.size());
  max_steps_ = max_parsed_steps(text.size());
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::Exception& e) {
    ctx_.fail(e.mark, "", "YAML syntax error: " + e.msg);
  }
  // An empty file (or only comments): the map is missing at 1:1 (fuzzing,
  // issue 20: every error from text names a place).
  if (docs.empty()) ctx_.fail(YAML::Mark(), "", "empty file: expected a scenario map");
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
