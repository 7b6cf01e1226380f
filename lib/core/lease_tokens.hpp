// The secret half of every lease_id: 128 bits from the kernel's CSPRNG as 32 hex digits. Each
// thread keeps its own pool of randomness (one getrandom call per 256 tokens), so a claim costs
// no system call and takes no lock.
#pragma once

#include <string>

namespace dlq::core {

std::string new_lease_token();

}  // namespace dlq::core
