// RFC 9457 problem details, the one place where outcomes become HTTP statuses: every error
// answer of the server is built here, with the `error` member FT72 clients read.
#pragma once

#include <string>
#include <string_view>

#include "http/request.hpp"
#include "model/error.hpp"

namespace dlq::http {

struct ProblemContext {
  const std::string& base;      // config problem_base
  const std::string& instance;  // the request path as received
};

Response problem(const ProblemContext& ctx, int status, std::string_view slug,
                 std::string_view title, std::string_view detail, std::string_view error);
// An expected outcome (not found, wrong state, lease lost, validation...) as its problem.
Response problem_from_error(const ProblemContext& ctx, const Error& e);
// The status problem_from_error answers for `code`. Also the status of each item of an
// acknowledgement list (/ack results, a claim's "acked"), which is answered inside a 200: an
// HTTP status, so it is mapped here and not in the core, which knows no HTTP.
int status_for(Errc code);
Response validation_problem(const ProblemContext& ctx, const FieldErrors& errors);

}  // namespace dlq::http
