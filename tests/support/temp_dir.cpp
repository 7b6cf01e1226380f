#include "support/temp_dir.hpp"

#include <atomic>
#include <fstream>
#include <random>
#include <sstream>
#include <stdexcept>

#include <cstdlib>

namespace dlq::test {

TempDir::TempDir() {
  std::string pattern = (std::filesystem::temp_directory_path() / "dlq-test-XXXXXX").string();
  if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
  path_ = pattern;
}

TempDir::~TempDir() {
  std::error_code ec;
  std::filesystem::remove_all(path_, ec);
}

std::string read_file(const std::string& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::string unique_name(const std::string& prefix) {
  static std::atomic<int> counter{0};
  static const unsigned salt = std::random_device{}() % 100000;
  return prefix + "_" + std::to_string(salt) + "_" + std::to_string(counter++);
}

}  // namespace dlq::test
