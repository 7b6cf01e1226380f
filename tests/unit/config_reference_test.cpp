// docs/configuration.md against the code: its key table must list exactly the keys the parser
// accepts (config_keys(), from the same visit_* lists that parse and print), each with the type,
// default and override the code has, and an example value the parser accepts.
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include <boost/json.hpp>
#include <boost/test/unit_test.hpp>

#include "config/config.hpp"

namespace json = boost::json;

namespace {

struct Row {
  std::string type, default_value, example, overridden_by;
};

std::string trim(std::string s) {
  auto first = s.find_first_not_of(' ');
  if (first == std::string::npos) return "";
  return s.substr(first, s.find_last_not_of(' ') - first + 1);
}

// `a` -> a (a cell that is one code span); anything else as written.
std::string unquote(const std::string& cell) {
  if (cell.size() >= 2 && cell.front() == '`' && cell.back() == '`' &&
      cell.find('`', 1) == cell.size() - 1) {
    return cell.substr(1, cell.size() - 2);
  }
  return cell;
}

// The rows of the key table: | `key` | type | default | example | overridden by | meaning |.
std::map<std::string, Row> documented_keys() {
  std::ifstream in(std::string(DLQ_SOURCE_DIR) + "/docs/configuration.md");
  BOOST_TEST_REQUIRE(in.good(), "cannot read docs/configuration.md");
  std::map<std::string, Row> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("| `")) continue;
    std::vector<std::string> cells;
    std::string cell;
    std::istringstream split(line.substr(1));
    while (std::getline(split, cell, '|')) cells.push_back(trim(cell));
    BOOST_TEST_REQUIRE(cells.size() >= 6u, "a key row needs 6 columns: " << line);
    std::string key = unquote(cells[0]);
    BOOST_TEST(!rows.contains(key), key << " is listed twice");
    rows[key] = {cells[1], cells[2], unquote(cells[3]), cells[4]};
  }
  return rows;
}

// A config document with `key` set to `value` ("queues.<name>.x" -> queues.emails.x).
// Keys whose example needs another key set (a config error otherwise), with that key's example.
const std::map<std::string, std::pair<std::string, json::value>> kNeeds = {
    {"alerts.on_new_incident", {"webhook_url", json::value("https://hooks.example.com/dlq")}}};

std::string document_setting(const std::string& key, const json::value& value) {
  json::object root;
  json::object* at = &root;
  std::istringstream parts(key);
  std::string part;
  std::vector<std::string> path;
  while (std::getline(parts, part, '.')) path.push_back(part == "<name>" ? "emails" : part);
  for (std::size_t i = 0; i + 1 < path.size(); ++i) at = &(*at)[path[i]].emplace_object();
  (*at)[path.back()] = value;
  if (auto need = kNeeds.find(key); need != kNeeds.end()) (*at)[need->second.first] = need->second.second;
  return json::serialize(root);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(config_reference)

BOOST_AUTO_TEST_CASE(lists_every_key_of_the_code_and_no_other) {
  auto documented = documented_keys();
  auto keys = dlq::config_keys();
  BOOST_TEST(keys.size() > 40u);
  std::map<std::string, dlq::ConfigKey> in_code;
  for (const auto& k : keys) in_code[k.key] = k;
  for (const auto& [key, k] : in_code) {
    BOOST_TEST(documented.contains(key), "config key " << key << " is not in docs/configuration.md");
  }
  for (const auto& [key, row] : documented) {
    BOOST_TEST(in_code.contains(key),
               "docs/configuration.md lists " << key << ", which the config code does not know");
  }
}

BOOST_AUTO_TEST_CASE(types_defaults_and_overrides_match_the_code) {
  auto documented = documented_keys();
  for (const auto& k : dlq::config_keys()) {
    auto it = documented.find(k.key);
    if (it == documented.end()) continue;  // reported above
    const Row& row = it->second;
    BOOST_TEST(row.type == k.type, k.key << ": documented type " << row.type << ", code " << k.type);
    if (!k.default_json.empty()) {
      // Strings are written without their quotes, except the empty one.
      std::string expected = k.default_json;
      if (expected.size() > 2 && expected.front() == '"') expected = expected.substr(1, expected.size() - 2);
      BOOST_TEST(unquote(row.default_value) == expected,
                 k.key << ": documented default " << row.default_value << ", code " << expected);
    } else {
      BOOST_TEST(!row.default_value.empty(), k.key << ": say what applies when it is not set");
    }
    std::string by = row.overridden_by == "—" ? "" : row.overridden_by;
    for (auto& c : by) {
      if (c == '`') c = ' ';
    }
    std::string compact;
    for (char c : by) {
      if (c != ' ') compact += c;
    }
    std::string code;
    for (char c : k.overridden_by) {
      if (c != ' ') code += c;
    }
    BOOST_TEST(compact == code, k.key << ": documented override " << row.overridden_by
                                      << ", code " << k.overridden_by);
  }
}

// Every example is a JSON value the parser accepts for its key (list items: within their list).
BOOST_AUTO_TEST_CASE(every_example_is_accepted) {
  for (const auto& [key, row] : documented_keys()) {
    if (key.find("[]") != std::string::npos) continue;  // shown with the list's own example
    std::error_code ec;
    json::value example = json::parse(row.example, ec);
    BOOST_TEST_REQUIRE(!ec, key << ": the example " << row.example << " is not JSON");
    std::string doc = document_setting(key, example);
    try {
      (void)dlq::parse_config(doc);
    } catch (const dlq::ConfigError& e) {
      BOOST_ERROR(key << ": the example " << row.example << " is refused: " << e.what());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
