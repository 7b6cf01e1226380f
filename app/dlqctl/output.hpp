// How dlqctl shows answers to people: aligned tables, "key: value" blocks, problems in words.
// Every piece of text that did not come from dlqctl itself passes through shown() on its way out
// (model/terminal_text.hpp). Scripts use --json instead, which prints the server's JSON unchanged.
#pragma once

#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <boost/json/value.hpp>

namespace dlq::ctl {

class Table {
 public:
  explicit Table(std::vector<std::string> headers) : headers_(std::move(headers)) {}
  void row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  bool empty() const { return rows_.empty(); }
  // Columns padded to their widest cell; the last column is not padded. With `columns` (the
  // terminal's width) text columns are cut with "…" to fit, the last one first; columns of
  // numbers and timestamps are never cut.
  void print(std::ostream& out, std::size_t columns = 0) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// Text for a terminal: controls, C1, bidi controls and invalid UTF-8 as visible escapes.
std::string shown(std::string_view text);
// A member as table text, shown(): strings, numbers, true/false, "-" for null or missing.
std::string cell(const boost::json::value& object, std::string_view key);
// A value as one line of JSON, shown() (JSON leaves DEL, C1 and bidi controls raw).
std::string json_shown(const boost::json::value& v);
// shown(text), cut to at most `max` characters ("…" marks a cut).
std::string shorten(std::string_view text, std::size_t max);
// "key: value" lines for every member of an object, keys padded to one width, all shown().
void print_fields(std::ostream& out, const boost::json::object& o);
// A problem answer (RFC 9457) in words: "409 invalid-state: only dead messages can be replayed",
// plus one line per invalid field of a 422; the server's words shown().
std::string describe_problem(int status, const std::string& body);
// Whether `body` is a problem as dlqd writes them: a JSON object with a string "type".
bool is_problem(const std::string& body);
// The member "code" of the 422 field error for `field`, if the problem has one.
std::string field_code(const std::string& body, std::string_view field);

}  // namespace dlq::ctl
