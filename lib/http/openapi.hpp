// The OpenAPI 3.1 document of dlqd's HTTP API: docs/openapi.json, embedded at build time
// (cmake/EmbedText.cmake) and served at GET /openapi.json. tests/unit/openapi_test.cpp holds it
// to the route table; scripts/test.sh lints it and checks real answers against its schemas.
#pragma once

#include <string_view>

namespace dlq::http {

// The document's bytes, exactly as in the source tree.
std::string_view openapi_document();

}  // namespace dlq::http
