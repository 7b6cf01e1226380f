// Parses database URLs; PostgreSQL URLs become libpq keyword/value strings (SOCI does not take
// libpq URIs), with a connect timeout so an unreachable database cannot hang a request.
#include "config/database_url.hpp"

#include <string_view>

#include "config/config.hpp"
#include "model/percent.hpp"

namespace dlq {
namespace {

std::string decode(std::string_view s) {
  auto decoded = percent_decode(s);
  if (!decoded) throw ConfigError("database URL has a malformed percent escape");
  return *decoded;
}

// libpq keyword values are quoted when they hold spaces, quotes or backslashes.
std::string conninfo_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

}  // namespace

DatabaseTarget parse_database_url(const std::string& url, int connect_timeout_seconds) {
  std::string_view u = url;
  if (u.starts_with("sqlite:")) {
    std::string_view path = u.substr(7);
    if (path.starts_with("//")) path.remove_prefix(2);  // sqlite://path is accepted too
    if (path.empty()) throw ConfigError("sqlite URL needs a file path, e.g. sqlite:data/dlq.db");
    return {DatabaseTarget::Backend::sqlite, std::string(path), {}};
  }
  std::string_view rest;
  if (u.starts_with("postgresql://")) {
    rest = u.substr(13);
  } else if (u.starts_with("postgres://")) {
    rest = u.substr(11);
  } else {
    throw ConfigError("database URL must start with sqlite: or postgresql://");
  }
  std::string params;
  if (auto q = rest.find('?'); q != std::string_view::npos) {
    std::string_view query = rest.substr(q + 1);
    rest = rest.substr(0, q);
    while (!query.empty()) {
      auto amp = query.find('&');
      std::string_view pair = query.substr(0, amp);
      query = amp == std::string_view::npos ? std::string_view{} : query.substr(amp + 1);
      auto eq = pair.find('=');
      if (eq == std::string_view::npos || eq == 0) {
        throw ConfigError("database URL has a malformed query parameter");
      }
      params += ' ';
      params += decode(pair.substr(0, eq));
      params += '=';
      params += conninfo_value(decode(pair.substr(eq + 1)));
    }
  }
  std::string_view authority = rest;
  std::string dbname;
  if (auto slash = rest.find('/'); slash != std::string_view::npos) {
    authority = rest.substr(0, slash);
    dbname = decode(rest.substr(slash + 1));
  }
  std::string user, password;
  if (auto at = authority.rfind('@'); at != std::string_view::npos) {
    std::string_view userinfo = authority.substr(0, at);
    authority = authority.substr(at + 1);
    if (auto colon = userinfo.find(':'); colon != std::string_view::npos) {
      user = decode(userinfo.substr(0, colon));
      password = decode(userinfo.substr(colon + 1));
    } else {
      user = decode(userinfo);
    }
  }
  std::string host, port;
  if (authority.starts_with('[')) {  // [::1]:5432
    auto close = authority.find(']');
    if (close == std::string_view::npos) throw ConfigError("database URL has a malformed host");
    host = std::string(authority.substr(1, close - 1));
    std::string_view after = authority.substr(close + 1);
    if (after.starts_with(':')) port = std::string(after.substr(1));
  } else if (auto colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = std::string(authority.substr(0, colon));
    port = std::string(authority.substr(colon + 1));
  } else {
    host = std::string(authority);
  }
  for (char c : port) {
    if (c < '0' || c > '9') throw ConfigError("database URL has a non-numeric port");
  }
  DatabaseTarget t{DatabaseTarget::Backend::postgresql, {}, {}};
  std::string& ci = t.libpq_conninfo;
  auto add = [&ci](const char* key, const std::string& value) {
    if (value.empty()) return;
    if (!ci.empty()) ci += ' ';
    ci += key;
    ci += '=';
    ci += conninfo_value(value);
  };
  add("host", decode(host));
  add("port", port);
  add("dbname", dbname);
  add("user", user);
  add("password", password);
  ci += params;
  // A database that does not answer must not hang requests: the connect fails after a bound.
  if (params.find(" connect_timeout=") == std::string::npos) {
    ci += " connect_timeout='" + std::to_string(connect_timeout_seconds) + "'";
  }
  return t;
}

}  // namespace dlq
