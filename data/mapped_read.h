#pragma once

#include <functional>

namespace crossbow::data {

// Runs `read`, which touches the pages of a memory-mapped file, and returns false instead of
// letting the process die of SIGBUS when a page is no longer backed by the file (another
// process truncated it while it was mapped). `read` must leave nothing half done when it is cut
// short at any memory access: plain lookups and copies, no allocation, locks or destructors in
// flight (LMDB's read-only lookups qualify). Other SIGBUS faults keep their default effect.
bool ReadMappedPages(const std::function<void()>& read);

}  // namespace crossbow::data
