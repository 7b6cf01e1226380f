// The checks of the sqs.* keys (issue 38) that config.cpp's key lists and load_config call: the
// shape of each value, the access keys against each other and against auth.tokens, the public
// URL a wildcard listen needs, and the secret files. Private to lib/config.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "config/config.hpp"

namespace dlq::config_detail {

// One value's shape, for the Parser's checks: what is wrong, or nullopt.
std::optional<std::string> check_sqs_public_url(const std::string& s);
std::optional<std::string> check_sqs_region(const std::string& s);
std::optional<std::string> check_sqs_account_id(const std::string& s);
std::optional<std::string> check_sqs_access_key_id(const std::string& s);

// sqs.public_url as it is kept: the one trailing "/" it may be written with, dropped.
void normalize_sqs_public_url(std::string& url);

// Access keys without roles, and names or key ids used twice (names across auth.tokens too).
void check_sqs_access_keys(const Config& c, std::vector<std::string>& errors);

// After the environment and the flags: a served front on a wildcard listen needs public_url.
void check_sqs_public_url_needed(const Config& c, std::vector<std::string>& errors);

// Reads each key's secret_file into its `secret`; names the key and the file of each one that
// cannot be read, is empty, or may be read by group or others (never the content).
void read_sqs_secrets(Config& c, std::vector<std::string>& errors);

}  // namespace dlq::config_detail
