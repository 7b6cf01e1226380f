// The rule that keeps this suite whole: every method of the Store interface is called by some
// test under tests/store. Read from the source tree: the methods declared in store.hpp, and the
// calls (`->name(` or `.name(`) in the test files, comments left out.
#include <boost/test/unit_test.hpp>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

namespace {

namespace fs = std::filesystem;

std::string read_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  BOOST_REQUIRE_MESSAGE(in, "cannot read " << path);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// The text without its comments; string and character literals are kept as they are, so that a
// "//" inside one does not end the line early.
std::string without_comments(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    char ch = text[i];
    if (ch == '"' || ch == '\'') {
      // A raw string R"(...)" holds no escapes and may hold quotes: copy it to its end.
      if (ch == '"' && i > 0 && text[i - 1] == 'R') {
        auto open = text.find('(', i);
        std::string close = ")" + text.substr(i + 1, open - i - 1) + "\"";
        auto end = text.find(close, open);
        end = end == std::string::npos ? text.size() : end + close.size();
        out.append(text, i, end - i);
        i = end - 1;
        continue;
      }
      out += ch;
      for (++i; i < text.size() && text[i] != ch; ++i) {
        if (text[i] == '\\' && i + 1 < text.size()) out += text[i++];
        out += text[i];
      }
      if (i < text.size()) out += text[i];
    } else if (text.compare(i, 2, "//") == 0) {
      i = text.find('\n', i);
      if (i == std::string::npos) break;
      out += '\n';
    } else if (text.compare(i, 2, "/*") == 0) {
      i = text.find("*/", i + 2);
      if (i == std::string::npos) break;
      ++i;
    } else {
      out += ch;
    }
  }
  return out;
}

// The pure virtual methods of `class Store` in store.hpp, by name.
std::set<std::string> store_methods(const std::string& header) {
  std::string text = without_comments(header);
  auto begin = text.find("class Store {");
  BOOST_REQUIRE_MESSAGE(begin != std::string::npos, "store.hpp declares no class Store");
  auto end = text.find("\n};", begin);
  std::string body = text.substr(begin, end - begin);
  std::set<std::string> names;
  // Each declaration runs from `virtual` to its `;`, over several lines where it must.
  static const std::regex declaration(R"(virtual\s([^;]*);)");
  static const std::regex name(R"(([A-Za-z_]\w*)\s*\()");
  for (std::sregex_iterator it(body.begin(), body.end(), declaration), last; it != last; ++it) {
    std::string decl = (*it)[1];
    if (!std::regex_search(decl, std::regex(R"(=\s*0\s*$)"))) continue;  // pure virtuals only
    std::smatch m;
    if (std::regex_search(decl, m, name)) names.insert(m[1]);
  }
  return names;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(store_coverage)

BOOST_AUTO_TEST_CASE(every_store_method_is_called_by_a_store_test) {
  const fs::path root = DLQ_SOURCE_DIR;
  auto methods = store_methods(read_file(root / "lib/store/store.hpp"));
  // The parse must see awaitables, plain and const methods, and the last one declared.
  for (const char* known : {"messages_insert", "subscribe_changes", "node_id", "write_stats", "close"}) {
    BOOST_REQUIRE_MESSAGE(methods.count(known) == 1, "store.hpp parse missed " << known);
  }
  BOOST_TEST_MESSAGE("Store declares " << methods.size() << " methods");

  std::string calls;
  const fs::path self = fs::path(__FILE__).filename();
  for (const auto& entry : fs::directory_iterator(root / "tests/store")) {
    if (entry.path().extension() != ".cpp" || entry.path().filename() == self) continue;
    calls += without_comments(read_file(entry.path()));
  }
  std::set<std::string> uncalled;
  for (const auto& method : methods) {
    if (calls.find("->" + method + "(") == std::string::npos &&
        calls.find("." + method + "(") == std::string::npos) {
      uncalled.insert(method);
    }
  }
  std::string list;
  for (const auto& method : uncalled) list += " " + method;
  BOOST_TEST(uncalled.empty(), "Store methods no test in tests/store calls:" << list);
}

BOOST_AUTO_TEST_SUITE_END()
