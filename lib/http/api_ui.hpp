// The admin UI routes' handlers: /ui (308 to /ui/), /ui/ (index.html) and /ui/{file}, public
// (http-api.md C, "Access"); the API calls the page makes carry the operator's token.
#pragma once

#include <string_view>

#include <boost/asio/awaitable.hpp>

#include "config/config.hpp"
#include "http/request.hpp"
#include "http/router.hpp"

namespace dlq::http {

class UiHandlers {
 public:
  using R = boost::asio::awaitable<Response>;

  explicit UiHandlers(const Config& config);

  R ui_redirect(const Request& req, const RouteMatch& m);
  R ui_index(const Request& req, const RouteMatch& m);
  R ui_asset(const Request& req, const RouteMatch& m);

 private:
  // One UI file (built in, or from ui.dir) with its type and the UI's headers; 404 when unknown.
  Response ui_file(const Request& req, std::string_view name) const;

  const Config& config_;  // ui.dir: serve the files from there instead of the built-in ones
};

}  // namespace dlq::http
