// A fresh directory under /tmp, removed with everything in it when the object goes away.
#pragma once

#include <filesystem>
#include <string>

namespace dlq::test {

class TempDir {
 public:
  TempDir();
  ~TempDir();
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

// A name unique in this run: prefix plus a counter and random digits.
std::string unique_name(const std::string& prefix);

}  // namespace dlq::test
