// Error helpers.
#include "model/error.hpp"

namespace dlq {

std::string describe(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& ex) {
    return ex.what();
  } catch (...) {
    return "unknown error";
  }
}

void throw_exception_from_error(const Error& e, const boost::source_location&) {
  // Reaching here means a caller read the value of a failed result: a bug, not an input problem.
  throw std::logic_error("value of a failed result taken: " + e.message);
}

}  // namespace dlq
