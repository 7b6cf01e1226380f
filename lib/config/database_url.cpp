// Parses database URLs; PostgreSQL URLs (through Boost.URL) become libpq keyword/value strings
// (SOCI does not take libpq URIs), with a connect timeout so an unreachable database cannot hang
// a request.
#include "config/database_url.hpp"

#include <iterator>
#include <string_view>

#include <boost/url/parse.hpp>
#include <boost/url/parse_query.hpp>
#include <boost/url/pct_string_view.hpp>

#include "config/config.hpp"

namespace dlq {
namespace {

namespace urls = boost::urls;

// libpq keyword values are quoted when they hold spaces, quotes or backslashes.
std::string conninfo_value(const std::string& v) {
  std::string out = "'";
  for (char c : v) {
    if (c == '\'' || c == '\\') out += '\\';
    out += c;
  }
  return out + "'";
}

// " key='value'" for each libpq parameter after '?'. A trailing '&' is allowed; an empty pair
// elsewhere, a key without '=' or an empty key is not.
std::string query_params(urls::pct_string_view query) {
  auto pairs = urls::parse_query(query);
  if (!pairs) throw ConfigError("database URL has a malformed query parameter");
  std::string params;
  for (auto it = pairs->begin(); it != pairs->end(); ++it) {
    auto param = *it;
    bool last = std::next(it) == pairs->end();
    if (last && param.key.empty() && !param.has_value) break;
    if (param.key.empty() || !param.has_value) {
      throw ConfigError("database URL has a malformed query parameter");
    }
    params += ' ';
    params += param.key.decode();
    params += '=';
    params += conninfo_value(param.value.decode());
  }
  return params;
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
  if (!u.starts_with("postgresql://") && !u.starts_with("postgres://")) {
    throw ConfigError("database URL must start with sqlite: or postgresql://");
  }
  // Named before the URL grammar refuses it less clearly: a bad escape is the common mistake in
  // a hand-encoded password. No message quotes the URL, which may hold the password.
  if (!urls::make_pct_string_view(u)) {
    throw ConfigError("database URL has a malformed percent escape");
  }
  auto parsed = urls::parse_uri(u);
  // Boost 1.81 reads "h:54x/db" as port 54 and path "x/db" (boostorg/url#636, fixed in 1.82):
  // after an authority the path must be empty or start with '/', so anything else is refused.
  if (!parsed || !(parsed->encoded_path().empty() || parsed->encoded_path().starts_with('/'))) {
    throw ConfigError("database URL is not postgresql://user:password@host:port/dbname with a "
                      "numeric port and other characters percent-encoded");
  }
  if (parsed->has_fragment()) throw ConfigError("database URL has a '#': percent-encode it as %23");
  // The path is empty or "/dbname", its first '/' a literal one.
  std::string dbname = parsed->path();
  if (!dbname.empty()) dbname.erase(0, 1);
  std::string params = query_params(parsed->encoded_query());

  DatabaseTarget t{DatabaseTarget::Backend::postgresql, {}, {}};
  std::string& ci = t.libpq_conninfo;
  auto add = [&ci](const char* key, const std::string& value) {
    if (value.empty()) return;
    if (!ci.empty()) ci += ' ';
    ci += key;
    ci += '=';
    ci += conninfo_value(value);
  };
  // A host name is decoded ("%2Fvar%2Frun%2Fpostgresql" is a socket directory); [::1] loses
  // its brackets.
  add("host", parsed->host_address());
  add("port", std::string(parsed->port()));
  add("dbname", dbname);
  add("user", parsed->user());
  add("password", parsed->password());
  ci += params;
  // A database that does not answer must not hang requests: the connect fails after a bound.
  if (params.find(" connect_timeout=") == std::string::npos) {
    ci += " connect_timeout='" + std::to_string(connect_timeout_seconds) + "'";
  }
  return t;
}

}  // namespace dlq
