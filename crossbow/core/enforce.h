#pragma once

#include <sstream>
#include <stdexcept>
#include <string>

namespace crossbow {

// Any failure that the caller can act on: bad input, missing blobs, a NaN loss.
// Python receives it as RuntimeError.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Wrong shapes, dtypes or argument values. Python receives it as ValueError.
class ValueError : public Error {
 public:
  using Error::Error;
};

// A device (or the host) ran out of memory. The autotuner backs off when adding a learner
// raises it.
class OutOfMemoryError : public Error {
 public:
  using Error::Error;
};

namespace detail {
template <typename... Args>
std::string Concat(const Args&... args) {
  std::ostringstream out;
  (out << ... << args);
  return out.str();
}
}  // namespace detail

}  // namespace crossbow

// CROSSBOW_ENFORCE(cond, "what was expected, what was found, where", ...) throws
// crossbow::Error with the message pieces concatenated.
#define CROSSBOW_ENFORCE(cond, ...)                                                \
  do {                                                                             \
    if (!(cond)) throw ::crossbow::Error(::crossbow::detail::Concat(__VA_ARGS__)); \
  } while (0)

#define CROSSBOW_ENFORCE_VALUE(cond, ...)                                               \
  do {                                                                                  \
    if (!(cond)) throw ::crossbow::ValueError(::crossbow::detail::Concat(__VA_ARGS__)); \
  } while (0)

#define CROSSBOW_FAIL(...) throw ::crossbow::Error(::crossbow::detail::Concat(__VA_ARGS__))
