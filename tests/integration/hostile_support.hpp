// What the hostile-client tests (issue 16) share: a raw TCP client that can send and read at the
// same time, the server's memory as /proc reports it, and a health check.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <string_view>

namespace dlq::test {

// Under ASan the allocator keeps freed memory in quarantine and adds shadow memory, so resident
// memory says little about what the server holds: memory assertions are skipped there.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// VmRSS / VmHWM (peak resident) of a process, in MiB.
long resident_mib(pid_t pid);
long peak_resident_mib(pid_t pid);

bool healthy(unsigned short port);

// One raw connection to 127.0.0.1. Never throws on a closed or reset connection: the tests want
// to see what a client sees.
class RawConnection {
 public:
  explicit RawConnection(unsigned short port, int receive_buffer = 0);
  ~RawConnection();
  RawConnection(const RawConnection&) = delete;
  RawConnection& operator=(const RawConnection&) = delete;

  // Sends everything unless the connection fails; false when it did.
  bool send(std::string_view bytes);
  // Sends `filler` over and over, up to `limit` bytes, reading whatever the server answers
  // meanwhile; stops when the server answered or closed. Returns the bytes sent.
  std::size_t flood(std::string_view filler, std::size_t limit);
  // Reads until the server closes or nothing arrives for `quiet_ms`; appends to received().
  void read(int quiet_ms = 3000);
  const std::string& received() const { return received_; }
  // The server closed the connection (orderly or by a reset).
  bool closed() const { return closed_; }
  void close();

 private:
  bool read_available();
  int fd_ = -1;
  bool closed_ = false;
  std::string received_;
};

// The status line of the first answer in `bytes` ("HTTP/1.1 400 Bad Request"), or "".
std::string status_line(const std::string& bytes);
// The `type` slug of the first answer's problem body ("bad-request"), or "".
std::string problem_slug(const std::string& bytes);
// The `instance` of the first answer's problem body.
std::string problem_instance(const std::string& bytes);

}  // namespace dlq::test
