#pragma once
/// @file error.hpp
/// Two levels of checks: CARDIO_CHECK is always on and throws cardio::Error
/// with the streamed message plus source location; CARDIO_ASSERT is debug-only.
#include <sstream>
#include <stdexcept>
#include <string>

namespace cardio {

/// The one exception type of the project. what() is the user-facing message.
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& message) : std::runtime_error(message) {}
};

namespace detail {
[[noreturn]] void throw_check_failure(const char* condition, const std::string& message, const char* file, int line,
                                      const char* function);
}  // namespace detail

}  // namespace cardio

/// Always-on check; `msg` is a stream expression: CARDIO_CHECK(n > 0, "n = " << n).
#define CARDIO_CHECK(cond, msg)                                                                           \
  do {                                                                                                    \
    if (!(cond)) {                                                                                        \
      std::ostringstream cardio_check_os_;                                                                \
      cardio_check_os_ << msg;                                                                            \
      ::cardio::detail::throw_check_failure(#cond, cardio_check_os_.str(), __FILE__, __LINE__, __func__); \
    }                                                                                                     \
  } while (false)

/// Throw a user-facing error (bad input): the message alone, no source location.
#define CARDIO_FAIL(msg)                          \
  do {                                            \
    std::ostringstream cardio_fail_os_;           \
    cardio_fail_os_ << msg;                       \
    throw ::cardio::Error(cardio_fail_os_.str()); \
  } while (false)

#ifdef NDEBUG
#define CARDIO_ASSERT(cond, msg) ((void)0)
#else
#define CARDIO_ASSERT(cond, msg) CARDIO_CHECK(cond, msg)
#endif
