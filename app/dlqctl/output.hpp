// How dlqctl shows answers to people: aligned tables, "key: value" blocks, problems in words.
// Scripts use --json instead, which prints the server's JSON unchanged.
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
  // Columns padded to their widest cell; the last column is not padded.
  void print(std::ostream& out) const;

 private:
  std::vector<std::string> headers_;
  std::vector<std::vector<std::string>> rows_;
};

// A member as table text: strings as they are, numbers, true/false, "-" for null or missing.
std::string cell(const boost::json::value& object, std::string_view key);
// At most `max` characters on one line (newlines and tabs become spaces; "…" marks a cut).
std::string shorten(std::string text, std::size_t max);
// "key: value" lines for every member of an object, keys padded to one width.
void print_fields(std::ostream& out, const boost::json::object& o);
// A problem answer (RFC 9457) in words: "409 invalid-state: only dead messages can be replayed",
// plus one line per invalid field of a 422.
std::string describe_problem(int status, const std::string& body);

}  // namespace dlq::ctl
