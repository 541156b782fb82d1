#include "cardio/core/error.hpp"

namespace cardio::detail {

void throw_check_failure(const char* condition, const std::string& message, const char* file, int line,
                         const char* function) {
  std::ostringstream os;
  os << message << " [check '" << condition << "' failed in " << function << " at " << file << ":" << line << "]";
  throw Error(os.str());
}

}  // namespace cardio::detail
